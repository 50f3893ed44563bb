// bench/run einsum (ferro side): every instance of ../shared/data/einsum_instances.json,
// executed along the file's reference path (the best path opt_einsum/cotengra found: the
// peers execute the same one), plus the path search of each of our optimisers on its own:
// flops, largest intermediate and search seconds (plan_s). Operands are f64 uniform in
// [-1, 1), seeded per operand, as bench/peers/einsum_peers.py makes them.
//
// --case NAME runs one instance (bench/run alternates ferro and its peers instance by
// instance, so both sides of a ratio meet the same load); --timing-only and --paths-only run
// half of the work; --only SUBSTRING selects instances by part of their name. --grad times
// forward + backward of sum(einsum) with every operand requiring its gradient instead
// (bench/run einsum_ad), and the forward alone for the backward's cost relative to it.
// --replay times the contraction captured and replayed as a prepared program against the same
// call made eagerly, sampled alternately (bench/run capture); with --grad, forward + backward
// of sum(einsum) with every operand requiring its gradient, through the program's grad node
// against the eager calls.
#include "instances.hpp"
#include "timing.hpp"

#include <ferro/capture.hpp>
#include <ferro/ferro.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

using ferro::Tensor;

namespace {

// Eager and replayed calls sampled alternately, each sample ~20 ms: their medians in `row`.
template <class Eager, class Replayed> void time_pair(nlohmann::json& row, Eager eager, Replayed replayed, bool quick) {
    replayed();  // a first run builds what it keeps (a gradient program)
    eager();
    const double once = bench::sample_seconds(eager, 1);
    const int inner = std::max(1, static_cast<int>(0.02 / std::max(once, 1e-7)));
    const auto [eager_s, replay_s] = bench::paired_medians(eager, replayed, quick ? 3 : 5, inner);
    row["eager_seconds"] = eager_s;
    row["seconds"] = replay_s;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, timing = true, paths = true, grad = false, replay = false;
    std::string data = "../shared/data/einsum_instances.json", only, exact;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        else if (std::strcmp(argv[i], "--data") == 0 && i + 1 < argc) data = argv[++i];
        else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) exact = argv[++i];
        else if (std::strcmp(argv[i], "--timing-only") == 0) paths = false;
        else if (std::strcmp(argv[i], "--paths-only") == 0) timing = false;
        else if (std::strcmp(argv[i], "--grad") == 0) grad = true;
        else if (std::strcmp(argv[i], "--replay") == 0) replay = true;
    }
    std::ifstream in(data);
    if (!in) {
        std::fprintf(stderr, "bench_einsum: cannot read %s\n", data.c_str());
        return 1;
    }
    const nlohmann::json doc = nlohmann::json::parse(in);
    const ferro::Runtime rt;
    for (const auto& inst : doc["instances"]) {
        const std::string name = inst["name"];
        if (!only.empty() && name.find(only) == std::string::npos) continue;
        if (!exact.empty() && name != exact) continue;
        const std::string subscripts = bench::subscripts_of(inst);
        const std::vector<Tensor> operands = bench::operands_of(rt, inst);
        const ferro::EinsumOptions reference = bench::reference_path(inst);
        nlohmann::json row = {{"case", name}, {"operands", operands.size()}};
        if (grad && replay) {
            std::vector<Tensor> leaves;
            for (const Tensor& t : operands) leaves.push_back(t.detach().set_requires_grad());
            ferro::Capture capture(rt, operands);
            const ferro::PreparedProgram program = capture.end({ferro::einsum(subscripts, operands, reference).sum()}).prepare();
            const auto eager = [&] { (void)ferro::grad({ferro::einsum(subscripts, leaves, reference).sum()}, leaves); };
            const auto replayed = [&] { (void)ferro::grad({program(leaves).at(0)}, leaves); };
            time_pair(row, eager, replayed, quick);
            row["grad_fn"] = program(leaves).at(0).grad_fn();
            std::printf("%s\n", row.dump().c_str());
            std::fflush(stdout);
            continue;
        }
        if (grad) {
            std::vector<Tensor> leaves;
            for (const Tensor& t : operands) leaves.push_back(t.detach().set_requires_grad());
            row["forward_seconds"] =
                bench::median_call_seconds([&] { ferro::einsum(subscripts, operands, reference); }, quick ? 3 : 5);
            row["seconds"] = bench::median_call_seconds(
                [&] {
                    ferro::einsum(subscripts, leaves, reference).sum().backward();
                    for (Tensor& l : leaves) l.clear_grad();
                },
                quick ? 3 : 5);
            std::printf("%s\n", row.dump().c_str());
            std::fflush(stdout);
            continue;
        }
        if (replay) {
            const auto eager = [&] { ferro::einsum(subscripts, operands, reference); };
            ferro::Capture capture(rt, operands);
            const ferro::PreparedProgram program = capture.end({ferro::einsum(subscripts, operands, reference)}).prepare();
            const auto replayed = [&] { program(operands); };
            time_pair(row, eager, replayed, quick);
            std::printf("%s\n", row.dump().c_str());
            std::fflush(stdout);
            continue;
        }
        if (timing) {
            row["seconds"] = bench::median_call_seconds([&] { ferro::einsum(subscripts, operands, reference); }, quick ? 3 : 5);
        }
        if (!paths) {
            std::printf("%s\n", row.dump().c_str());
            std::fflush(stdout);
            continue;
        }
        const ferro::EinsumPath ref = ferro::einsum_path(subscripts, operands, reference);
        row["paths"]["reference"] = {{"flops", ref.flops}, {"largest", ref.largest_intermediate}};
        // Each optimiser's search on its own (a plan-cache miss: the attributes differ).
        std::vector<std::string> optimisers = {"greedy", "auto", "random-greedy"};
        if (operands.size() <= 128) optimisers.push_back("optimal");  // beyond 16: over connected subnetworks
        for (const std::string& optimize : optimisers) {
            ferro::EinsumOptions o;
            o.optimize = optimize;
            ferro::EinsumPath p;
            try {
                const double plan_s = bench::sample_seconds([&] { p = ferro::einsum_path(subscripts, operands, o); }, 1);
                row["paths"][optimize] = {{"flops", p.flops}, {"largest", p.largest_intermediate}, {"plan_s", plan_s}};
            } catch (const ferro::Error& e) {  // optimal gives up on some networks, saying why
                row["paths"][optimize] = {{"skipped", e.what()}};
            }
        }
        std::printf("%s\n", row.dump().c_str());
        std::fflush(stdout);
    }
}
