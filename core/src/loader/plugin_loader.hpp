// Turns a plugin file into a validated descriptor: stages open, entry, query, abi, validate
// (DESIGN §10). Registration (probe, create, register) happens in the registry.
#pragma once

#include "loader/library.hpp"

#include <ferro/plugin.h>

#include <filesystem>

namespace ferro {

struct LoadedPlugin {
    LibraryPtr library;
    const ferro_plugin_desc* desc = nullptr;  // borrowed for the lifetime of `library`
};

// Throws LoadError naming the stage that failed. Never lets a plugin's exception through.
LoadedPlugin open_plugin(const std::filesystem::path& path, const ferro_host_api* host);

}  // namespace ferro
