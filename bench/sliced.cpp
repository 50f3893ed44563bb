// bench/run sliced (ferro side): the shared einsum instances whose unsliced working memory is
// 16 MiB or more, contracted along the file's reference path under memory limits of 1/4 and
// 1/16 of that working memory (f64 operands seeded as bench/peers/einsum_peers.py makes them):
// the slices, the flop overhead, the time and the working memory measured (the cpu engine's
// peak bytes less what was live before the call and the output). The peer slices the same
// path with cotengra (bench/peers/sliced_peers.py).
//
// --case NAME runs one instance; --list prints the instances and their limits only;
// --slices N prints the flop overhead of N slices (cotengra gets the same count: the
// slicers compared at equal slice count); --distribute times the 1/4 limit with the slices
// spread over the ranks mpirun started (rank 0 prints; bench/run compares 1 and 2 ranks).
#include "instances.hpp"
#include "timing.hpp"

#include <ferro/ferro.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>

using ferro::Tensor;

namespace {

constexpr double kLargeBytes = 16 << 20;
// Slicings that repeat the work more than this many times are reported, not run: at 1/16 of its
// memory one language model repeats it 250 times (minutes a call).
constexpr double kMostOverhead = 20;

uint64_t data_bytes(const Tensor& t) {
    return static_cast<uint64_t>(t.numel()) * (FERRO_DTYPE_BITS(static_cast<ferro_dtype>(t.dtype())) / 8);
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, list = false, distribute = false;
    int64_t slices = 0;
    std::string data = "../shared/data/einsum_instances.json", exact;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        else if (std::strcmp(argv[i], "--list") == 0) list = true;
        else if (std::strcmp(argv[i], "--distribute") == 0) distribute = true;
        else if (std::strcmp(argv[i], "--data") == 0 && i + 1 < argc) data = argv[++i];
        else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) exact = argv[++i];
        else if (std::strcmp(argv[i], "--slices") == 0 && i + 1 < argc) slices = std::atoll(argv[++i]);
    }
    std::ifstream in(data);
    if (!in) {
        std::fprintf(stderr, "bench_sliced: cannot read %s\n", data.c_str());
        return 1;
    }
    const nlohmann::json doc = nlohmann::json::parse(in);
    const ferro::Runtime rt;
    const ferro::Runtime::RankSize ranks = distribute ? rt.rank_size() : ferro::Runtime::RankSize{};
    for (const auto& inst : doc.at("instances")) {
        const std::string name = inst["name"];
        if (!exact.empty() && name != exact) continue;
        const std::string subscripts = bench::subscripts_of(inst);
        const std::vector<Tensor> operands = bench::operands_of(rt, inst);
        const ferro::EinsumOptions reference = bench::reference_path(inst);
        const ferro::EinsumPath whole = ferro::einsum_path(subscripts, operands, reference);
        if (whole.working_bytes < kLargeBytes) continue;
        if (slices > 0) {
            ferro::EinsumOptions o = reference;
            o.slices = slices;
            const ferro::EinsumPath p = ferro::einsum_path(subscripts, operands, o);
            const nlohmann::json row = {
                {"case", name}, {"requested", slices}, {"slices", p.slices}, {"flop_overhead", p.slicing_overhead()}};
            std::printf("%s\n", row.dump().c_str());
            continue;
        }
        for (int fraction : {4, 16}) {
            if (distribute && fraction != 4) continue;
            ferro::EinsumOptions o = reference;
            o.distribute = distribute;
            o.memory_limit = static_cast<int64_t>(whole.working_bytes) / fraction;
            nlohmann::json row = {
                {"case", name}, {"fraction", fraction}, {"limit_bytes", o.memory_limit}, {"unsliced_bytes", whole.working_bytes}};
            ferro::EinsumPath p;
            try {
                p = ferro::einsum_path(subscripts, operands, o);
            } catch (const ferro::Error& e) {
                row["skipped"] = e.what();
                if (ranks.rank == 0) std::printf("%s\n", row.dump().c_str());
                continue;
            }
            row.update({{"slices", p.slices}, {"flop_overhead", p.slicing_overhead()}, {"predicted_bytes", p.working_bytes}});
            if (p.slicing_overhead() > kMostOverhead) row["not_run"] = "flop overhead above 20";
            if (distribute) {
                const char* threads = std::getenv("FERRO_CPU_THREADS");
                row.update({{"ranks", ranks.size}, {"threads_per_rank", threads != nullptr ? threads : "all cores"}});
            }
            if (!list && p.slicing_overhead() <= kMostOverhead) {
                const uint64_t before = rt.engine_memory().live_bytes;
                rt.reset_engine_memory_peak();
                const Tensor out = ferro::einsum(subscripts, operands, o);
                const uint64_t peak = rt.engine_memory().peak_bytes;
                row["measured_bytes"] = peak - before - data_bytes(out);
                row["seconds"] = bench::median_call_seconds([&] { ferro::einsum(subscripts, operands, o); }, quick ? 3 : 5);
            }
            if (ranks.rank == 0) std::printf("%s\n", row.dump().c_str());
            std::fflush(stdout);
        }
    }
}
