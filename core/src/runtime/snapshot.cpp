#include "runtime/snapshot.hpp"

#include "support/status.hpp"

namespace ferro {

const PluginRecord* Snapshot::find_plugin(const std::string& name) const {
    for (const auto& p : plugins) {
        if (p.name == name) return &p;
    }
    return nullptr;
}

const OpEntry* Snapshot::find_op(const std::string& qualified_name) const {
    auto it = ops.find(qualified_name);
    return it == ops.end() ? nullptr : &it->second;
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
    throw Error(FERRO_NOT_FOUND, (context.empty() ? "" : context + ": ") + "no engine named '" + name +
                                     "' (available: " + known + ")");
}

}  // namespace ferro
