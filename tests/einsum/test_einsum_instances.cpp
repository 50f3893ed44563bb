// The real networks of ../shared/data/einsum_instances.json: each runs with our own path and
// agrees with the result along the file's reference path; our paths' cost against the
// reference; and the optimisers' contracts (optimal = brute force on small networks,
// random-greedy reproducible and never worse than greedy).
#include "instances.hpp"

#include <cmath>
#include <random>

using namespace ferro;
using namespace ferro::test;

namespace {

// Our default path (optimize="auto": beyond 8 operands the best of greedy improved by subtree
// reconfiguration, 32 random-greedy trials, and up to 128 the connected-subnetwork optimum when
// it is found within its budget) against the file's reference path (cotengra's hyper-optimised):
// flops ratios measured on 2026-11-30 and 2026-12-01. Greedy alone (opt_einsum's, ours alike) is
// 2-100x off on the language-model and graphical-model networks; these bounds keep what we reach
// from regressing. The two language models are beyond auto's budget for the exact search;
// optimize="optimal" reaches the reference on them. Everything else must be within 1.1x (MERA
// open, 26 operands, was 2.3x before the connected search found the reference's flops; the
// chain was 1.3x before the random trials).
const std::map<std::string, double> known_gaps = {
    {"gm_queen5_5_3.wcsp", 2.5},
    {"lm_batch_likelihood_brackets_4_4d", 3.0},
    {"lm_batch_likelihood_sentence_4_4d", 3.0},
};

}  // namespace

TEST_CASE("einsum instances: every network runs and our path agrees with the reference path", "[einsum]") {
    const Runtime rt = einsum_runtime();
    for (const auto& inst : instances()) {
        const std::string name = inst["name"];
        INFO(name);
        const std::vector<Tensor> ops = operands_of(rt, inst);
        const std::string subscripts = subscripts_of(inst);
        const Tensor ours = einsum(subscripts, ops);
        const Tensor ref = einsum(subscripts, ops, reference_path(inst));
        REQUIRE(ours.shape() == ref.shape());
        const double scale = ref.abs().max().item<double>();
        CHECK(scale > 0);  // a real value to compare, not zeros
        const double diff = (ours - ref).abs().max().item<double>();
        INFO("max |ours - reference| = " << diff << ", max |reference| = " << scale);
        CHECK(diff <= 1e-9 * scale);
    }
}

TEST_CASE("einsum instances: our path's flops against the reference path", "[einsum]") {
    const Runtime rt = einsum_runtime();
    for (const auto& inst : instances()) {
        const std::string name = inst["name"];
        const std::vector<Tensor> ops = operands_of(rt, inst);
        const std::string subscripts = subscripts_of(inst);
        const EinsumPath ours = einsum_path(subscripts, ops);
        const EinsumPath ref = einsum_path(subscripts, ops, reference_path(inst));
        const double ratio = ours.flops / ref.flops;
        const auto gap = known_gaps.find(name);
        INFO(name << ": flops " << ours.flops << " vs reference " << ref.flops << " (ratio " << ratio << ")");
        CHECK(ratio <= (gap == known_gaps.end() ? 1.1 : gap->second));
    }
}

namespace {

// The cheapest flops of any pairwise order, by trying them all (opt_einsum's cost model).
double brute_force(std::vector<std::string> tensors, const std::string& output, const std::map<char, int64_t>& size) {
    if (tensors.size() == 1) return 0;
    double best = INFINITY;
    for (size_t i = 0; i < tensors.size(); ++i) {
        for (size_t j = i + 1; j < tensors.size(); ++j) {
            std::string all = tensors[i];
            for (char c : tensors[j]) {
                if (all.find(c) == std::string::npos) all += c;
            }
            std::string kept;
            for (char c : all) {
                bool needed = output.find(c) != std::string::npos;
                for (size_t k = 0; k < tensors.size(); ++k) {
                    if (k != i && k != j && tensors[k].find(c) != std::string::npos) needed = true;
                }
                if (needed) kept += c;
            }
            double flops = 1;
            for (char c : all) flops *= static_cast<double>(size.at(c));
            if (kept.size() < all.size()) flops *= 2;
            std::vector<std::string> rest;
            for (size_t k = 0; k < tensors.size(); ++k) {
                if (k != i && k != j) rest.push_back(tensors[k]);
            }
            rest.push_back(kept);
            best = std::min(best, flops + brute_force(rest, output, size));
        }
    }
    return best;
}

}  // namespace

