// The shared einsum instances as the einsum benchmarks run them: f64 operands uniform in
// [-1, 1), seeded per operand (as bench/peers/einsum_peers.py makes them), and the file's
// reference path (the best opt_einsum/cotengra found).
#pragma once

#include <ferro/ferro.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bench {

inline std::vector<ferro::Tensor> operands_of(const ferro::Runtime& rt, const nlohmann::json& inst) {
    std::vector<ferro::Tensor> operands;
    uint32_t seed = 1;
    for (const auto& s : inst["shapes"])
        operands.push_back(rt.rand(s.get<ferro::Shape>(), ferro::DType::f64, seed++) * 2.0 - 1.0);
    return operands;
}

// The instance's subscripts as ferro takes them. The einsum benchmark collection also uses the
// digits as labels, which ferro refuses (as numpy and torch do), so each digit d becomes the
// subscript digit U+2080 + d, a code point no instance uses.
inline std::string subscripts_of(const nlohmann::json& inst) {
    std::string out;
    for (const char c : inst["subscripts"].get<std::string>()) {
        if (c >= '0' && c <= '9') {
            out += "\xE2\x82";
            out += static_cast<char>(0x80 + (c - '0'));
        } else {
            out += c;
        }
    }
    return out;
}

inline ferro::EinsumOptions reference_path(const nlohmann::json& inst) {
    ferro::EinsumOptions reference;
    for (const auto& p : inst["paths"]["opt_flops"]["path"]) reference.path.emplace_back(p[0], p[1]);
    return reference;
}

}  // namespace bench
