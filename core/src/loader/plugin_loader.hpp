// Turns a plugin file into a validated descriptor: stages open, entry, query, abi, validate
// (DESIGN §10). Registration (probe, create, register) happens in the registry.
#pragma once

#include "loader/library.hpp"
#include "loader/load_error.hpp"
#include "support/logging.hpp"

#include <ferro/plugin.h>

#include <filesystem>

namespace ferro::host {

struct LoadedPlugin {
    LibraryPtr library;
    const ferro_plugin_desc* desc = nullptr;  // borrowed for the lifetime of `library`
};

// Throws LoadError naming the stage that failed. Never lets a plugin's exception through.
// Logs "stage S: FILE" at trace level before each stage that runs the plugin's code, so that
// whoever watches (ferro-inspect's isolated probe) knows where a plugin that crashes died.
LoadedPlugin open_plugin(const std::filesystem::path& path, const ferro_host_api* host, const Logger& logger);

void log_stage(const Logger& logger, LoadStage stage, const std::string& file);

}  // namespace ferro::host
