// Shared by the comm suites: runtimes with libferro_comm.so loaded, and rank-dependent values.
#pragma once

#include "ferro_test.hpp"

#include <string>
#include <vector>

namespace ferro::test {

inline std::string comm_plugin() { return build_dir() + "/lib/ferro/plugins/libferro_comm.so"; }

inline Runtime comm_runtime(const ferro_communicator& communicator = {sizeof(ferro_communicator), 0, nullptr, nullptr, 0}) {
    Runtime::Options o = isolated_options();
    o.communicator = communicator;
    Runtime rt(o);
    rt.load_plugin(comm_plugin());
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_einsum.so");
    return rt;
}

// The values rank r holds in the tests: r * 10 + i + 1 at position i (distinct across ranks).
inline std::vector<double> rank_values(int64_t rank, size_t n, double scale = 1.0) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<double>(rank) * 10 + static_cast<double>(i) + 1);
    return v;
}

}  // namespace ferro::test
