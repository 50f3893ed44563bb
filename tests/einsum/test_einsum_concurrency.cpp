// einsum from many threads at once: plans (and their programs) are shared through the host's
// plan cache and must give every thread the serial answer (run under TSan by the tsan preset).
#include "einsum_test.hpp"

#include <atomic>
#include <cmath>
#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("concurrency: einsum plans shared by threads give the serial results", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({6, 5}, DType::f64, 1), B = rt.rand({5, 7}, DType::f64, 2), C = rt.rand({7, 6}, DType::f64, 3);
    const std::vector<std::string> expressions = {"ij,jk,kl->il", "ij,jk,kl->li", "ij,jk,ki->", "ij,jk->ik"};
    std::vector<std::vector<double>> serial;
    for (const auto& e : expressions) {
        const std::vector<Tensor> ops = e == "ij,jk->ik" ? std::vector<Tensor>{A, B} : std::vector<Tensor>{A, B, C};
        serial.push_back(einsum(e, ops).contiguous().to_vector<double>());
    }
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; ++i) {
                const size_t k = static_cast<size_t>(t + i) % expressions.size();
                const std::vector<Tensor> ops =
                    expressions[k] == "ij,jk->ik" ? std::vector<Tensor>{A, B} : std::vector<Tensor>{A, B, C};
                EinsumOptions o;
                o.optimize = i % 2 ? "greedy" : "auto";
                const std::vector<double> got = einsum(expressions[k], ops, o).contiguous().to_vector<double>();
                for (size_t j = 0; j < got.size(); ++j) {
                    if (std::abs(got[j] - serial[k][j]) > 1e-12) ++mismatches;  // paths may differ in rounding only
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(mismatches.load() == 0);
}

TEST_CASE("concurrency: sliced einsum plans shared by threads give the serial results", "[einsum]") {
    // One cached sliced plan per option, run by 4 threads at once: each run's slices, offsets
    // and accumulator are its own (the accumulator lives in the call's workspace).
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({6, 40}, DType::f64, 1), B = rt.rand({40, 50}, DType::f64, 2),
                 C = rt.rand({50, 30, 7}, DType::f64, 3), D = rt.rand({7, 6}, DType::f64, 4);
    const std::vector<Tensor> ops = {A, B, C, D};
    const std::string subscripts = "ij,jk,klm,mi->l";
    std::vector<EinsumOptions> options(3);
    options[0].memory_limit = static_cast<int64_t>(einsum_path(subscripts, ops).working_bytes / 4);
    options[1].slices = 12;  // summed labels among them: in-place accumulation or the accumulator
    options[2].memory_limit = options[0].memory_limit / 4;
    const std::vector<double> serial = einsum(subscripts, ops).to_vector<double>();
    for (const EinsumOptions& o : options) REQUIRE(einsum_path(subscripts, ops, o).slices > 1);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 30; ++i) {
                const std::vector<double> got =
                    einsum(subscripts, ops, options[static_cast<size_t>(t + i) % 3]).to_vector<double>();
                for (size_t j = 0; j < got.size(); ++j) {
                    if (std::abs(got[j] - serial[j]) > 1e-10 * std::abs(serial[j])) ++mismatches;
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(mismatches.load() == 0);
}
