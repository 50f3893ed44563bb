// Sliced einsum (memory_limit, slices): values equal the unsliced contraction's, the plan's
// working memory stays under the limit, the path reports what it slices before anything runs,
// and an impossible limit is an error naming the least working memory there is.
#include "instances.hpp"

#include <ferro/gradcheck.hpp>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string_view>

using namespace ferro;
using namespace ferro::test;

namespace {

Tensor random(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed, bool strided = false) {
    std::vector<cd> values;
    return make_operand(rt, shape, dtype, seed, strided, values);
}

EinsumOptions limited(int64_t bytes, int64_t slices = 0) {
    EinsumOptions o;
    o.memory_limit = bytes;
    o.slices = slices;
    return o;
}

double max_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

TEST_CASE("einsum sliced: a chain under a quarter of its working memory", "[einsum]") {
    const Runtime rt = einsum_runtime();
    for (DType dt : {DType::f64, DType::c128}) {
        INFO(dtype_name(dt));
        const std::vector<Tensor> ops = {random(rt, {6, 40}, dt, 1), random(rt, {40, 50}, dt, 2), random(rt, {50, 30, 7}, dt, 3),
                                         random(rt, {7, 6}, dt, 4)};
        const std::string subscripts = "ij,jk,klm,mi->l";
        const EinsumPath whole = einsum_path(subscripts, ops);
        REQUIRE(whole.slices == 1);
        REQUIRE(whole.sliced_labels.empty());
        REQUIRE(whole.working_bytes > 0);
        const auto limit = static_cast<int64_t>(whole.working_bytes / 4);
        const EinsumPath sliced = einsum_path(subscripts, ops, limited(limit));
        INFO("working memory " << whole.working_bytes << " -> " << sliced.working_bytes << " bytes, " << sliced.slices
                               << " slices, overhead " << sliced.slicing_overhead());
        CHECK(sliced.slices > 1);
        CHECK(!sliced.sliced_labels.empty());
        CHECK(sliced.working_bytes <= static_cast<double>(limit));
        CHECK(sliced.sliced_flops >= sliced.flops);
        const Tensor want = einsum(subscripts, ops);
        const Tensor got = einsum(subscripts, ops, limited(limit));
        REQUIRE(got.shape() == want.shape());
        CHECK(max_diff(got, want) <= 1e-12 * want.abs().max().item<double>());
    }
}

namespace {

struct SlicedCase {
    std::string subscripts;
    std::vector<Shape> shapes;
    int64_t slices;
    std::vector<DType> dtypes;  // per operand (mixed ones promote)
    bool strided = false;       // operands with reversed strides
};

}  // namespace

TEST_CASE("einsum sliced: output labels, diagonals, broadcasts, strided and mixed operands", "[einsum]") {
    const Runtime rt = einsum_runtime();
    using enum DType;
    const SlicedCase cases[] = {
        {"ij,jk->ik", {{8, 9}, {9, 10}}, 4, {f64, f64}},
        {"ij,jk->ik", {{8, 9}, {9, 10}}, 90, {c128, c128}},  // beyond one label: two sliced
        {"ii,ij->j", {{6, 6}, {6, 5}}, 3, {f64, f64}},       // a diagonal sliced
        {"ij,ij->j", {{1, 7}, {5, 7}}, 5, {f64, f64}},       // a size-1 axis broadcasts
        {"bij,bjk->bik", {{3, 4, 5}, {3, 5, 2}}, 6, {c128, c128}, true},
        {"ij,jk,kl->il", {{5, 6}, {6, 7}, {7, 4}}, 12, {f32, f64, f64}},
        {"...ij,...jk->...ik", {{2, 3, 4}, {1, 4, 5}}, 4, {f64, f64}},
        {"ij,jk,kl,lm->", {{3, 4}, {4, 5}, {5, 4}, {4, 3}}, 20, {c64, c128, c128, f64}},
        {"i,j->ij", {{6}, {7}}, 6, {f64, f64}},  // no label summed
        {"ij->", {{8, 6}}, 4, {f64}},            // a reduction: slices add through the accumulator
        {"ii->", {{7, 7}}, 3, {c128}},           // a trace, likewise
        {"ij,jk->i", {{5, 6}, {6, 4}}, 4, {f64, f64}},
    };
    for (const SlicedCase& c : cases) {
        INFO(c.subscripts << ", at least " << c.slices << " slices");
        std::vector<Tensor> ops;
        uint32_t seed = 10;
        for (size_t k = 0; k < c.shapes.size(); ++k) ops.push_back(random(rt, c.shapes[k], c.dtypes[k], seed++, c.strided));
        const EinsumPath p = einsum_path(c.subscripts, ops, limited(0, c.slices));
        CHECK(p.slices >= c.slices);
        CHECK(!p.sliced_labels.empty());
        for (int64_t key : p.sliced_labels) {  // the label as written, or -1 - j for axis j of `...`
            CHECK((key < 0 ? -1 - key < 3 : c.subscripts.find(static_cast<char>(key)) != std::string::npos));
        }
        const Tensor want = einsum(c.subscripts, ops);
        const Tensor got = einsum(c.subscripts, ops, limited(0, c.slices));
        REQUIRE(got.shape() == want.shape());
        CHECK(got.dtype() == want.dtype());
        const double tolerance = is_single(got.dtype()) ? 1e-5 : 1e-12;
        CHECK(max_diff(got, want) <= tolerance * want.abs().max().item<double>());
    }
}

namespace {

struct SliceLog {
    std::mutex mutex;
    std::vector<std::string> lines;
};
void keep_slice_lines(void* user, uint32_t, const char*, const char* message) {
    auto& log = *static_cast<SliceLog*>(user);
    const std::lock_guard lock(log.mutex);
    if (std::string_view(message).find(" slices") != std::string_view::npos) log.lines.emplace_back(message);
}

}  // namespace

TEST_CASE("einsum sliced: small slices run on the engine's threads at once, as they would one by one", "[einsum]") {
    // Two threads whatever the machine (the engine reads FERRO_CPU_THREADS when the runtime
    // starts; ctest runs each case in its own process). Slices of output labels go to workers
    // whole parts at a time; slices of summed labels share the output through accumulators;
    // under a limit, as many workers as fit.
    ::setenv("FERRO_CPU_THREADS", "2", 1);
    SliceLog log;
    const Runtime rt = einsum_runtime_logging(FERRO_LOG_DEBUG, keep_slice_lines, &log);
    struct Parallel {
        std::string subscripts;
        std::vector<Shape> shapes;
        int64_t slices, limit_fraction;  // the limit: the unsliced working memory over this (0: none)
        bool at_once;                    // whether two workers fit
        const char* what;
    };
    const Shape ring[] = {{9, 8, 7}, {8, 7, 9}, {7, 9, 8}, {9, 8, 9}};
    const Parallel cases[] = {
        {"ij,jk->ik", {{24, 16}, {16, 20}}, 6, 0, true, "output labels sliced: parts per worker"},
        {"ij,jk,kl->", {{12, 16}, {16, 20}, {20, 12}}, 8, 0, true, "summed labels sliced: an accumulator per worker"},
        {"abc,bcd,cde,dea->ae", {ring, ring + 4}, 16, 1, true, "both, under a limit two workers fit in"},
        {"abc,bcd,cde,dea->ae", {ring, ring + 4}, 0, 2, false, "under a limit one worker fills: one slice at a time"},
    };
    for (const Parallel& c : cases) {
        for (DType dt : {DType::f64, DType::c128}) {
            INFO(c.what << ", " << dtype_name(dt));
            std::vector<Tensor> ops;
            for (size_t k = 0; k < c.shapes.size(); ++k)
                ops.push_back(random(rt, c.shapes[k], dt, 70 + static_cast<uint32_t>(k)));
            {
                const std::lock_guard lock(log.mutex);
                log.lines.clear();
            }
            const EinsumOptions options = limited(
                c.limit_fraction > 0 ? static_cast<int64_t>(einsum_path(c.subscripts, ops).working_bytes) / c.limit_fraction : 0,
                c.slices);
            const uint64_t before = rt.engine_memory().live_bytes;
            rt.reset_engine_memory_peak();
            const Tensor got = einsum(c.subscripts, ops, options);
            const uint64_t peak = rt.engine_memory().peak_bytes;
            const Tensor want = einsum(c.subscripts, ops);
            CHECK(max_diff(got, want) <= 1e-12 * (1 + want.abs().max().item<double>()));
            {
                const std::lock_guard lock(log.mutex);
                REQUIRE(log.lines.size() == 1);
                INFO(log.lines[0]);
                CHECK((log.lines[0].find(", 2 at once") != std::string::npos) == c.at_once);
            }
            if (options.memory_limit > 0) {
                const auto output = static_cast<uint64_t>(got.numel()) * (is_complex(dt) ? 16 : 8);
                CHECK(peak - before <= output + static_cast<uint64_t>(options.memory_limit));
            }
        }
    }
}

TEST_CASE("einsum sliced: sublists report sliced labels by their integers", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const std::vector<Tensor> ops = {random(rt, {4, 30}, DType::f64, 1), random(rt, {30, 5}, DType::f64, 2)};
    const EinsumPath p = einsum_path(ops, {{7, 42}, {42, 9}}, {7, 9}, limited(0, 30));
    REQUIRE(p.slices >= 30);
    for (int64_t key : p.sliced_labels) CHECK((key == 7 || key == 42 || key == 9));
    const Tensor got = einsum(ops, {{7, 42}, {42, 9}}, {7, 9}, limited(0, 30));
    CHECK(max_diff(got, einsum("ij,jk->ik", ops)) <= 1e-12);
}

TEST_CASE("einsum sliced: a limit below the least working memory is an error naming it", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const std::vector<Tensor> ops = {random(rt, {6, 40}, DType::f64, 1), random(rt, {40, 50}, DType::f64, 2),
                                     random(rt, {50, 30, 7}, DType::f64, 3), random(rt, {7, 6}, DType::f64, 4)};
    const auto message = [&](const EinsumOptions& o) {
        try {
            einsum("ij,jk,klm,mi->l", ops, o);
        } catch (const Error& e) {
            CHECK(e.code() == FERRO_INVALID_ARGUMENT);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string m = message(limited(8));
    INFO(m);
    CHECK(m.find("einsum: memory_limit 8 bytes is below the least working memory found for this contraction: ") !=
          std::string::npos);
    CHECK(m.find(" unsliced; at most 4294967296 slices)") != std::string::npos);
    // 6 * 40 * 50 * 30 * 7 index combinations in all.
    CHECK_THAT(message(limited(0, 2520001)),
               Catch::Contains("slices 2520001 is more than the contraction can be cut into: 2520000 at most"));
    CHECK_THAT(message(limited(-1)), Catch::Contains("memory_limit must be >= 0 bytes, got -1"));
    CHECK_THAT(message(limited(0, -2)), Catch::Contains("slices must be >= 0, got -2"));
    try {
        einsum_path("ij,jk,klm,mi->l", ops, limited(8));
        FAIL("einsum_path took an impossible limit");
    } catch (const Error& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("is below the least working memory"));
    }
}

namespace {

// Bytes the cpu engine counts for a tensor's data (the host keeps those of up to 256 bytes in
// the tensor's own allocation, uncounted).
uint64_t counted_bytes(const Tensor& t) {
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * (FERRO_DTYPE_BITS(static_cast<ferro_dtype>(t.dtype())) / 8);
    return bytes > 256 ? bytes : 0;
}

}  // namespace

// Limits no slicing of the reference path reaches within kMaxSlices: a chain's working memory is many
// intermediates alive at once, each carrying labels of its own, so every one needs a label of
// its own sliced and the slices multiply (docs/einsum.md, "Slicing").
const std::set<std::pair<std::string, int64_t>> unreachable = {
    {"str_matrix_chain_multiplication_100", 16},
    {"str_mps_varying_inner_product_200", 4},
    {"str_mps_varying_inner_product_200", 16},
};

// The ASan preset is a debug build: there the slicer's search over the networks of 160-415
// operands took ten minutes, and the largest products a minute. The release run covers them,
// the sanitized one the rest.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMostOperands = 128;
constexpr double kMostFlops = 4e7;
#else
constexpr size_t kMostOperands = 1000;
constexpr double kMostFlops = 2e8;
#endif

TEST_CASE("einsum sliced: the shared instances under 1/4 and 1/16 of their working memory", "[einsum]") {
    const Runtime rt = einsum_runtime();
    for (const auto& inst : instances()) {
        const std::string name = inst["name"], subscripts = subscripts_of(inst);
        if (inst["shapes"].size() > kMostOperands) continue;
        for (DType dt : {DType::f64, DType::c128}) {
            const std::vector<Tensor> ops = operands_of(rt, inst, dt);
            const EinsumOptions reference = reference_path(inst);  // the path search is tested elsewhere
            const EinsumPath whole = einsum_path(subscripts, ops, reference);
            if (whole.working_bytes == 0) continue;  // nothing held but the output: nothing to slice
            // Run where unsliced and sliced fit the suite's time; in f64 the plan is checked everywhere.
            const double budget = dt == DType::f64 ? 5e8 : 2e8;
            if (dt == DType::c128 && whole.flops > budget) continue;
            const Tensor want = whole.flops <= budget ? einsum(subscripts, ops, reference) : Tensor();
            for (int64_t part : {4, 16}) {
                EinsumOptions o = reference;
                o.memory_limit = static_cast<int64_t>(whole.working_bytes) / part;
                const int64_t limit = o.memory_limit;
                INFO(name << " " << dtype_name(dt) << ", limit 1/" << part << " of " << whole.working_bytes << " bytes");
                if (unreachable.count({name, part}) != 0) {
                    CHECK_THROWS_WITH(einsum_path(subscripts, ops, o),
                                      Catch::Contains("is below the least working memory found for this contraction"));
                    continue;
                }
                const EinsumPath p = einsum_path(subscripts, ops, o);
                INFO(p.slices << " slices, working memory " << p.working_bytes << ", flop overhead " << p.slicing_overhead());
                CHECK(p.working_bytes <= static_cast<double>(limit));
                if (whole.flops > budget || p.sliced_flops > budget) continue;
                const uint64_t before = rt.engine_memory().live_bytes;
                rt.reset_engine_memory_peak();
                const Tensor got = einsum(subscripts, ops, o);
                const uint64_t peak = rt.engine_memory().peak_bytes;
                INFO("peak " << peak << " bytes, " << before << " live before");
                CHECK(peak <= before + counted_bytes(got) + static_cast<uint64_t>(limit));
                REQUIRE(got.shape() == want.shape());
                CHECK(max_diff(got, want) <= 1e-10 * want.abs().max().item<double>());
            }
        }
    }
}

TEST_CASE("einsum sliced: gradients through sliced contractions equal the unsliced ones", "[einsum]") {
    const Runtime rt = einsum_runtime();
    // An MPS overlap with a diagonal and a broadcast axis: unsliced, its VJP walks the
    // contraction tree; under a limit each cotangent is one einsum under the same limit.
    const std::string subscripts = "pa,aqb,brrc,cs,px,xqy,yrz,zt->st";
    const std::vector<Shape> shapes = {{3, 6}, {6, 4, 5}, {5, 3, 3, 6}, {6, 3}, {3, 6}, {6, 1, 5}, {5, 3, 6}, {6, 3}};
    for (DType dt : {DType::f64, DType::c128}) {
        INFO(dtype_name(dt));
        std::vector<Tensor> inputs, tangents;
        uint32_t seed = 70;
        for (const Shape& s : shapes) {
            inputs.push_back(random(rt, s, dt, seed++));
            tangents.push_back(random(rt, s, dt, seed++));
        }
        const Tensor weight = random(rt, {3, 3}, dt, 99);
        const int64_t limit = static_cast<int64_t>(einsum_path(subscripts, inputs).working_bytes / 4);
        REQUIRE(einsum_path(subscripts, inputs, limited(limit)).slices > 1);
        const std::vector<size_t> all = all_of(inputs);
        const std::vector<Tensor> want = einsum_cotangents(subscripts, inputs, weight, all),
                                  got = einsum_cotangents(subscripts, inputs, weight, all, limited(limit));
        for (size_t i = 0; i < inputs.size(); ++i) {
            INFO("operand " << i);
            check_close(values_of(got[i]), values_of(want[i]), 1e-12, 1e-12);
        }
        check_close(values_of(einsum_tangent(subscripts, inputs, tangents, all, limited(limit))),
                    values_of(einsum_tangent(subscripts, inputs, tangents, all)), 1e-12, 1e-12);
    }
}

TEST_CASE("einsum sliced: gradcheck of sliced contractions, first and second order", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const std::string subscripts = "ij,jkl,lm->ikm";
    for (DType dt : {DType::f64, DType::c128}) {
        INFO(dtype_name(dt));
        std::vector<Tensor> inputs = {random(rt, {3, 4}, dt, 1), random(rt, {4, 5, 3}, dt, 2), random(rt, {3, 2}, dt, 3)};
        const EinsumOptions o = limited(0, 6);
        const auto f = [&](const std::vector<Tensor>& x) { return std::vector{einsum(subscripts, x, o)}; };
        const GradcheckResult first = gradcheck(f, inputs);
        INFO(first.report);
        CHECK(first.ok);
        // Second order: f(A) = Re sum (A A^T A A^T)^2 elementwise, both einsums sliced; the
        // Hessian applied to V, projected on W, against central differences of the gradient.
        const auto loss = [&](const Tensor& x) {
            const Tensor g = einsum("ij,kj,kl,ml->im", {x, x, x, x}, limited(0, 4));
            return einsum("ik,ik->", {g, g}, limited(0, 3)).real();
        };
        check_second_order(loss, random(rt, {3, 3}, dt, 5), random(rt, {3, 3}, dt, 6), random(rt, {3, 3}, dt, 7), 1e-6);
    }
}

TEST_CASE("einsum sliced: the backward's working memory stays under the limit", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const std::string subscripts = "ij,jk,klm,mi->l";
    std::vector<Tensor> leaves = {random(rt, {6, 40}, DType::f64, 1), random(rt, {40, 50}, DType::f64, 2),
                                  random(rt, {50, 30, 7}, DType::f64, 3), random(rt, {7, 6}, DType::f64, 4)};
    for (Tensor& x : leaves) x.set_requires_grad();
    const int64_t limit = static_cast<int64_t>(einsum_path(subscripts, leaves).working_bytes / 4);
    const Tensor loss = einsum(subscripts, leaves, limited(limit)).sum();
    const uint64_t before = rt.engine_memory().live_bytes;
    rt.reset_engine_memory_peak();
    loss.backward();
    const uint64_t peak = rt.engine_memory().peak_bytes;
    uint64_t gradients = 0;
    for (const Tensor& x : leaves) gradients += counted_bytes(x.grad());
    INFO("peak " << peak << ", before " << before << ", gradients " << gradients << ", limit " << limit);
    // The cotangents themselves, and one einsum's working memory at a time.
    CHECK(peak <= before + gradients + static_cast<uint64_t>(limit));
}

TEST_CASE("einsum sliced: the shared instances of 2 and 3 operands in 4 slices, values and gradients", "[einsum]") {
    // Their working memory is nothing or little (a product writes the output directly): a slice
    // count asks for slicing instead. Gradients: each operand's cotangent, sliced and not.
    const Runtime rt = einsum_runtime();
    const EinsumOptions four = limited(0, 4);
    int checked = 0;
    for (const auto& inst : instances()) {
        const std::string name = inst["name"], subscripts = subscripts_of(inst);
        if (inst["shapes"].size() > 3) continue;
        for (DType dt : {DType::f64, DType::c128}) {
            const std::vector<Tensor> ops = operands_of(rt, inst, dt);
            if (einsum_path(subscripts, ops).flops > (dt == DType::f64 ? kMostFlops : kMostFlops / 4)) continue;
            INFO(name << " " << dtype_name(dt));
            CHECK(einsum_path(subscripts, ops, four).slices >= 4);
            const Tensor want = einsum(subscripts, ops);
            const Tensor weight = random(rt, want.shape(), dt, 5);
            CHECK(max_diff(einsum(subscripts, ops, four), want) <= 1e-12 * want.abs().max().item<double>());
            const std::vector<size_t> all = all_of(ops);
            const std::vector<Tensor> g_want = einsum_cotangents(subscripts, ops, weight, all),
                                      g_got = einsum_cotangents(subscripts, ops, weight, all, four);
            for (size_t i = 0; i < ops.size(); ++i) {
                INFO("operand " << i);
                CHECK(max_diff(g_got[i], g_want[i]) <= 1e-12 * g_want[i].abs().max().item<double>());
            }
            ++checked;
        }
    }
    CHECK(checked >= 8);
}
