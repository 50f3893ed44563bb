// A family module for one engine, as the host holds it: the plugin's instance plus a reference
// on the library that made it.
#pragma once

#include "loader/library.hpp"

#include <ferro/plugin.h>

#include <memory>
#include <string>

namespace ferro::host {

class Module {
public:
    // Takes ownership of `instance` (already validated by the registry). `abi_minor`: the
    // minor the provider was built for (what a field of a newer minor means is not its).
    Module(ferro_module_instance instance, LibraryPtr library, std::string provider, uint32_t abi_minor)
        : self_(instance.self),
          iface_(instance.iface),
          library_(std::move(library)),
          provider_(std::move(provider)),
          abi_minor_(abi_minor) {}
    ~Module() { iface_->destroy(self_); }
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    void* self() const noexcept { return self_; }
    const ferro_module_iface& iface() const noexcept { return *iface_; }
    const LibraryPtr& library() const noexcept { return library_; }
    const std::string& provider() const noexcept { return provider_; }  // plugin name
    uint32_t abi_minor() const noexcept { return abi_minor_; }

private:
    void* self_;
    const ferro_module_iface* iface_;
    LibraryPtr library_;
    std::string provider_;
    uint32_t abi_minor_;
};

using ModulePtr = std::shared_ptr<Module>;

}  // namespace ferro::host
