// A cpu engine created through its plugin entry with a stub host, and views over host vectors.
#pragma once

#include "cpu_engine.hpp"
#include "stub_host.hpp"

#include <catch2/catch.hpp>

#include <vector>

namespace ferro::test {

struct CpuEngine {
    CpuEngine() {
        const ferro_plugin_desc* desc = nullptr;
        REQUIRE(ferro_cpu_plugin_query(&host.api, &desc) == nullptr);
        inst.struct_size = sizeof inst;
        REQUIRE(desc->engines[0].create(&host.api, 0, &inst) == nullptr);
    }
    ~CpuEngine() { inst.iface->destroy(inst.self); }
    const ferro_engine_iface& f() const { return *inst.iface; }

    StubHost host;
    ferro_engine_instance inst{};
};

// A view of `data` (the cpu engine addresses host memory directly).
template <class T>
ferro_tensor_view view(std::vector<T>& data, ferro_dtype dtype, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& strides, int64_t offset = 0) {
    ferro_tensor_view v{};
    v.struct_size = sizeof v;
    v.dtype = dtype;
    v.ndim = static_cast<int32_t>(shape.size());
    v.shape = shape.data();
    v.strides = strides.data();
    v.buffer = reinterpret_cast<ferro_buffer>(data.data());
    v.data = data.data() + offset;
    return v;
}

}  // namespace ferro::test
