#include "check.hpp"

#include "cases.hpp"
#include "isolate.hpp"
#include "show.hpp"

#include <ferro/gradcheck.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace ferro::inspect {
namespace {

bool inexact(DType d) { return d == DType::f32 || d == DType::f64 || d == DType::c64 || d == DType::c128; }
bool single(DType d) { return d == DType::f32 || d == DType::c64; }

// Largest |a - b| / max(1, |b|) over two results (shapes and dtypes must agree).
double difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b, std::string& why) {
    if (a.size() != b.size()) {
        why = fmt::format("{} outputs against {}", a.size(), b.size());
        return INFINITY;
    }
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype()) {
            why = fmt::format("output {}: shape or dtype differs from the cpu engine's", i);
            return INFINITY;
        }
        if (!inexact(a[i].dtype())) {
            if (a[i].to_vector<int64_t>() != b[i].to_vector<int64_t>()) {
                why = fmt::format("output {} differs", i);
                return INFINITY;
            }
            continue;
        }
        const auto va = ferro::detail::values_of(a[i]), vb = ferro::detail::values_of(b[i]);
        double scale = 1, diff = 0;
        for (size_t k = 0; k < va.size(); ++k) {
            scale = std::max(scale, std::abs(vb[k]));
            const double d = std::abs(va[k] - vb[k]);
            diff = std::max(diff, std::isnan(d) && std::isnan(std::abs(vb[k])) ? 0.0 : (std::isnan(d) ? INFINITY : d));
        }
        worst = std::max(worst, diff / scale);
    }
    return worst;
}

std::vector<Tensor> call(const Runtime& rt, const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
    return call_all(rt.ref(), op.c_str(), inputs, attrs);
}

nlohmann::json empty_row(const nlohmann::json& key) {
    nlohmann::json row = key;
    row.update({{"status", "pass"}, {"max_error", 0.0}, {"examples", 0}, {"gradcheck", false},
                {"messages", nlohmann::json::array()}});
    return row;
}

// The row of a case whose child died running it.
nlohmann::json killed_row(const nlohmann::json& the_case, const ProbeOutcome& outcome) {
    nlohmann::json row = empty_row(the_case);
    row["status"] = "fail";
    row["messages"].push_back(outcome.failure());
    return row;
}

struct Row {
    nlohmann::json json;
    void fail(const std::string& why) {
        json["status"] = "fail";
        json["messages"].push_back(why);
    }
};

}  // namespace

