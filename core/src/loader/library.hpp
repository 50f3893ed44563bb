// A loaded plugin shared library. The only place that uses Boost.DLL. Every object a plugin
// creates holds a std::shared_ptr<Library>, so the code stays mapped while anything of it lives.
#pragma once

#include <ferro/plugin.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

namespace ferro::host {

class Library {
public:
    // Opens `path` with RTLD_NOW | RTLD_LOCAL (RTLD_NODELETE in sanitizer builds, so leak
    // reports can still symbolise plugin frames). Throws LoadError at stage open.
    explicit Library(const std::filesystem::path& path);
    ~Library();
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }

    // The entry point, or nullptr when the library does not export it.
    ferro_plugin_query_fn entry() const;

    // Objects handed to users (tensors on the plugin's engines, cached plans) count themselves
    // here; unloading the plugin is refused while the count is non-zero.
    void add_user_object() noexcept { user_objects_.fetch_add(1, std::memory_order_relaxed); }
    void remove_user_object() noexcept { user_objects_.fetch_sub(1, std::memory_order_relaxed); }
    long user_objects() const noexcept { return user_objects_.load(std::memory_order_relaxed); }

private:
    struct Impl;
    std::filesystem::path path_;
    std::unique_ptr<Impl> impl_;
    std::atomic<long> user_objects_{0};
};

using LibraryPtr = std::shared_ptr<Library>;

}  // namespace ferro::host
