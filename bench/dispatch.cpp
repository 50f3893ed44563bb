// bench/run dispatch (ferro side): per-call time of tiny ops through ferro.hpp, where the
// cost is all dispatch. Prints one {"case", "seconds"} JSON line per case; bench/run pairs it
// with the libtorch peer (torch_peer/dispatch_torch.cpp) measured in the same run.
// `--calls CASE N` runs case CASE exactly N times untimed, for instruction counting.
#include "timing.hpp"

#include <ferro/ferro.hpp>

#include <cstdlib>
#include <cstring>
#include <functional>

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int samples = quick ? 5 : 15, inner = quick ? 5000 : 20000;
    ferro::Runtime::Options o;
    o.autoload = false;
    const ferro::Runtime rt(o);
    const ferro::Tensor one_a = rt.tensor<float>({1.5f}, {1}), one_b = rt.tensor<float>({2.5f}, {1});
    const ferro::Tensor m_a = rt.rand({4, 4}, ferro::DType::f32, 1), m_b = rt.rand({4, 4}, ferro::DType::f32, 2);
    const ferro::Tensor v16 = rt.rand({16}, ferro::DType::f32, 3);
    const std::pair<const char*, std::function<void()>> cases[] = {
        {"add 1-element f32", [&] { (void)(one_a + one_b); }},
        {"matmul 4x4 f32", [&] { (void)ferro::matmul(m_a, m_b); }},
        {"sum 16 f32", [&] { (void)v16.sum(); }},
    };
    if (argc > 3 && std::strcmp(argv[1], "--calls") == 0) {
        const auto& f = cases[std::atoi(argv[2])].second;
        for (int i = 0, n = std::atoi(argv[3]); i < n; ++i) f();
        return 0;
    }
    for (const auto& [name, f] : cases) {
        std::printf("{\"case\": \"%s\", \"seconds\": %.6e, \"samples\": %d, \"inner\": %d}\n", name,
                    bench::median_seconds(f, samples, inner), samples, inner);
    }
}
