// The objects behind the C API's opaque handles, and argument checks shared by the shims.
#pragma once

#include "runtime/runtime.hpp"
#include "support/status.hpp"

#include <atomic>
#include <string>
#include <vector>

struct ferro_runtime_impl {
    explicit ferro_runtime_impl(ferro::host::RuntimeOptions options) : runtime(std::move(options)) {}
    ferro::host::Runtime runtime;
};

// A pinned snapshot plus the rows the inventory accessors index.
struct ferro_inventory_impl {
    struct EngineKindRow {
        std::string plugin, kind, reason;
        uint32_t device_count;
    };
    ferro::host::SnapshotPtr snapshot;
    std::vector<std::string> engine_plugins;  // parallel to snapshot->engines
    std::vector<EngineKindRow> engine_kinds;
    std::vector<ferro::host::SearchDir> search_dirs;
    std::vector<std::string> search_dir_paths;
    struct ModuleRow {
        const std::string* family;
        const std::string* engine;
        const ferro::host::ModuleSlot* slot;
    };
    std::vector<ModuleRow> modules;  // every family x engine x provider the snapshot asked
};

namespace ferro::host::c_api {

// Throws INVALID_ARGUMENT "<function>: <argument> is NULL".
inline void require(const void* pointer, const char* function, const char* argument) {
    if (pointer == nullptr) {
        throw Error(FERRO_INVALID_ARGUMENT, std::string(function) + ": " + argument + " is NULL");
    }
}

// Throws OUT_OF_RANGE unless index < count.
inline void require_index(uint32_t index, std::size_t count, const char* function) {
    if (index >= count) {
        throw Error(FERRO_OUT_OF_RANGE, std::string(function) + ": index " + std::to_string(index) + " is out of range (count " +
                                            std::to_string(count) + ")");
    }
}

}  // namespace ferro::host::c_api
