// bench/run capture: a captured program replayed against the same calls made eagerly, in the
// same process, sampled alternately (bench::paired_medians). Prints one JSON line per case.
// Cases: a chain of 100 tiny elementwise ops (1 and 16 f32 elements), where the cost is all
// dispatch, and a small MLP forward (matmul, bias, tanh, matmul, sum). `--calls eager|replay N`
// runs the 1-element chain N times untimed, for instruction counting (callgrind).
#include "timing.hpp"

#include <ferro/capture.hpp>
#include <ferro/ferro.hpp>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace {

ferro::Tensor chain(const ferro::Tensor& x, const ferro::Tensor& y) {
    ferro::Tensor t = x;
    for (int i = 0; i < 25; ++i) t = ((t + y) * y - x).tanh();  // 4 ops per round
    return t;
}

ferro::Tensor mlp(const ferro::Tensor& x, const ferro::Tensor& w1, const ferro::Tensor& b1, const ferro::Tensor& w2) {
    return (x.matmul(w1) + b1).tanh().matmul(w2).sum();
}

void report(const std::string& name, int ops, const std::pair<double, double>& eager_replay, int samples, int inner) {
    const auto [eager, replay] = eager_replay;
    std::printf(
        "{\"bench\": \"capture\", \"case\": \"%s\", \"ops\": %d, \"eager_s\": %.6e, \"replay_s\": %.6e, "
        "\"replay_over_eager\": %.3f, \"samples\": %d, \"inner\": %d}\n",
        name.c_str(), ops, eager, replay, replay / eager, samples, inner);
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int samples = quick ? 5 : 15, inner = quick ? 50 : 200;
    ferro::Runtime::Options o;
    o.autoload = false;
    const ferro::Runtime rt(o);
    if (argc > 3 && std::strcmp(argv[1], "--calls") == 0) {
        const ferro::Tensor x = rt.rand({1}, ferro::DType::f32, 1), y = rt.rand({1}, ferro::DType::f32, 2);
        ferro::Capture capture(rt, {x, y});
        const ferro::PreparedProgram replay = capture.end({chain(x, y)}).prepare();
        const bool eager = std::strcmp(argv[2], "eager") == 0;
        for (int i = 0, n = std::atoi(argv[3]); i < n; ++i) (void)(eager ? chain(x, y) : replay({x, y})[0]);
        return 0;
    }
    for (const int64_t n : {1, 16}) {
        const ferro::Tensor x = rt.rand({n}, ferro::DType::f32, 1), y = rt.rand({n}, ferro::DType::f32, 2);
        ferro::Capture capture(rt, {x, y});
        const ferro::PreparedProgram replay = capture.end({chain(x, y)}).prepare();
        const auto times = bench::paired_medians([&] { (void)chain(x, y); }, [&] { (void)replay({x, y}); }, samples, inner);
        report("chain of 100 elementwise ops, " + std::to_string(n) + " f32", 100, times, samples, inner);
    }
    const ferro::Tensor x = rt.rand({32, 64}, ferro::DType::f32, 3), w1 = rt.rand({64, 64}, ferro::DType::f32, 4),
                        b1 = rt.rand({64}, ferro::DType::f32, 5), w2 = rt.rand({64, 8}, ferro::DType::f32, 6);
    ferro::Capture capture(rt, {x, w1, b1, w2});
    const ferro::PreparedProgram replay = capture.end({mlp(x, w1, b1, w2)}).prepare();
    const auto times = bench::paired_medians([&] { (void)mlp(x, w1, b1, w2); },
                                             [&] {
                                                 (void)replay({x, w1, b1, w2});
                                             },
                                             samples, inner);
    report("MLP forward 32x64x64x8 f32", 6, times, samples, inner);

    // The training step: the loss and its gradients with respect to the weights. Eager records
    // a grad node per call; the replay records one for the program, whose VJP is itself a
    // prepared program.
    std::vector<ferro::Tensor> weights = {w1.detach(), b1.detach(), w2.detach()};
    for (ferro::Tensor& w : weights) w.set_requires_grad();
    const auto eager_step = [&] {
        const ferro::Tensor loss = mlp(x, weights[0], weights[1], weights[2]);
        (void)ferro::grad({loss}, weights);
    };
    const auto replay_step = [&] {
        const ferro::Tensor loss = replay({x, weights[0], weights[1], weights[2]})[0];
        (void)ferro::grad({loss}, weights);
    };
    report("MLP step (forward + backward) 32x64x64x8 f32", 6, bench::paired_medians(eager_step, replay_step, samples, inner),
           samples, inner);
}
