// The shared einsum instances as the einsum benchmarks run them: f64 operands uniform in
// [-1, 1), seeded per operand (as bench/peers/einsum_peers.py makes them), and the file's
// reference path (the best opt_einsum/cotengra found).
#pragma once

#include <ferro/ferro.hpp>
#include <nlohmann/json.hpp>

#include <vector>

namespace bench {

inline std::vector<ferro::Tensor> operands_of(const ferro::Runtime& rt, const nlohmann::json& inst) {
    std::vector<ferro::Tensor> operands;
    uint32_t seed = 1;
    for (const auto& s : inst["shapes"])
        operands.push_back(rt.rand(s.get<ferro::Shape>(), ferro::DType::f64, seed++) * 2.0 - 1.0);
    return operands;
}

inline ferro::EinsumOptions reference_path(const nlohmann::json& inst) {
    ferro::EinsumOptions reference;
    for (const auto& p : inst["paths"]["opt_flops"]["path"]) reference.path.emplace_back(p[0], p[1]);
    return reference;
}

}  // namespace bench
