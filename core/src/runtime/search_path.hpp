// Where plugins are looked for (DESIGN §10): explicit paths given to the runtime, then
// FERRO_PLUGIN_PATH (colon-separated), then the plugin directory next to libferro
// (<prefix>/lib/ferro/plugins). The build tree uses the install layout, so that last entry is
// also the build-tree plugin directory.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ferro::host {

struct SearchDir {
    std::filesystem::path path;  // canonical_path of the entry
    std::string origin;          // "runtime option", "FERRO_PLUGIN_PATH", "next to libferro"
    bool exists = false;
};

std::vector<SearchDir> resolve_search_path(const std::vector<std::string>& explicit_paths, bool use_environment,
                                           bool use_default_dir);

// `p` absolute, with symbolic links, "." and ".." resolved as far as it exists and no trailing
// separator: two spellings of one file or directory give the same path.
std::filesystem::path canonical_path(const std::filesystem::path& p);

// Candidate plugin files in `dir`: regular files named libferro_*.so, sorted by name.
std::vector<std::filesystem::path> plugin_candidates(const std::filesystem::path& dir);

// The plugin directory relative to the binary that contains libferro's code.
std::filesystem::path default_plugin_dir();

}  // namespace ferro::host
