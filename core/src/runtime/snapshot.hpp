// The immutable state of a runtime at one epoch: engines, families with their modules, plugin
// records and load diagnostics. Every op call pins the snapshot it started with; reconfigure
// copies it, edits the copy and publishes the copy as epoch + 1.
#pragma once

#include "dispatch/host_op.hpp"
#include "loader/library.hpp"
#include "loader/load_error.hpp"
#include "registry/engine.hpp"
#include "registry/module.hpp"

#include <boost/container/flat_map.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ferro::host {

// One failed (or partly failed) load: file, stage, status code, message.
struct Diagnostic {
    std::string file;
    LoadStage stage;
    uint32_t code;
    std::string message;
};

// Why an engine kind of a plugin has fewer devices than one might expect.
struct EngineAvailability {
    std::string kind;
    uint32_t device_count = 0;
    std::string reason;  // from probe, or why a device could not be created
};

struct PluginRecord {
    std::string name, version, description, path;  // path: canonical, empty for built-ins
    uint32_t abi_major = 0, abi_minor = 0;
    bool builtin = false;
    LibraryPtr library;  // null for built-ins
    const ferro_plugin_desc* desc = nullptr;
    std::vector<std::string> families;         // ids it defines
    std::vector<std::string> module_families;  // ids it contributes modules to
    std::string module_families_text;          // the same, comma-separated (inventory)
    std::vector<std::string> engines;          // engine names it created
    std::vector<EngineAvailability> engine_kinds;
};

// A source of modules for a family: the family's own factory or a provider from any plugin.
struct ModuleSource {
    std::string family_id;
    std::string plugin;  // provider plugin name
    ferro_create_module_fn create = nullptr;
    LibraryPtr library;
    uint32_t abi_minor = 0;  // the provider's (ferro_plugin_desc.abi_minor)
};

// The outcome of asking one source for a module on one engine.
struct ModuleSlot {
    std::string plugin;  // provider
    ModulePtr module;    // null when declined or failed
    std::string decline_reason;
};

struct FamilySlot {
    std::string id, version, description, plugin;
    const ferro_family_desc* desc = nullptr;
    LibraryPtr library;
    // engine name -> modules in the order they are tried.
    std::map<std::string, std::vector<ModuleSlot>> modules;
    std::span<const char* const> rule_calls;  // the ops its rules call (FERRO_EXT_RULE_CALLS)
};

struct OpEntry {
    std::string qualified_name;  // "linalg.svd"
    std::string family_id;
    uint32_t index = 0;  // into the family's ops
    const ferro_op_schema* schema = nullptr;
    std::vector<ferro_op_view> views;    // outputs that share an input's storage (FERRO_EXT_OP_VIEWS)
    HostOpFn host_op = nullptr;          // the host's own implementation (views, random numbers); else a plan
    std::span<const ferro_op> rule_ops;  // handles of the family's rule_calls, for its rules
};

struct Snapshot {
    uint64_t epoch = 0;
    std::vector<PluginRecord> plugins;
    std::vector<Diagnostic> diagnostics;
    boost::container::flat_map<std::string, EnginePtr> engines;
    boost::container::flat_map<std::string, FamilySlot> families;
    boost::container::flat_map<std::string, OpEntry> ops;
    std::vector<ModuleSource> module_sources;

    const PluginRecord* find_plugin(const std::string& name) const;
    // The plugin loaded from `path` (canonical), or nullptr.
    const PluginRecord* find_plugin_file(const std::string& path) const;
    const OpEntry* find_op(const std::string& qualified_name) const;
    // Why `qualified_name` is not an op here, for NOT_FOUND messages: which plugin provides its
    // family and which other files that also provide it were not registered, or that none does.
    std::string missing_op_message(const std::string& qualified_name) const;
    const Engine* find_engine(const std::string& name) const;
    // The engine named `name`, or NOT_FOUND "<context>: no engine named '...' (available:
    // ...)" (no prefix when `context` is empty).
    const EnginePtr& engine_named(const std::string& name, const std::string& context = "") const;
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

}  // namespace ferro::host
