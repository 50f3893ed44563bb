// bench/run vulkan: the same work on vulkan:0 and on the cpu engine, in one process: gemm f32
// n = 256 and 1024, a large elementwise expression, an einsum instance and fft 2^16; then a
// captured chain of 100 elementwise ops on vulkan:0, eager against its prepared program
// recording its session at each run (FERRO_RECORD=0), submitting one recording again, and the
// same without fusion (FERRO_FUSE=0). Each
// timed call ends by reading one element back, which waits for the device (ops are submitted
// asynchronously). On lavapipe these are figures, not targets; the binary runs unchanged on a
// real GPU. Prints DESIGN §12 JSON lines; without a Vulkan device, one line saying why.
#include "instances.hpp"
#include "timing.hpp"

#include <ferro/capture.hpp>
#include <ferro/ferro.hpp>
#include <ferro/fft.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>

using ferro::Tensor;

namespace {

// Waits for everything queued on t's engine (one element comes back to the host).
void sync(const Tensor& t) {
    Tensor first = t;
    for (int d = 0; d < t.ndim(); ++d) first = first.slice(d, 0, 1);
    (void)first.to("cpu");
}

struct Case {
    std::string name;
    std::function<Tensor(const std::string& engine)> setup_and_run;  // returns a result to sync on
};

void report(const std::string& name, double vulkan_s, double cpu_s, double max_diff, const std::string& device) {
    nlohmann::json row = {{"bench", "vulkan"},         {"case", name},     {"vulkan_s", vulkan_s},    {"cpu_s", cpu_s},
                          {"ratio", vulkan_s / cpu_s}, {"device", device}, {"max_abs_diff", max_diff}};
    std::printf("%s\n", row.dump().c_str());
    std::fflush(stdout);
}

double max_diff(const Tensor& a, const Tensor& b) {
    const std::vector<double> x = a.to("cpu").to(ferro::DType::f64).to_vector<double>();
    const std::vector<double> y = b.to("cpu").to(ferro::DType::f64).to_vector<double>();
    double d = 0;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) d = std::max(d, std::abs(x[i] - y[i]));
    return d;
}

Tensor chain(const Tensor& x, const Tensor& y) {
    Tensor t = x;
    for (int i = 0; i < 25; ++i) t = ((t + y) * y - x).tanh();  // 4 ops per round
    return t;
}

// The calling thread's CPU time per call of f (median over samples of `inner` calls): the host's
// own work, without the time it waits for the device.
template <class F> double host_seconds(F&& f, int samples, int inner) {
    const auto now = [] {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    };
    std::vector<double> s;
    for (int k = 0; k < samples; ++k) {
        const double t0 = now();
        for (int i = 0; i < inner; ++i) f();
        s.push_back((now() - t0) / inner);
    }
    return bench::median(s);
}