TEST_CASE("einsum paths: optimal matches brute force on small random networks", "[einsum]") {
    const Runtime rt = einsum_runtime();
    std::mt19937 gen(7);
    for (int trial = 0; trial < 40; ++trial) {
        const int n = std::uniform_int_distribution<int>(2, 6)(gen);
        const std::string pool = "abcdefgh";
        std::map<char, int64_t> size;
        for (char c : pool) size[c] = std::uniform_int_distribution<int64_t>(2, 6)(gen);
        std::vector<std::string> tensors;
        std::string subscripts;
        std::vector<Tensor> ops;
        for (int k = 0; k < n; ++k) {
            std::string t;
            for (char c : pool) {
                if (std::uniform_int_distribution<int>(0, 2)(gen) == 0) t += c;
            }
            Shape shape;
            for (char c : t) shape.push_back(size[c]);
            tensors.push_back(t);
            if (k > 0) subscripts += ',';
            subscripts += t;
            ops.push_back(rt.zeros(shape, DType::f64));
        }
        std::string output;
        for (char c : pool) {
            int uses = 0;
            for (const auto& t : tensors) uses += t.find(c) != std::string::npos;
            if (uses == 1 && std::uniform_int_distribution<int>(0, 1)(gen) == 0) output += c;
        }
        EinsumOptions o;
        o.optimize = "optimal";
        INFO(subscripts << "->" << output);
        CHECK(einsum_path(subscripts + "->" + output, ops, o).flops == brute_force(tensors, output, size));
    }
}

// The classic matrix-chain order by its O(n^3) dynamic programme: multiply-adds of the best
// parenthesisation of matrices dims[k] x dims[k + 1].
double matrix_chain_optimum(const std::vector<int64_t>& dims) {
    const size_t n = dims.size() - 1;
    std::vector<std::vector<double>> best(n, std::vector<double>(n, 0));
    for (size_t len = 2; len <= n; ++len) {
        for (size_t i = 0; i + len <= n; ++i) {
            const size_t j = i + len - 1;
            best[i][j] = INFINITY;
            for (size_t k = i; k < j; ++k) {
                const double cost =
                    best[i][k] + best[k + 1][j] +
                    static_cast<double>(dims[i]) * static_cast<double>(dims[k + 1]) * static_cast<double>(dims[j + 1]);
                best[i][j] = std::min(best[i][j], cost);
            }
        }
    }
    return best[0][n - 1];
}

// A chain of matrices as sublists (labels from `first`), with random dimensions.
std::vector<int64_t> chain_dims(std::mt19937& gen, size_t matrices) {
    std::vector<int64_t> dims;
    for (size_t k = 0; k <= matrices; ++k) dims.push_back(std::uniform_int_distribution<int64_t>(2, 40)(gen));
    return dims;
}

TEST_CASE("einsum paths: optimal beyond 16 operands searches connected subnetworks exactly", "[einsum]") {
    const Runtime rt = einsum_runtime();
    std::mt19937 gen(11);
    EinsumOptions optimal;
    optimal.optimize = "optimal";
    for (size_t matrices : {17, 24, 40, 100, 128}) {  // beyond 64: two words per set of operands
        // Each step over labels {a, b, c} of a chain costs a b c multiply-adds, doubled for the
        // sum (opt_einsum's model), so the optimum is twice the classic matrix-chain one.
        const std::vector<int64_t> dims = chain_dims(gen, matrices);
        std::vector<Tensor> ops;
        std::vector<std::vector<int64_t>> sublists;
        for (size_t k = 0; k < matrices; ++k) {
            ops.push_back(rt.zeros({dims[k], dims[k + 1]}));
            sublists.push_back({static_cast<int64_t>(k), static_cast<int64_t>(k + 1)});
        }
        INFO(matrices << " matrices");
        const double want = 2 * matrix_chain_optimum(dims);
        const std::vector<int64_t> output = {0, static_cast<int64_t>(matrices)};
        CHECK(einsum_path(ops, sublists, output, optimal).flops == Approx(want).epsilon(1e-12));
        // auto takes the exact search when it fits its budget (these first three): never worse than it.
        if (matrices <= 40) CHECK(einsum_path(ops, sublists, output).flops <= want * (1 + 1e-12));
    }
}

