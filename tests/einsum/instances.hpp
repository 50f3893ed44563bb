// The real networks of ../shared/data/einsum_instances.json, for the suites that run them.
#pragma once

#include "einsum_test.hpp"
#include "shared_data.hpp"

#include "../../bench/instances.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace ferro::test {

inline nlohmann::json instances() {
    const auto dir = shared_data_dir("einsum_instances.json");
    if (dir.empty()) FAIL("einsum_instances.json not found: set FERRO_SHARED_DATA, or keep shared/data/ next to the repository");
    std::ifstream in(dir / "einsum_instances.json");
    return nlohmann::json::parse(in)["instances"];
}

// Uniform in [-1, 1) (both parts, for complex dtypes), seeded per operand: deterministic and not zero.
inline std::vector<Tensor> operands_of(const Runtime& rt, const nlohmann::json& inst, DType dtype = DType::f64) {
    std::vector<Tensor> ops;
    uint32_t seed = 1;
    for (const auto& s : inst["shapes"]) {
        const Shape shape = s.get<Shape>();
        Tensor t = rt.rand(shape, DType::f64, seed++) * 2.0 - 1.0;
        if (dtype == DType::c128)
            t = t.to(DType::c128) +
                (rt.rand(shape, DType::f64, 1000 + seed) * 2.0 - 1.0).to(DType::c128) * rt.tensor<cd>({cd(0, 1)}, {});
        ops.push_back(t);
    }
    return ops;
}

using bench::subscripts_of;  // digits mapped to U+2080..U+2089 (ferro refuses digit labels)

inline EinsumOptions reference_path(const nlohmann::json& inst) {
    EinsumOptions o;
    for (const auto& p : inst["paths"]["opt_flops"]["path"]) o.path.emplace_back(p[0], p[1]);
    return o;
}

}  // namespace ferro::test
