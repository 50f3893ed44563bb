// Where the shared test data lives (../shared/data next to the repository: the einsum
// instances, the tensor-ad-oracles): FERRO_SHARED_DATA when set, else the directory CMake
// recorded at configure time, else shared/data beside any directory above the build tree.
#pragma once

#include "build_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ferro::test {

// The data directory holding `entry` (a file or directory name), or empty when none does.
inline std::filesystem::path shared_data_dir(const std::string& entry) {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("FERRO_SHARED_DATA")) return env;
    std::ifstream recorded(fs::path(build_dir()) / "tests" / "shared_data_dir.txt");
    std::string path;
    if (std::getline(recorded, path) && fs::exists(fs::path(path) / entry)) return path;
    for (fs::path p = fs::absolute(build_dir()); !p.empty() && p != p.root_path(); p = p.parent_path()) {
        if (fs::exists(p / "shared" / "data" / entry)) return p / "shared" / "data";
    }
    return {};
}

}  // namespace ferro::test