TEST_CASE("einsum paths: a label of the output held by every operand connects nothing in the optimal search", "[einsum]") {
    const Runtime rt = einsum_runtime();
    EinsumOptions optimal;
    optimal.optimize = "optimal";
    // A batch of 2 chains of 30 matrices 2 x 2: label 1000 on every operand and in the output.
    // Were it an edge, every set of operands would be connected, and with sizes this small the
    // outer products of far-apart matrices stay under the cost cap long enough for the search to
    // give up (2^30 sets). Each step over {a, b, c} and the batch costs 2 a b c multiply-adds,
    // doubled for the sum.
    const std::vector<int64_t> dims(31, 2);
    std::vector<Tensor> ops;
    std::vector<std::vector<int64_t>> sublists;
    for (size_t k = 0; k < 30; ++k) {
        ops.push_back(rt.zeros({2, dims[k], dims[k + 1]}));
        sublists.push_back({1000, static_cast<int64_t>(k), static_cast<int64_t>(k + 1)});
    }
    CHECK(einsum_path(ops, sublists, {1000, 0, 30}, optimal).flops == Approx(2 * 2 * matrix_chain_optimum(dims)).epsilon(1e-12));
}

// (The 84-operand language models reach their reference too, in about 1 s each, 25 s under
// ASan: bench/run einsum reports them.)
TEST_CASE("einsum paths: optimal finds the reference path's flops on the 100-matrix chain", "[einsum]") {
    const Runtime rt = einsum_runtime();
    EinsumOptions optimal;
    optimal.optimize = "optimal";
    for (const auto& inst : instances()) {
        const std::string name = inst["name"];
        if (name != "str_matrix_chain_multiplication_100") continue;
        INFO(name);
        const std::vector<Tensor> ops = operands_of(rt, inst);
        const std::string subscripts = subscripts_of(inst);
        const double ref = einsum_path(subscripts, ops, reference_path(inst)).flops;
        CHECK(einsum_path(subscripts, ops, optimal).flops <= ref * (1 + 1e-12));
    }
}

TEST_CASE("einsum paths: optimal joins disconnected parts by outer products", "[einsum]") {
    const Runtime rt = einsum_runtime();
    std::mt19937 gen(12);
    EinsumOptions optimal;
    optimal.optimize = "optimal";
    // Two chains of 9 matrices sharing no label, and a scalar: 19 operands, three parts.
    const std::vector<int64_t> a = chain_dims(gen, 9), b = chain_dims(gen, 9);
    std::vector<Tensor> ops;
    std::vector<std::vector<int64_t>> sublists;
    for (size_t k = 0; k < 9; ++k) {
        ops.push_back(rt.zeros({a[k], a[k + 1]}));
        sublists.push_back({static_cast<int64_t>(k), static_cast<int64_t>(k + 1)});
        ops.push_back(rt.zeros({b[k], b[k + 1]}));
        sublists.push_back({static_cast<int64_t>(100 + k), static_cast<int64_t>(101 + k)});
    }
    ops.push_back(rt.zeros({}));
    sublists.push_back({});
    const std::vector<int64_t> output = {0, 9, 100, 109};
    const EinsumPath p = einsum_path(ops, sublists, output, optimal);
    // Each chain at its optimum; then the smallest two parts meet first: the scalar with the
    // smaller chain result, then that with the other (outer products sum nothing: cost 1x).
    const double small = static_cast<double>(std::min(a[0] * a[9], b[0] * b[9]));
    const double large = static_cast<double>(std::max(a[0] * a[9], b[0] * b[9]));
    CHECK(p.flops == Approx(2 * matrix_chain_optimum(a) + 2 * matrix_chain_optimum(b) + small + small * large).epsilon(1e-12));
}

TEST_CASE("einsum paths: random-greedy is reproducible per seed and never worse than greedy", "[einsum]") {
    const Runtime rt = einsum_runtime();
    for (const auto& inst : instances()) {
        if (inst["num_tensors"].get<int>() < 20) continue;
        const std::string name = inst["name"], subscripts = subscripts_of(inst);
        INFO(name);
        const std::vector<Tensor> ops = operands_of(rt, inst);
        EinsumOptions greedy, random;
        greedy.optimize = "greedy";
        random.optimize = "random-greedy";
        random.repeats = 8;
        random.seed = 3;
        const EinsumPath g = einsum_path(subscripts, ops, greedy);
        const EinsumPath a = einsum_path(subscripts, ops, random);
        CHECK(a.flops <= g.flops);
        // The plan cache would answer the same call from memory: a fresh runtime searches again.
        const Runtime again = einsum_runtime();
        std::vector<Tensor> copies;
        for (const Tensor& t : ops) copies.push_back(again.tensor<double>(t.to_vector<double>(), t.shape()));
        const EinsumPath b = einsum_path(subscripts, copies, random);
        CHECK(a.path == b.path);
    }
}
