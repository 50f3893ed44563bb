#include "runtime/snapshot.hpp"

#include "support/status.hpp"

#include <fmt/format.h>

namespace ferro::host {

const PluginRecord* Snapshot::find_plugin(const std::string& name) const {
    for (const auto& p : plugins) {
        if (p.name == name) return &p;
    }
    return nullptr;
}

const PluginRecord* Snapshot::find_plugin_file(const std::string& path) const {
    for (const auto& p : plugins) {
        if (!p.builtin && p.path == path) return &p;
    }
    return nullptr;
}

const OpEntry* Snapshot::find_op(const std::string& qualified_name) const {
    auto it = ops.find(qualified_name);
    return it == ops.end() ? nullptr : &it->second;
}

std::string Snapshot::missing_op_message(const std::string& qualified_name) const {
    const std::string family = qualified_name.substr(0, qualified_name.find('.'));
    auto it = families.find(family);
    if (it == families.end()) {
        return fmt::format("no op named '{}': no loaded plugin provides family '{}'{}", qualified_name, family,
                           diagnostics.empty() ? ""
                                               : fmt::format(" ({} plugin file(s) failed to load: see the "
                                                             "runtime's diagnostics or ferro-inspect doctor)",
                                                             diagnostics.size()));
    }
    const PluginRecord* owner = find_plugin(it->second.plugin);
    std::string message = fmt::format(
        "no op named '{}': family '{}' is provided by plugin '{}' ({}), which has "
        "no op '{}'",
        qualified_name, family, it->second.plugin, owner == nullptr || owner->builtin ? "built in" : owner->path,
        qualified_name.substr(family.size() + (family.size() < qualified_name.size())));
    const std::string clash = fmt::format("family '{}' is already provided", family);
    for (const Diagnostic& d : diagnostics) {
        if (d.code == FERRO_ALREADY_EXISTS && d.message.find(clash) != std::string::npos) {
            message += fmt::format(
                "; {} also provides family '{}' but was not registered, because the first file "
                "on the search path wins",
                d.file, family);
        }
    }
    return message;
}

const Engine* Snapshot::find_engine(const std::string& name) const {
    auto it = engines.find(name);
    return it == engines.end() ? nullptr : it->second.get();
}

const EnginePtr& Snapshot::engine_named(const std::string& name, const std::string& context) const {
    auto it = engines.find(name);
    if (it != engines.end()) return it->second;
    std::string known;
    for (const auto& [n, e] : engines) known += (known.empty() ? "" : ", ") + n;
    throw Error(FERRO_NOT_FOUND,
                (context.empty() ? "" : context + ": ") + "no engine named '" + name + "' (available: " + known + ")");
}

}  // namespace ferro::host
