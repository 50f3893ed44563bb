#include "runtime/search_path.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <system_error>

namespace ferro::host {

std::filesystem::path default_plugin_dir() {
    Dl_info info{};
    // Any function of libferro locates the binary holding it: lib/libferro.so when linked
    // shared, the executable when the core is linked statically (tests).
    if (dladdr(reinterpret_cast<void*>(&default_plugin_dir), &info) == 0 || !info.dli_fname) {
        return {};
    }
    std::error_code ec;
    const auto binary = std::filesystem::canonical(info.dli_fname, ec);
    if (ec) return {};
    const auto dir = binary.parent_path();
    // lib/libferro.so -> lib/ferro/plugins; bin/<exe> -> lib/ferro/plugins.
    for (const auto& candidate : {dir / "ferro" / "plugins", dir.parent_path() / "lib" / "ferro" / "plugins"}) {
        if (std::filesystem::is_directory(candidate, ec)) return candidate;
    }
    return dir / "ferro" / "plugins";
}

std::filesystem::path canonical_path(const std::filesystem::path& p) {
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
    if (ec) canonical = std::filesystem::absolute(p, ec).lexically_normal();
    return canonical.has_filename() || !canonical.has_parent_path() ? canonical : canonical.parent_path();
}

std::vector<SearchDir> resolve_search_path(const std::vector<std::string>& explicit_paths, bool use_environment,
                                           bool use_default_dir) {
    std::vector<SearchDir> dirs;
    auto add = [&](const std::filesystem::path& p, const char* origin) {
        if (p.empty()) return;
        std::error_code ec;
        // A trailing slash or a symbolic link names a directory already listed: scan it once.
        const auto dir = canonical_path(p);
        const bool seen = std::any_of(dirs.begin(), dirs.end(), [&](const SearchDir& d) { return d.path == dir; });
        if (!seen) dirs.push_back({dir, origin, std::filesystem::is_directory(dir, ec)});
    };
    for (const auto& p : explicit_paths) add(p, "runtime option");
    if (use_environment) {
        if (const char* env = std::getenv("FERRO_PLUGIN_PATH")) {
            std::stringstream in(env);
            std::string item;
            while (std::getline(in, item, ':')) add(item, "FERRO_PLUGIN_PATH");
        }
    }
    if (use_default_dir) add(default_plugin_dir(), "next to libferro");
    return dirs;
}

std::vector<std::filesystem::path> plugin_candidates(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const auto name = it->path().filename().string();
        const bool matches = name.rfind("libferro_", 0) == 0 && name.size() > 12 && name.compare(name.size() - 3, 3, ".so") == 0;
        if (matches && !it->is_directory(ec)) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace ferro::host