void run_check(Runtime& rt, const std::string& plugin, const CheckOptions& o, size_t from) {
    const Inventory inv = rt.inventory();
    CaseStream cases(from);
    std::vector<std::string> families;
    for (const FamilyInfo& f : inv.families) {
        if (f.plugin == plugin) families.push_back(f.id);
    }
    for (const OpInfo& op : inv.ops) {
        if (std::find(families.begin(), families.end(), op.family) == families.end()) continue;
        std::vector<DType> dtypes = op.dtypes.empty() ? std::vector<DType>{DType::f64} : op.dtypes;
        for (DType dtype : dtypes) {
            for (const EngineInfo& engine : inv.engines) {
                if (!o.engine.empty() && engine.name != o.engine) continue;
                bool module = false;
                for (const ModuleInfo& m : inv.modules) module = module || (m.family == op.family && m.engine == engine.name && m.available);
                if (!module) continue;
                if (!engine.dtypes.empty() && std::find(engine.dtypes.begin(), engine.dtypes.end(), dtype) == engine.dtypes.end()) continue;
                const nlohmann::json key = {{"op", op.name}, {"dtype", dtype_name(dtype)}, {"engine", engine.name}};
                cases.run(key, [&] {
                Row row{empty_row(key)};
                try {
                    auto examples = rt.op_examples(op.name, dtype, engine.name);
                    if (examples.empty()) {
                        row.json["status"] = "not checked";
                        row.json["messages"].push_back("the family's modules provide no examples for this op and dtype");
                        return row.json;
                    }
                    if (o.quick) examples.resize(1);
                    const auto on_cpu = engine.name == "cpu" ? examples : rt.op_examples(op.name, dtype, "cpu");
                    row.json["examples"] = examples.size();
                    double worst = 0;
                    for (size_t e = 0; e < examples.size(); ++e) {
                        const auto& ex = examples[e];
                        const std::vector<Tensor> out = call(rt, op.name, ex.inputs, ex.attrs);
                        std::string why;
                        // On cpu: the same call again gives the same result; elsewhere: the cpu's result.
                        const std::vector<Tensor> ref = engine.name == "cpu" ? call(rt, op.name, ex.inputs, ex.attrs)
                                                                             : call(rt, op.name, on_cpu[e].inputs, on_cpu[e].attrs);
                        std::vector<Tensor> here;
                        for (const Tensor& t : out) here.push_back(t.to("cpu"));
                        const double err = difference(here, ref, why);
                        const double tol = engine.name == "cpu" ? 0.0 : single(dtype) ? 1e-4 : 1e-10;
                        worst = std::max(worst, err);
                        if (!(err <= tol)) {
                            row.fail(fmt::format("example '{}': {} {:.3g} {}", ex.what,
                                                 engine.name == "cpu" ? "a second run differs by" : "differs from the cpu engine by",
                                                 err, why));
                        }
                        const bool grad_dtype = dtype == DType::f64 || (dtype == DType::c128 && !o.quick);
                        if (!grad_dtype || !op.has_vjp || engine.name != "cpu") continue;
                        // gradcheck with respect to the differentiable inexact inputs, of the
                        // differentiable inexact outputs; the other inputs are held fixed.
                        std::vector<size_t> wrt;
                        for (size_t i = 0; i < ex.inputs.size(); ++i) {
                            const bool diff = op.n_inputs < 0 ? op.diff_inputs != 0 : ((op.diff_inputs >> std::min<size_t>(i, 63)) & 1u) != 0;
                            if (diff && inexact(ex.inputs[i].dtype())) wrt.push_back(i);
                        }
                        if (wrt.empty()) continue;
                        const auto f = [&](const std::vector<Tensor>& x) {
                            std::vector<Tensor> in = ex.inputs;
                            for (size_t k = 0; k < wrt.size(); ++k) {
                                // A triangle-reading input: perturbed over Hermitian matrices.
                                const bool hermitian = (ex.input_flags[wrt[k]] & FERRO_EXAMPLE_HERMITIAN) != 0;
                                in[wrt[k]] = hermitian ? (x[k] + x[k].mT().conj()) * 0.5 : x[k];
                            }
                            std::vector<Tensor> outs = call(rt, op.name, in, ex.attrs), kept;
                            for (size_t k = 0; k < outs.size(); ++k) {
                                if (((op.diff_outputs >> std::min<size_t>(k, 63)) & 1u) != 0 && inexact(outs[k].dtype())) kept.push_back(outs[k]);
                            }
                            return kept;
                        };
                        std::vector<Tensor> x;
                        for (size_t i : wrt) x.push_back(ex.inputs[i]);
                        GradcheckOptions go;
                        go.check_jvp = op.has_jvp;
                        try {
                            const GradcheckResult g = gradcheck(f, x, go);
                            row.json["gradcheck"] = true;
                            if (!g.ok) row.fail(fmt::format("example '{}': gradcheck: {}", ex.what, g.report));
                        } catch (const Error& refused) {
                            if (refused.code() != FERRO_NOT_DIFFERENTIABLE) throw;
                            // The rule refuses a loss it cannot differentiate (complex gauge): not a defect.
                            row.json["messages"].push_back(fmt::format("example '{}': gradcheck not run: {}", ex.what, refused.what()));
                        }
                    }
                    row.json["max_error"] = worst;
                } catch (const Error& e) {
                    row.json["status"] = "fail";
                    row.json["messages"].push_back(fmt::format("{}: {}", e.code_name(), e.what()));
                }
                return row.json;
                });
            }
        }
    }
}