// The chain eager on vulkan:0, and replayed: recorded at each run, and resubmitted. Each call
// waits for the device, as a loop reading its result would; the calling thread's CPU time is
// reported beside the wall time.
void time_replay(const ferro::Runtime& rt, int64_t n, int samples, const std::string& device) {
    const Tensor x = rt.rand({n}, ferro::DType::f32, 6).to("vulkan:0"), y = rt.rand({n}, ferro::DType::f32, 7).to("vulkan:0");
    ferro::Capture capture(rt, {x, y});
    const ferro::Program program = capture.end({chain(x, y)});
    setenv("FERRO_RECORD", "0", 1);
    const ferro::PreparedProgram recording_each_run = program.prepare();
    unsetenv("FERRO_RECORD");
    setenv("FERRO_FUSE", "0", 1);
    const ferro::PreparedProgram unfused = program.prepare();
    unsetenv("FERRO_FUSE");
    const ferro::PreparedProgram resubmitted = program.prepare();
    const int inner = 20;
    const auto run_eager = [&] { sync(chain(x, y)); };
    const auto run_each = [&] { sync(recording_each_run({x, y})[0]); };
    const auto run_again = [&] { sync(resubmitted({x, y})[0]); };
    const auto run_unfused = [&] { sync(unfused({x, y})[0]); };
    const auto [eager, each_run, again, not_fused] =
        bench::interleaved_medians(samples, inner, run_eager, run_each, run_again, run_unfused);
    const double host_eager = host_seconds(run_eager, samples, inner), host_each = host_seconds(run_each, samples, inner),
                 host_again = host_seconds(run_again, samples, inner);
    const nlohmann::json row = {{"bench", "vulkan"},
                                {"case", "replay: chain of 100 elementwise ops, " + std::to_string(n) + " f32"},
                                {"eager_s", eager},
                                {"replay_recording_each_run_s", each_run},
                                {"replay_resubmitted_s", again},
                                {"resubmitted_over_eager", again / eager},
                                {"resubmitted_over_recording_each_run", again / each_run},
                                {"replay_resubmitted_unfused_s", not_fused},
                                {"resubmitted_over_unfused", again / not_fused},
                                {"host_cpu_eager_s", host_eager},
                                {"host_cpu_recording_each_run_s", host_each},
                                {"host_cpu_resubmitted_s", host_again},
                                {"host_cpu_resubmitted_over_recording_each_run", host_again / host_each},
                                {"device", device},
                                {"max_abs_diff", max_diff(resubmitted({x, y})[0], chain(x, y))}};
    std::printf("%s\n", row.dump().c_str());
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string data = "../shared/data/einsum_instances.json";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        else if (std::strcmp(argv[i], "--data") == 0 && i + 1 < argc) data = argv[++i];
    }
    const ferro::Runtime rt;
    std::string device;
    for (const auto& e : rt.inventory().engines) {
        if (e.name == "vulkan:0") device = e.device;
    }
    if (device.empty()) {
        std::string reason = "the vulkan engine is not loaded";
        for (const auto& k : rt.inventory().engine_kinds) {
            if (k.kind == "vulkan") reason = k.reason;
        }
        std::printf("%s\n", nlohmann::json({{"bench", "vulkan"}, {"skipped", "no vulkan:0: " + reason}}).dump().c_str());
        return 0;
    }
    const int samples = quick ? 3 : 7;
    const auto time_both = [&](const std::string& name, const std::function<Tensor(const std::string&)>& make) {
        // make(engine) builds the inputs on `engine` and returns a callable's result each call.
        Tensor on_vulkan, on_cpu;
        const double vulkan_s = bench::median_call_seconds(
            [&] {
                on_vulkan = make("vulkan:0");
                sync(on_vulkan);
            },
            samples);
        const double cpu_s = bench::median_call_seconds(
            [&] {
                on_cpu = make("cpu");
                sync(on_cpu);
            },
            samples);
        report(name, vulkan_s, cpu_s, max_diff(on_vulkan, on_cpu), device);
    };

    for (int64_t n : {int64_t{256}, int64_t{1024}}) {
        const Tensor a = rt.rand({n, n}, ferro::DType::f32, 1), b = rt.rand({n, n}, ferro::DType::f32, 2);
        const Tensor av = a.to("vulkan:0"), bv = b.to("vulkan:0");
        time_both("gemm f32 n=" + std::to_string(n),
                  [&](const std::string& e) { return e == "cpu" ? ferro::matmul(a, b) : ferro::matmul(av, bv); });
    }
    {
        const int64_t n = int64_t{1} << 22;
        const Tensor x = rt.rand({n}, ferro::DType::f32, 3), y = rt.rand({n}, ferro::DType::f32, 4);
        const Tensor xv = x.to("vulkan:0"), yv = y.to("vulkan:0");
        time_both("elementwise f32 x*y+x n=2^22", [&](const std::string& e) { return e == "cpu" ? x * y + x : xv * yv + xv; });
    }
    {
        std::ifstream in(data);
        const std::string name = "lm_batch_likelihood_sentence_4_4d";
        if (in) {
            const nlohmann::json doc = nlohmann::json::parse(in);
            for (const auto& inst : doc["instances"]) {
                if (inst["name"] != name) continue;
                std::vector<Tensor> cpu_ops, vulkan_ops;
                uint32_t seed = 1;
                for (const auto& s : inst["shapes"]) {
                    cpu_ops.push_back(rt.rand(s.get<ferro::Shape>(), ferro::DType::f32, seed++));
                    vulkan_ops.push_back(cpu_ops.back().to("vulkan:0"));
                }
                const ferro::EinsumOptions path = bench::reference_path(inst);
                const std::string subscripts = bench::subscripts_of(inst);
                time_both("einsum f32 " + name, [&](const std::string& e) {
                    return ferro::einsum(subscripts, e == "cpu" ? cpu_ops : vulkan_ops, path);
                });
            }
        } else {
            std::printf("%s\n",
                        nlohmann::json({{"bench", "vulkan"}, {"case", "einsum " + name}, {"skipped", data + " not found"}})
                            .dump()
                            .c_str());
        }
    }
    {
        const Tensor x = rt.rand({int64_t{1} << 16}, ferro::DType::f32, 5).to(ferro::DType::c64);
        try {
            const Tensor xv = x.to("vulkan:0");
            time_both("fft c64 n=2^16", [&](const std::string& e) { return ferro::fft::fft(e == "cpu" ? x : xv); });
        } catch (const ferro::Error& err) {
            std::printf(
                "%s\n",
                nlohmann::json({{"bench", "vulkan"}, {"case", "fft c64 n=2^16"}, {"skipped", err.what()}}).dump().c_str());
        }
    }
    for (const int64_t n : {int64_t{16}, int64_t{1} << 16}) time_replay(rt, n, samples, device);
}
