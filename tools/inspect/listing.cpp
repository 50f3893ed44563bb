#include "listing.hpp"

#include "isolate.hpp"

#include <ferro/ferro.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

namespace ferro::inspect {
namespace {

namespace fs = std::filesystem;

// The host loads files named libferro_*.so (DESIGN §10); others in the directory are listed as
// skipped, since a misnamed plugin is a common reason for "why isn't it loaded".
bool host_candidate(const std::string& name) {
    return name.rfind("libferro_", 0) == 0 && name.size() > 12 && name.compare(name.size() - 3, 3, ".so") == 0;
}

std::vector<SearchDirInfo> search_path(const ListOptions& o) {
    Runtime::Options ro;
    ro.autoload = false;
    if (!o.dirs.empty()) {
        ro.plugin_paths = o.dirs;
        ro.use_environment_path = false;
        ro.use_default_dir = false;
    }
    return Runtime(ro).inventory().search_path;
}

// What makes the host refuse a second plugin that loads fine on its own: the first one with the
// same plugin name, family or engine kind wins (search path order, files sorted per directory).
void mark_duplicates(nlohmann::json& plugins) {
    std::map<std::string, std::string> names, families, kinds;
    for (auto& p : plugins) {
        if (p["status"] != "loaded") continue;
        std::string clash;
        auto check = [&](const std::map<std::string, std::string>& seen, const std::string& key, const char* what) {
            auto it = seen.find(key);
            if (!clash.empty() || it == seen.end()) return;
            clash = fmt::format(
                "{} '{}' is already provided by {}, loaded first; this file is not registered (the "
                "first file on the search path wins)",
                what, key, it->second);
        };
        check(names, p["name"], "plugin name");
        for (const auto& f : p["families"]) check(families, f["name"], "family");
        for (const auto& e : p["engines"]) check(kinds, e["kind"], "engine kind");
        if (!clash.empty()) {
            p["status"] = "skipped";
            p["stage"] = "register";
            p["reason"] = clash;
            continue;
        }
        const std::string file = p["file"];
        names[p["name"]] = file;
        for (const auto& f : p["families"]) families[f["name"]] = file;
        for (const auto& e : p["engines"]) kinds[e["kind"]] = file;
    }
}

}  // namespace

nlohmann::json probe_file(const ListOptions& o, const fs::path& file) {
    const std::string name = file.filename().string();
    nlohmann::json p = {{"file", file.string()}, {"dir", file.parent_path().string()}};
    if (!host_candidate(name)) {
        p["status"] = "skipped";
        p["reason"] = "not named libferro_*.so, so the host does not load it";
        return p;
    }
    const ProbeOutcome outcome = probe_isolated(o.self, {file.string()}, o.timeout_s);
    if (!outcome.finished) {
        p.update(outcome.failed_entry(file.string()));
        return p;
    }
    for (const auto& [key, value] : outcome.result["plugins"][0].items()) {
        if (key != "file") p[key] = value;
    }
    return p;
}

namespace {

// Probes the files one child each, a few children at a time (one per core): the report keeps
// the search order, and plugins that hang time out together rather than one after another.
std::vector<nlohmann::json> probe_files(const ListOptions& o, const std::vector<fs::path>& files) {
    std::vector<nlohmann::json> results(files.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i = next++; i < files.size(); i = next++) results[i] = probe_file(o, files[i]);
    };
    const size_t n = std::min<size_t>(files.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> workers;
    for (size_t w = 1; w < n; ++w) workers.emplace_back(worker);
    worker();
    for (std::thread& t : workers) t.join();
    return results;
}

}  // namespace

const nlohmann::json* find_plugin(const nlohmann::json& list, const std::string& target) {
    std::error_code ec;
    const std::string absolute = fs::absolute(target, ec).string();
    for (const auto& p : list["plugins"]) {
        const std::string file = p["file"];
        if (p.value("name", "") == target || fs::path(file).filename() == target || file == absolute) return &p;
    }
    return nullptr;
}

nlohmann::json list_plugins(const ListOptions& o) {
    nlohmann::json out = {{"command", "list"}, {"schema", 1}};
    out["search_path"] = nlohmann::json::array();
    out["plugins"] = nlohmann::json::array();
    std::vector<fs::path> files;
    for (const SearchDirInfo& dir : search_path(o)) {
        out["search_path"].push_back({{"path", dir.path}, {"origin", dir.origin}, {"exists", dir.exists}});
        if (!dir.exists) continue;
        std::vector<fs::path> in_dir;
        std::error_code ec;
        for (fs::directory_iterator it(dir.path, ec), end; !ec && it != end; it.increment(ec)) {
            if (it->is_regular_file(ec)) in_dir.push_back(it->path());
        }
        std::sort(in_dir.begin(), in_dir.end());
        files.insert(files.end(), in_dir.begin(), in_dir.end());
    }
    for (nlohmann::json& p : probe_files(o, files)) out["plugins"].push_back(std::move(p));
    mark_duplicates(out["plugins"]);
    int loaded = 0, skipped = 0, failed = 0;
    for (const auto& p : out["plugins"]) {
        const std::string s = p["status"];
        (s == "loaded" ? loaded : s == "skipped" ? skipped : failed)++;
    }
    out["summary"] = {{"files", out["plugins"].size()}, {"loaded", loaded}, {"skipped", skipped}, {"failed", failed}};
    return out;
}

std::string render_list(const nlohmann::json& list) {
    std::string text;
    for (const auto& dir : list["search_path"]) {
        text += fmt::format("{} ({}{})\n", dir["path"].get<std::string>(), dir["origin"].get<std::string>(),
                            dir["exists"].get<bool>() ? "" : ", does not exist");
        for (const auto& p : list["plugins"]) {
            if (p["dir"] != dir["path"]) continue;
            const std::string file = std::filesystem::path(p["file"].get<std::string>()).filename().string();
            const std::string status = p["status"];
            if (status != "loaded") {
                const std::string stage = p.value("stage", "");
                text += fmt::format("  {:<34} {:<8} {}{}\n", file, status,
                                    stage.empty() || p.contains("crash") ? "" : "at stage " + stage + ": ",
                                    p["reason"].get<std::string>());
                continue;
            }
            std::string what;
            for (const auto& f : p["families"])
                what += fmt::format("{}family {} ({} ops)", what.empty() ? "" : ", ", f["name"].get<std::string>(),
                                    f["ops"].get<int>());
            for (const auto& m : p.value("module_families", nlohmann::json::array())) {
                what += fmt::format("{}modules for family {}", what.empty() ? "" : ", ", m.get<std::string>());
            }
            for (const auto& e : p["engines"]) {
                const int n = e["devices"];
                what += fmt::format("{}engine {} ({} device{}{})", what.empty() ? "" : ", ", e["kind"].get<std::string>(), n,
                                    n == 1 ? "" : "s", n == 0 ? ": " + e["reason"].get<std::string>() : "");
            }
            text += fmt::format("  {:<34} {:<8} {} {} (ABI {}, {}): {}\n", file, status, p["name"].get<std::string>(),
                                p["version"].get<std::string>(), p["abi"].get<std::string>(), p["kind"].get<std::string>(), what);
        }
    }
    const auto& s = list["summary"];
    text += fmt::format("{} files: {} loaded, {} skipped, {} failed\n", s["files"].get<int>(), s["loaded"].get<int>(),
                        s["skipped"].get<int>(), s["failed"].get<int>());
    return text;
}

}  // namespace ferro::inspect
