// `ferro-inspect list` and the plugin part of `doctor`: every file in the plugin search path,
// probed in isolation, with the status the host would give it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ferro::inspect {

struct ListOptions {
    std::vector<std::string> dirs;  // --path: these directories instead of the search path
    double timeout_s = 10;
    std::string self;               // the inspector's executable, for probe mode
};

// {"command": "list", "schema": 1, "search_path": [...], "plugins": [...], "summary": {...}};
// docs/inspector.md has the schema.
nlohmann::json list_plugins(const ListOptions& options);
std::string render_list(const nlohmann::json& list);

}  // namespace ferro::inspect
