// `ferro-inspect list` and the plugin part of `doctor`: every file in the plugin search path,
// probed in isolation, with the status the host would give it.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace ferro::inspect {

struct ListOptions {
    std::vector<std::string> dirs;  // --path: these directories instead of the search path
    double timeout_s = 10;
    std::string self;  // the inspector's executable, for probe mode
};

// {"command": "list", "schema": 1, "search_path": [...], "plugins": [...], "summary": {...}};
// docs/inspector.md has the schema.
nlohmann::json list_plugins(const ListOptions& options);
// One file's entry, as list gives it, probed on its own.
nlohmann::json probe_file(const ListOptions& options, const std::filesystem::path& file);
// The entry of `list` for a plugin name, a file name or a path; null when none.
const nlohmann::json* find_plugin(const nlohmann::json& list, const std::string& target);
std::string render_list(const nlohmann::json& list);

}  // namespace ferro::inspect
