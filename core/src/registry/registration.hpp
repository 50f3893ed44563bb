// Edits of a draft snapshot: registering a plugin's engines, families and module providers,
// and creating the modules every (family, engine) pair needs. All throw LoadError; a caller
// that catches one discards the draft, so a failed edit publishes nothing.
#pragma once

#include "loader/plugin_loader.hpp"
#include "runtime/snapshot.hpp"
#include "support/logging.hpp"

#include <functional>
#include <span>
#include <string>

namespace ferro::host {

struct RegistrationContext {
    const ferro_host_api* host;
    const Logger& logger;
    uint64_t runtime_id;  // of the runtime registering: its engines belong to it
    // The runtime's handles of these op names (Runtime::rule_ops).
    std::function<std::span<const ferro_op>(std::span<const char* const>)> rule_ops;
};

// Registers everything `plugin` describes. `path` is empty for built-ins.
void register_plugin(Snapshot& draft, const LoadedPlugin& plugin, const std::string& path, const RegistrationContext& ctx);

// Asks every module source for a module on every engine it has not been asked about yet.
void create_missing_modules(Snapshot& draft, const RegistrationContext& ctx);

// Removes the plugin `name` and everything it registered. Returns false when not found.
bool remove_plugin(Snapshot& draft, const std::string& name);

}  // namespace ferro::host
