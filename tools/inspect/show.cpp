#include "show.hpp"

#include "isolate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace ferro::inspect {

std::string not_found_message(const std::string& target) {
    return fmt::format("no plugin named '{}' in the search path, and no such file (ferro-inspect list shows what is there)",
                       target);
}

namespace {

std::string join(const nlohmann::json& items, const char* sep = " ") {
    std::string out;
    for (const auto& i : items) {
        if (!out.empty()) out += sep;
        out += i.is_string() ? i.get<std::string>() : i.dump();
    }
    return out;
}

// A file path, or the file of the plugin named `target` in the search path.
std::string resolve(const ListOptions& o, const std::string& target) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(target, ec)) return std::filesystem::absolute(target).string();
    const nlohmann::json list = list_plugins(o);
    if (const nlohmann::json* p = find_plugin(list, target)) return (*p)["file"];
    throw NotFound(not_found_message(target));
}

}  // namespace

nlohmann::json show(const ListOptions& o, const std::string& target) {
    const std::string file = resolve(o, target);
    const ProbeOutcome outcome = probe_isolated(o.self, {file}, o.timeout_s, {"--detail"});
    nlohmann::json r = {{"command", "show"}, {"schema", 1}};
    r["plugin"] = outcome.finished ? outcome.result["plugins"][0] : outcome.failed_entry(file);
    return r;
}

std::string render_show(const nlohmann::json& r) {
    const auto& p = r["plugin"];
    std::string t = fmt::format("{}\n", p["file"].get<std::string>());
    if (p["status"] != "loaded") {
        const std::string stage = p.value("stage", "");
        return t + fmt::format("  {}{}\n", p.contains("crash") || stage.empty() ? "" : fmt::format("failed at stage {}: ", stage),
                               p["reason"].get<std::string>());
    }
    t += fmt::format("  plugin {} {} (ABI {}): {}\n", p["name"].get<std::string>(), p["version"].get<std::string>(),
                     p["abi"].get<std::string>(), p["description"].get<std::string>());
    for (const auto& m : p.value("module_families", nlohmann::json::array())) {
        t += fmt::format("  modules for family {} (defined by another plugin)\n", m.get<std::string>());
    }
    for (const auto& f : p["families"]) {
        t += fmt::format("  family {} ({} ops)\n", f["name"].get<std::string>(), f["ops"].get<int>());
        for (const auto& m : f["modules"]) {
            t += fmt::format("    module on {}: {}\n", m["engine"].get<std::string>(),
                             m["available"].get<bool>() ? "yes" : fmt::format("declined: {}", m["reason"].get<std::string>()));
        }
        for (const auto& op : f["op_details"]) {
            const int in = op["inputs"], out = op["outputs"];
            t += fmt::format("    {} ({} -> {}): {}\n", op["name"].get<std::string>(),
                             in < 0 ? fmt::format("{}+ inputs", op["min_inputs"].get<int>())
                                    : fmt::format("{} input{}", in, in == 1 ? "" : "s"),
                             out < 0 ? "variadic outputs" : fmt::format("{} output{}", out, out == 1 ? "" : "s"),
                             op["doc"].get<std::string>());
            t += fmt::format("      dtypes {}; differentiable inputs [{}], outputs [{}]; vjp {}, jvp {}\n", join(op["dtypes"]),
                             op["differentiable_inputs"].is_string() ? "all" : join(op["differentiable_inputs"], ", "),
                             join(op["differentiable_outputs"], ", "), op["vjp"].get<bool>() ? "yes" : "no",
                             op["jvp"].get<bool>() ? "yes" : "no");
            for (const auto& v : op["views"]) {
                t += fmt::format("      output {} is a view of input {}{}\n", v["output"].get<int>(), v["input"].get<int>(),
                                 v["may_copy"].get<bool>() ? " when its layout allows, else a copy" : "");
            }
            for (const auto& a : op["attrs"]) {
                const std::string def =
                    a["required"].get<bool>() ? "required" : fmt::format("= {}", a["default"].get<std::string>());
                t += fmt::format("      {}: {} {} — {}\n", a["name"].get<std::string>(), a["type"].get<std::string>(), def,
                                 a["doc"].get<std::string>());
            }
        }
    }
    for (const auto& e : p["engines"]) {
        const int n = e["devices"];
        t += fmt::format("  engine {}: {} device{}{}\n", e["kind"].get<std::string>(), n, n == 1 ? "" : "s",
                         n == 0 ? fmt::format(" — {}", e["reason"].get<std::string>()) : "");
        for (const auto& d : e.value("device_details", nlohmann::json::array())) {
            t += fmt::format("    {}: {}, {} MiB, score {}, dtypes {}{}\n", d["name"].get<std::string>(),
                             d["device"].get<std::string>(), d["memory_bytes"].get<uint64_t>() >> 20, d["score"].get<int>(),
                             join(d["dtypes"]),
                             d["details"].get<std::string>().empty() ? "" : fmt::format("; {}", d["details"].get<std::string>()));
        }
    }
    return t;
}

