#include "probe.hpp"

#include <ferro/ferro.hpp>

#include <nlohmann/json.hpp>

#include <cstring>
#include <map>
#include <unistd.h>

namespace ferro::inspect {
namespace {

// One line, written straight to the pipe: a plugin that crashes next must not take buffered
// lines down with it.
void emit(const nlohmann::json& line) {
    const std::string text = line.dump() + "\n";
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(STDOUT_FILENO, text.data() + done, text.size() - done);
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

// The loader logs "stage S: FILE" at trace level before running plugin code in stage S.
void on_log(void*, uint32_t level, const char* source, const char* message) {
    if (level != FERRO_LOG_TRACE || std::strcmp(source, "loader") != 0 || std::strncmp(message, "stage ", 6) != 0) return;
    const char* colon = std::strchr(message + 6, ':');
    if (colon == nullptr) return;
    emit({{"event", "stage"}, {"stage", std::string(message + 6, colon)}});
}

nlohmann::json describe(const Inventory& inv, const std::string& file) {
    nlohmann::json r = {{"event", "result"}, {"file", file}};
    for (const DiagnosticInfo& d : inv.diagnostics) {
        if (d.file != file) continue;
        r["status"] = "failed";
        r["stage"] = d.stage;
        r["code"] = d.code;
        r["reason"] = d.message;
        return r;
    }
    const PluginInfo* plugin = nullptr;
    for (const PluginInfo& p : inv.plugins) {
        if (!p.builtin && p.path == file) plugin = &p;
    }
    if (plugin == nullptr) {
        r["status"] = "failed";
        r["stage"] = "register";
        r["reason"] = "the runtime reports no plugin from this file";
        return r;
    }
    r["status"] = "loaded";
    r["name"] = plugin->name;
    r["version"] = plugin->version;
    r["description"] = plugin->description;
    r["abi"] = std::to_string(plugin->abi_major) + "." + std::to_string(plugin->abi_minor);
    // Only this plugin was loaded: every family other than the built-in core is its own.
    std::map<std::string, int> families;
    for (const OpInfo& op : inv.ops) {
        if (op.family != "core") ++families[op.family];
    }
    r["families"] = nlohmann::json::array();
    for (const auto& [family, ops] : families) r["families"].push_back({{"name", family}, {"ops", ops}});
    r["engines"] = nlohmann::json::array();
    for (const EngineKindInfo& k : inv.engine_kinds) {
        if (k.plugin != plugin->name) continue;
        nlohmann::json e = {{"kind", k.kind}, {"devices", k.device_count}, {"reason", k.reason}};
        e["names"] = nlohmann::json::array();
        for (const EngineInfo& engine : inv.engines) {
            if (engine.plugin == plugin->name && engine.kind == k.kind) e["names"].push_back(engine.name);
        }
        r["engines"].push_back(e);
    }
    const bool has_families = !families.empty(), has_engines = !r["engines"].empty();
    r["kind"] = has_families && has_engines ? "family+engine" : has_engines ? "engine" : has_families ? "family" : "empty";
    return r;
}

}  // namespace

int run_probe(const std::string& file) {
    Runtime::Options options;
    options.use_environment_path = false;
    options.use_default_dir = false;
    options.autoload = false;
    options.log_level = FERRO_LOG_TRACE;
    options.log_callback = on_log;
    Runtime rt(options);
    try {
        rt.load_plugin(file);
    } catch (const Error&) {
        // The diagnostic in the inventory says where and why.
    }
    emit(describe(rt.inventory(), file));
    return 0;
}

}  // namespace ferro::inspect
