#include "check.hpp"

#include "cases.hpp"
#include "isolate.hpp"
#include "show.hpp"

#include <conformance.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace ferro::inspect {
namespace {

nlohmann::json empty_row(const nlohmann::json& key) {
    nlohmann::json row = key;
    row.update(
        {{"status", "pass"}, {"max_error", 0.0}, {"examples", 0}, {"gradcheck", false}, {"messages", nlohmann::json::array()}});
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

// A row from a conformance outcome.
nlohmann::json row_of(const nlohmann::json& key, const conformance::OpCheck& c) {
    nlohmann::json row = empty_row(key);
    row.update({{"status", c.status},
                {"max_error", c.max_error},
                {"examples", c.examples},
                {"gradcheck", c.gradchecked},
                {"messages", c.messages}});
    return row;
}

// The engine suite on `engine`, one row per part (op "core: <part>", dtype "all").
nlohmann::json engine_suite_row(const Runtime& rt, const nlohmann::json& key, const conformance::SuitePart& part) {
    Row row{empty_row(key)};
    conformance::Report report(rt, key["engine"].get<std::string>());
    try {
        part.run(rt, report);
    } catch (const Error& e) {
        row.fail(fmt::format("{}: {}", e.code_name(), e.what()));
    }
    row.json["examples"] = report.checks();
    row.json["max_error"] = report.max_error();
    row.json["gradcheck"] = std::string(part.name) == "gradients" && report.checks() > 0;
    for (const auto& f : report.findings()) row.fail(fmt::format("{}: {}", f.what, f.why));
    if (report.checks() == 0 && row.json["status"] == "pass") {
        row.json["status"] = "not checked";
        row.json["messages"].push_back("the engine reports none of the dtypes this part runs in");
    }
    return row.json;
}

}  // namespace

void run_check(Runtime& rt, const std::string& plugin, const CheckOptions& o, size_t from) {
    const Inventory inv = rt.inventory();
    CaseStream cases(from);
    // An engine plugin: the engine suite on each of its engines.
    for (const EngineInfo& engine : inv.engines) {
        if (engine.plugin != plugin || (!o.engine.empty() && engine.name != o.engine)) continue;
        for (const conformance::SuitePart& part : conformance::engine_suite()) {
            const nlohmann::json key = {{"op", std::string("core: ") + part.name}, {"dtype", "all"}, {"engine", engine.name}};
            cases.run(key, [&] { return engine_suite_row(rt, key, part); });
        }
    }
    // A family plugin: its ops' examples on every engine with a module for the family.
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
                for (const ModuleInfo& m : inv.modules)
                    module = module || (m.family == op.family && m.engine == engine.name && m.available);
                if (!module) continue;
                if (!engine.dtypes.empty() && std::find(engine.dtypes.begin(), engine.dtypes.end(), dtype) == engine.dtypes.end())
                    continue;
                const nlohmann::json key = {{"op", op.name}, {"dtype", dtype_name(dtype)}, {"engine", engine.name}};
                cases.run(key, [&] { return row_of(key, conformance::check_op_examples(rt, op, dtype, engine.name, o.quick)); });
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
    if (r["plugin"].is_object())
        t += fmt::format("{}: {}\n", r["file"].get<std::string>(), r["plugin"]["reason"].get<std::string>());
    for (const auto& row : r["results"]) {
        const std::string status = row["status"];
        // An engine-suite row counts its comparisons; an op's row, the examples it ran.
        const std::string op = row["op"];
        const char* unit = op.rfind("core: ", 0) == 0 ? "comparison" : "example";
        t += fmt::format("{:<11} {:<32} {:<5} {:<9} {} {}{}{}, max error {:.2g}\n",
                         status == "pass"   ? "PASS"
                         : status == "fail" ? "FAIL"
                                            : "NOT CHECKED",
                         op, row["dtype"].get<std::string>(), row["engine"].get<std::string>(), row["examples"].get<int>(), unit,
                         row["examples"].get<int>() == 1 ? "" : "s", row["gradcheck"].get<bool>() ? ", gradcheck" : "",
                         row["max_error"].get<double>());
        for (const auto& m : row["messages"]) {  // indented, every line of it
            std::string text = m.get<std::string>();
            while (!text.empty() && text.back() == '\n') text.pop_back();
            for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1))
                text.insert(at + 1, "      ");
            t += fmt::format("      {}\n", text);
        }
    }
    const auto& s = r["summary"];
    t += fmt::format("{} pass, {} fail, {} not checked\n", s["pass"].get<int>(), s["fail"].get<int>(),
                     s["not_checked"].get<int>());
    return t;
}

}  // namespace ferro::inspect