nlohmann::json ops(const ListOptions& o, const std::string& engine, const std::string& family) {
    const nlohmann::json list = list_plugins(o);
    std::vector<std::string> files;
    for (const auto& p : list["plugins"]) {
        if (p["status"] == "loaded") files.push_back(p["file"]);
    }
    nlohmann::json r = {{"command", "ops"}, {"schema", 1}, {"ops", nlohmann::json::array()}};
    // The plugins that load on their own, together: a family on another plugin's engine. The
    // child calls every op on every engine (a GPU library compiles kernels for each), so like
    // check it gets more than the time a plugin may take to load; an op that kills it is that
    // op's cell, and the rest of the matrix runs in a new child.
    std::vector<std::string> flags{"--matrix"};
    if (!family.empty()) flags.insert(flags.end(), {"--matrix-family", family});
    if (!engine.empty()) flags.insert(flags.end(), {"--only-engine", engine});
    const auto killed = [](const nlohmann::json& the_case, const ProbeOutcome& outcome) {
        return nlohmann::json{{"op", the_case["op"]},
                              {"engine", the_case["engine"]},
                              {"cell",
                               {{"dtype", the_case.value("dtype", "")},
                                {"supported", false},
                                {"tried", true},
                                {"crashed", true},
                                {"reason", outcome.failure()}}}};
    };
    for (const nlohmann::json& c : run_cases(o.self, files, std::max(o.timeout_s, 900.0), flags, killed)) {
        nlohmann::json& rows = r["ops"];
        if (rows.empty() || rows.back()["op"] != c["op"] || rows.back()["engine"] != c["engine"]) {
            rows.push_back({{"op", c["op"]}, {"engine", c["engine"]}, {"dtypes", nlohmann::json::array()}});
            if (c.contains("row_reason")) rows.back()["reason"] = c["row_reason"];
        }
        if (!c["cell"].is_null()) rows.back()["dtypes"].push_back(c["cell"]);
    }
    r["engines_without_devices"] = nlohmann::json::array();
    for (const auto& p : list["plugins"]) {
        if (p["status"] != "loaded") continue;
        for (const auto& e : p["engines"]) {
            if (e["devices"] == 0) r["engines_without_devices"].push_back({{"kind", e["kind"]}, {"reason", e["reason"]}});
        }
    }
    return r;
}

std::string render_ops(const nlohmann::json& r) {
    std::string t;
    for (const auto& row : r["ops"]) {
        std::string dtypes;
        for (const auto& cell : row["dtypes"]) {
            if (!dtypes.empty()) dtypes += ' ';
            dtypes += cell["supported"].get<bool>()
                          ? cell["dtype"].get<std::string>()
                          : fmt::format("({}: {})", cell["dtype"].get<std::string>(), cell.value("reason", std::string("no")));
        }
        if (row.contains("reason")) dtypes = fmt::format("no: {}", row["reason"].get<std::string>());
        else if (row["dtypes"].empty()) dtypes = "yes (the op declares no dtypes)";
        t += fmt::format("  {:<26} {:<10} {}\n", row["op"].get<std::string>(), row["engine"].get<std::string>(), dtypes);
    }
    for (const auto& e : r["engines_without_devices"]) {
        t += fmt::format("  engine kind {} has no devices: {}\n", e["kind"].get<std::string>(), e["reason"].get<std::string>());
    }
    return t;
}

}  // namespace ferro::inspect