nlohmann::json check(const ListOptions& list, const std::string& target, const CheckOptions& o) {
    // One listing serves both: the target's entry and the other plugins that come along.
    const nlohmann::json listed = list_plugins(list);
    nlohmann::json plugin;
    std::error_code ec;
    if (const nlohmann::json* entry = find_plugin(listed, target)) {
        plugin = *entry;
    } else if (std::filesystem::is_regular_file(target, ec)) {
        plugin = probe_file(list, std::filesystem::absolute(target));  // outside the search path
    } else {
        throw NotFound(not_found_message(target));
    }
    nlohmann::json r = {{"command", "check"}, {"schema", 1}, {"file", plugin["file"]}};
    if (plugin["status"] != "loaded") {
        r["plugin"] = plugin;
        r["summary"] = {{"pass", 0}, {"fail", 1}, {"not_checked", 0}};
        r["results"] = nlohmann::json::array();
        return r;
    }
    r["plugin"] = plugin["name"];
    // Every plugin that loads on its own comes along: engines from other plugins are checked too.
    std::vector<std::string> files{plugin["file"].get<std::string>()};
    for (const auto& p : listed["plugins"]) {
        if (p["status"] == "loaded" && p["file"] != plugin["file"]) files.push_back(p["file"]);
    }
    std::vector<std::string> flags{"--check", plugin["name"].get<std::string>()};
    if (!o.engine.empty()) flags.insert(flags.end(), {"--only-engine", o.engine});
    if (o.quick) flags.push_back("--quick");
    r["results"] = nlohmann::json::array();
    try {
        // Examples on a GPU compile kernels: more than the time a plugin may take to load.
        for (nlohmann::json& row : run_cases(list.self, files, std::max(list.timeout_s, 900.0), flags, killed_row)) {
            r["results"].push_back(std::move(row));
        }
    } catch (const std::runtime_error& e) {
        r["error"] = e.what();
    }
    int pass = 0, fail = r.contains("error") ? 1 : 0, unchecked = 0;
    for (const auto& row : r["results"]) {
        const std::string s = row["status"];
        (s == "pass" ? pass : s == "fail" ? fail : unchecked)++;
    }
    r["summary"] = {{"pass", pass}, {"fail", fail}, {"not_checked", unchecked}};
    return r;
}

std::string render_check(const nlohmann::json& r) {
    std::string t;
    if (r.contains("error")) t += fmt::format("{}\n", r["error"].get<std::string>());
    if (r["plugin"].is_object()) t += fmt::format("{}: {}\n", r["file"].get<std::string>(), r["plugin"]["reason"].get<std::string>());
    for (const auto& row : r["results"]) {
        const std::string status = row["status"];
        t += fmt::format("{:<11} {:<32} {:<5} {:<9} {} example{}{}, max error {:.2g}\n",
                         status == "pass" ? "PASS" : status == "fail" ? "FAIL" : "NOT CHECKED", row["op"].get<std::string>(),
                         row["dtype"].get<std::string>(), row["engine"].get<std::string>(), row["examples"].get<int>(),
                         row["examples"].get<int>() == 1 ? "" : "s", row["gradcheck"].get<bool>() ? ", gradcheck" : "",
                         row["max_error"].get<double>());
        for (const auto& m : row["messages"]) {  // indented, every line of it
            std::string text = m.get<std::string>();
            while (!text.empty() && text.back() == '\n') text.pop_back();
            for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) text.insert(at + 1, "      ");
            t += fmt::format("      {}\n", text);
        }
    }
    const auto& s = r["summary"];
    t += fmt::format("{} pass, {} fail, {} not checked\n", s["pass"].get<int>(), s["fail"].get<int>(), s["not_checked"].get<int>());
    return t;
}

}  // namespace ferro::inspect
