// The cpu engine's elementwise, reduction and copy kernels, its thread pool and its native
// context.
#include "cpu_fixture.hpp"

#include <ferro/cpu_context.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <numeric>
#include <random>
#include <thread>

using namespace ferro::test;

TEST_CASE("cpu: copy_strided handles negative and zero strides", "[cpu]") {
    CpuEngine engine;
    std::vector<double> in = {0, 1, 2, 3, 4, 5}, out(6);
    const std::vector<int64_t> shape = {2, 3}, rev = {-3, -1}, dense = {3, 1};
    // A view starting at the last element, walking backwards.
    ferro_copy_args c{sizeof c, 0, view(in, FERRO_DTYPE_F64, shape, rev, 5), view(out, FERRO_DTYPE_F64, shape, dense)};
    REQUIRE(engine.f().copy_strided(engine.inst.self, nullptr, &c) == nullptr);
    CHECK(out == std::vector<double>{5, 4, 3, 2, 1, 0});
    const std::vector<int64_t> bcast = {0, 1};
    c.in = view(in, FERRO_DTYPE_F64, shape, bcast);
    REQUIRE(engine.f().copy_strided(engine.inst.self, nullptr, &c) == nullptr);
    CHECK(out == std::vector<double>{0, 1, 2, 0, 1, 2});
}

namespace {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> strides(shape.size());
    int64_t st = 1;
    for (size_t k = shape.size(); k-- > 0;) {
        strides[k] = st;
        st *= shape[k];
    }
    return strides;
}

// Strides of `shape` for a tensor stored row-major with its axes in `order` (stored axis j is
// axis order[j]): a permuted layout of the same elements.
std::vector<int64_t> permuted_strides(const std::vector<int64_t>& shape, const std::vector<size_t>& order) {
    std::vector<int64_t> strides(shape.size());
    int64_t n = 1;
    for (size_t j = order.size(); j-- > 0;) {
        strides[order[j]] = n;
        n *= shape[order[j]];
    }
    return strides;
}

std::vector<double> numbered(int64_t n, double from) {
    std::vector<double> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), from);
    return v;
}

// The element-by-element reference walk: visit(e, offset) for every multi-index of `shape` in
// row-major order, e its linear index and offset(strides) its element offset under `strides`.
template <class Visit> void for_each_index(const std::vector<int64_t>& shape, Visit visit) {
    std::vector<int64_t> index(shape.size(), 0);
    const auto offset = [&](const std::vector<int64_t>& strides) {
        int64_t at = 0;
        for (size_t k = 0; k < shape.size(); ++k) at += index[k] * strides[k];
        return static_cast<size_t>(at);
    };
    const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    for (int64_t e = 0; e < n; ++e) {
        visit(static_cast<size_t>(e), offset);
        for (size_t k = shape.size(); k-- > 0;) {
            if (++index[k] < shape[k]) break;
            index[k] = 0;
        }
    }
}

// Copies `in` (shape, in_strides, from element `in_offset`) into a row-major output whose axes
// are the input's permuted by `order` (out axis j is input axis order[j]), and counts the
// elements that differ from an element-by-element walk.
template <class T>
int64_t wrong_after_permute(CpuEngine& engine, ferro_dtype dtype, const std::vector<T>& in, const std::vector<int64_t>& shape,
                            const std::vector<int64_t>& in_strides, int64_t in_offset, const std::vector<size_t>& order) {
    const std::vector<int64_t> out_strides = permuted_strides(shape, order);  // the output view, in the input's axis order
    const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    std::vector<T> input = in, out(static_cast<size_t>(n));
    ferro_copy_args c{sizeof c, 0, view(input, dtype, shape, in_strides, in_offset), view(out, dtype, shape, out_strides)};
    REQUIRE(engine.f().copy_strided(engine.inst.self, nullptr, &c) == nullptr);
    int64_t wrong = 0;
    for_each_index(shape, [&](size_t, const auto& offset) {
        wrong += !(out[offset(out_strides)] == in[static_cast<size_t>(in_offset) + offset(in_strides)]);
    });
    return wrong;
}

}  // namespace

TEST_CASE("cpu: copy_strided permutes (tiled transposes) every axis order of a 4-d tensor", "[cpu]") {
    CpuEngine engine;
    // Sizes on and off the 32-element tiles and the 2 x 2 (16-byte), 4 x 4 (8-byte) and 8 x 8
    // (4-byte) register blocks of the AVX2 tile copies, in each element size they take.
    const std::vector<int64_t> shape = {5, 37, 3, 70};
    std::vector<double> in(5 * 37 * 3 * 70);
    std::iota(in.begin(), in.end(), 0.0);
    const std::vector<float> in32(in.begin(), in.end());
    std::vector<std::complex<double>> in128;
    for (double x : in) in128.emplace_back(x, -0.5 * x);
    std::vector<size_t> order = {0, 1, 2, 3};
    do {
        INFO("axes " << order[0] << order[1] << order[2] << order[3]);
        CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, shape, row_major_strides(shape), 0, order) == 0);
        CHECK(wrong_after_permute(engine, FERRO_DTYPE_F32, in32, shape, row_major_strides(shape), 0, order) == 0);
        CHECK(wrong_after_permute(engine, FERRO_DTYPE_C128, in128, shape, row_major_strides(shape), 0, order) == 0);
    } while (std::next_permutation(order.begin(), order.end()));
}

TEST_CASE("cpu: copy_strided transposes of small tiles (4 x 4, 4 x 8), taken by tiles of nested axes, are exact", "[cpu]") {
    CpuEngine engine;
    // brackets' permute (dense blocks of 4^4 spread over a long axis), on the calling thread
    // and on the pool's path (2^17 elements and more), and batched transposes of 4 x 4 and
    // 4 x 8 blocks either way round.
    struct Case {
        std::vector<int64_t> shape;
        std::vector<size_t> order;
    };
    const std::vector<Case> cases = {{{300, 4, 4, 4, 4}, {4, 1, 2, 0, 3}},
                                     {{1996, 4, 4, 4, 4}, {4, 1, 2, 0, 3}},
                                     {{3000, 4, 4}, {0, 2, 1}},
                                     {{9000, 4, 8}, {0, 2, 1}},
                                     {{9000, 8, 4}, {0, 2, 1}}};
    for (const Case& c : cases) {
        const int64_t n = std::accumulate(c.shape.begin(), c.shape.end(), int64_t{1}, std::multiplies<>());
        const std::vector<double> in = numbered(n, 1.0);
        INFO("shape [" << c.shape[0] << ", ...] of " << c.shape.size() << " axes");
        CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, c.shape, row_major_strides(c.shape), 0, c.order) == 0);
    }
}

TEST_CASE("cpu: copy_strided permutes of many short axes (tiles of nested axes) match an element-by-element walk", "[cpu]") {
    CpuEngine engine;
    std::mt19937 rng(7);
    const std::vector<std::vector<int64_t>> shapes = {
        std::vector<int64_t>(14, 2),                             // einsum's binary networks
        {2, 3, 2, 5, 2, 2, 4, 2, 3, 2},                          // mixed short axes
        {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},  // 2^18: the pool's path
        {3, 2, 2, 7, 2, 2, 2, 2, 2, 9},                          // a run longer than a cache line in both
    };
    for (const auto& shape : shapes) {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        const std::vector<double> in = numbered(n, 1.0);
        std::vector<size_t> order(shape.size());
        for (int trial = 0; trial < 6; ++trial) {
            std::iota(order.begin(), order.end(), size_t{0});
            // Trial 0 keeps the last axis last (a run dense on both sides), 1 reverses all.
            if (trial == 1) std::reverse(order.begin(), order.end());
            if (trial > 1) std::shuffle(order.begin(), order.end(), rng);
            if (trial == 0) std::shuffle(order.begin(), order.end() - 1, rng);
            INFO("shape of " << shape.size() << " axes, trial " << trial);
            CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, shape, row_major_strides(shape), 0, order) == 0);
        }
    }
    // Element sizes 4 and 16, a reversed (negative-stride) input and a broadcast axis.
    const std::vector<int64_t> shape(12, 2);
    std::vector<size_t> order(12);
    std::iota(order.begin(), order.end(), size_t{0});
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<float> f(4096);
    std::iota(f.begin(), f.end(), 1.0f);
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F32, f, shape, row_major_strides(shape), 0, order) == 0);
    std::vector<std::complex<double>> z(4096);
    for (size_t i = 0; i < z.size(); ++i) z[i] = {static_cast<double>(i), -static_cast<double>(i)};
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_C128, z, shape, row_major_strides(shape), 0, order) == 0);
    std::vector<int64_t> reversed = row_major_strides(shape);
    for (int64_t& st : reversed) st = -st;
    const std::vector<double> in = numbered(4096, 1.0);
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, shape, reversed, 4095, order) == 0);
    std::vector<int64_t> broadcast = row_major_strides(shape);
    broadcast[5] = 0;  // axis 5 reads one element twice
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, shape, broadcast, 0, order) == 0);
}

TEST_CASE("cpu: copy_strided permutes that keep a run of a cache line or more (tiles of runs) match an element-by-element walk",
          "[cpu]") {
    CpuEngine engine;
    std::mt19937 rng(11);
    // gm_queen's shape: axes of 3, the last `kept` of them a run dense on both sides (27 doubles:
    // 216 bytes); 3^11 elements take the pool's path. Then runs of exactly a cache line (8
    // doubles, 4 complex), and one of 4 KiB, which is left to the run-by-run copy.
    struct Case {
        std::vector<int64_t> shape;
        size_t kept;
    };
    const std::vector<Case> cases = {
        {std::vector<int64_t>(11, 3), 3}, {std::vector<int64_t>(7, 3), 3}, {{2, 3, 2, 4, 2, 3, 8}, 1}, {{3, 2, 5, 2, 512}, 1}};
    for (const Case& c : cases) {
        const size_t nd = c.shape.size();
        const int64_t n = std::accumulate(c.shape.begin(), c.shape.end(), int64_t{1}, std::multiplies<>());
        std::vector<double> in(static_cast<size_t>(n));
        std::iota(in.begin(), in.end(), 1.0);
        std::vector<size_t> order(nd);
        for (int trial = 0; trial < 4; ++trial) {
            std::iota(order.begin(), order.end(), size_t{0});
            if (trial == 0) std::reverse(order.begin(), order.end() - static_cast<std::ptrdiff_t>(c.kept));
            else std::shuffle(order.begin(), order.end() - static_cast<std::ptrdiff_t>(c.kept), rng);
            INFO("shape of " << nd << " axes, the last " << c.kept << " kept, trial " << trial);
            CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, c.shape, row_major_strides(c.shape), 0, order) == 0);
        }
    }
    const std::vector<int64_t> shape = {2, 3, 2, 2, 3, 4};  // c128 runs of 4: 64 bytes
    std::vector<std::complex<double>> z(288);
    for (size_t i = 0; i < z.size(); ++i) z[i] = {static_cast<double>(i), 0.5 - static_cast<double>(i)};
    const std::vector<size_t> order = {3, 0, 4, 2, 1, 5};
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_C128, z, shape, row_major_strides(shape), 0, order) == 0);
}

namespace {

// Runs binary `op` on a and b, viewed over `shape` with their strides, into a row-major
// output, and counts the elements that differ from expect(a, b) taken element by element.
template <class T, class Out, class Expect>
int64_t wrong_after_binary(CpuEngine& engine, ferro_dtype dtype, ferro_dtype out_dtype, ferro_binary_op op, std::vector<T>& a,
                           const std::vector<int64_t>& a_strides, std::vector<T>& b, const std::vector<int64_t>& b_strides,
                           const std::vector<int64_t>& shape, Expect expect) {
    const std::vector<int64_t> out_strides = row_major_strides(shape);
    const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    std::vector<Out> out(static_cast<size_t>(n));
    ferro_binary_args args{sizeof args, static_cast<uint32_t>(op), view(a, dtype, shape, a_strides),
                           view(b, dtype, shape, b_strides), view(out, out_dtype, shape, out_strides)};
    REQUIRE(engine.f().binary(engine.inst.self, nullptr, &args) == nullptr);
    int64_t wrong = 0;
    for_each_index(
        shape, [&](size_t e, const auto& offset) { wrong += !(out[e] == expect(a[offset(a_strides)], b[offset(b_strides)])); });
    return wrong;
}

}  // namespace

TEST_CASE("cpu: binary ops on operands laid out in different orders (tiled walks) match an element-by-element walk", "[cpu]") {
    CpuEngine engine;
    std::mt19937 rng(5);
    const auto minus = [](double x, double y) { return x - y; };  // not symmetric: a and b cannot trade places
    // gm_queen's products: 3^12 elements, b permuted; trial 0 keeps b's last 3 axes last (rows
    // of 27 doubles dense in all three), the others shuffle every axis. Then a broadcast along
    // half its axes, and a small a (9 elements, which needs no block of its own).
    const std::vector<int64_t> shape(12, 3);
    const int64_t n = 531441;
    std::vector<double> a = numbered(n, 1.0), b = numbered(n, 0.25);
    std::vector<size_t> order(shape.size());
    for (int trial = 0; trial < 4; ++trial) {
        std::iota(order.begin(), order.end(), size_t{0});
        std::shuffle(order.begin(), order.end() - (trial == 0 ? 3 : 0), rng);
        const std::vector<int64_t> b_strides = permuted_strides(shape, order);
        INFO("trial " << trial);
        CHECK(wrong_after_binary<double, double>(engine, FERRO_DTYPE_F64, FERRO_DTYPE_F64, FERRO_BINARY_SUB, a,
                                                 row_major_strides(shape), b, b_strides, shape, minus) == 0);
        std::vector<int64_t> broadcast = row_major_strides(shape);
        for (size_t k = 0; k < shape.size(); k += 2) broadcast[k] = 0;
        CHECK(wrong_after_binary<double, double>(engine, FERRO_DTYPE_F64, FERRO_DTYPE_F64, FERRO_BINARY_SUB, a, broadcast, b,
                                                 b_strides, shape, minus) == 0);
        std::vector<int64_t> small(shape.size(), 0);
        small[order[0]] = 3;
        small[order.back()] = 1;
        CHECK(wrong_after_binary<double, double>(engine, FERRO_DTYPE_F64, FERRO_DTYPE_F64, FERRO_BINARY_SUB, a, small, b,
                                                 b_strides, shape, minus) == 0);
    }
    // Output rows of 4 KiB or more read at a stride (a piece of the row is the unit), and an
    // axis of 2187 too long for the tile (its first 9, then 3 of the rest, go in). 3^10
    // elements: smaller products take the plain walk.
    std::vector<double> x = numbered(59049, 2.0), y = numbered(59049, -1.0);
    CHECK(wrong_after_binary<double, double>(engine, FERRO_DTYPE_F64, FERRO_DTYPE_F64, FERRO_BINARY_SUB, x, {1, 0}, y, {1, 9},
                                             {9, 6561}, minus) == 0);
    CHECK(wrong_after_binary<double, double>(engine, FERRO_DTYPE_F64, FERRO_DTYPE_F64, FERRO_BINARY_SUB, x, {3, 1, 0, 0}, y,
                                             {19683, 3, 9, 1}, {3, 3, 2187, 3}, minus) == 0);
    CHECK(wrong_after_binary<double, double>(engine, FERRO_DTYPE_F64, FERRO_DTYPE_F64, FERRO_BINARY_SUB, x, {2187, 1}, y, {1, 27},
                                             {27, 2187}, minus) == 0);
    // Element sizes 4 and 16, and a comparison (a one-byte output).
    std::shuffle(order.begin(), order.end(), rng);
    const std::vector<int64_t> b_strides = permuted_strides(shape, order);
    std::vector<float> f(static_cast<size_t>(n)), g(static_cast<size_t>(n));
    std::iota(f.begin(), f.end(), 1.0f);
    std::iota(g.rbegin(), g.rend(), 1.0f);
    CHECK(wrong_after_binary<float, float>(engine, FERRO_DTYPE_F32, FERRO_DTYPE_F32, FERRO_BINARY_SUB, f,
                                           row_major_strides(shape), g, b_strides, shape,
                                           [](float p, float q) { return p - q; }) == 0);
    CHECK(wrong_after_binary<float, uint8_t>(engine, FERRO_DTYPE_F32, FERRO_DTYPE_BOOL, FERRO_BINARY_LT, f,
                                             row_major_strides(shape), g, b_strides, shape,
                                             [](float p, float q) { return uint8_t{p < q}; }) == 0);
    using C = std::complex<double>;
    std::vector<C> z(static_cast<size_t>(n)), w(static_cast<size_t>(n));
    for (size_t i = 0; i < z.size(); ++i) {
        z[i] = {static_cast<double>(i), 0.5};
        w[i] = {1.0, -static_cast<double>(i)};
    }
    CHECK(wrong_after_binary<C, C>(engine, FERRO_DTYPE_C128, FERRO_DTYPE_C128, FERRO_BINARY_MUL, z, row_major_strides(shape), w,
                                   b_strides, shape, [](C p, C q) { return p * q; }) == 0);
}

TEST_CASE("cpu: unary ops and casts of permuted inputs (tiled walks) match an element-by-element walk", "[cpu]") {
    CpuEngine engine;
    std::mt19937 rng(9);
    // Runs `op` (or a cast to f32 when op < 0) on `in` viewed over `shape` with `strides`, into a
    // row-major output, and counts the elements that differ from expect(in) element by element.
    const auto wrong_after = [&](int op, std::vector<double>& in, const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& strides, auto expect) {
        using Out = decltype(expect(0.0));
        const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
        std::vector<Out> out(static_cast<size_t>(n));
        const std::vector<int64_t> out_strides = row_major_strides(shape);
        const ferro_dtype out_dtype = std::is_same_v<Out, float> ? FERRO_DTYPE_F32 : FERRO_DTYPE_F64;
        if (op < 0) {
            ferro_cast_args c{sizeof c, 0, view(in, FERRO_DTYPE_F64, shape, strides), view(out, out_dtype, shape, out_strides)};
            REQUIRE(engine.f().cast(engine.inst.self, nullptr, &c) == nullptr);
        } else {
            ferro_unary_args u{sizeof u, static_cast<uint32_t>(op), view(in, FERRO_DTYPE_F64, shape, strides),
                               view(out, out_dtype, shape, out_strides)};
            REQUIRE(engine.f().unary(engine.inst.self, nullptr, &u) == nullptr);
        }
        int64_t wrong = 0;
        for_each_index(shape, [&](size_t e, const auto& offset) { wrong += !(out[e] == expect(in[offset(strides)])); });
        return wrong;
    };
    const auto negate = [](double v) { return -v; };
    const auto to_f32 = [](double v) { return static_cast<float>(v); };
    const std::vector<int64_t> shape(12, 3);
    std::vector<double> in = numbered(531441, 0.125);
    std::vector<size_t> order(shape.size());
    for (int trial = 0; trial < 3; ++trial) {  // trial 0 keeps the last 3 axes last: rows of 27
        std::iota(order.begin(), order.end(), size_t{0});
        std::shuffle(order.begin(), order.end() - (trial == 0 ? 3 : 0), rng);
        INFO("trial " << trial);
        CHECK(wrong_after(FERRO_UNARY_NEG, in, shape, permuted_strides(shape, order), negate) == 0);
        CHECK(wrong_after(-1, in, shape, permuted_strides(shape, order), to_f32) == 0);
    }
    // Output rows of 4 KiB or more read at a stride of 9: pieces of rows are the units.
    std::vector<double> x = numbered(59049, 1.5);
    CHECK(wrong_after(FERRO_UNARY_NEG, x, {9, 6561}, {1, 9}, negate) == 0);
}

TEST_CASE("cpu: copy_strided permutes that split an axis too long for the tile match an element-by-element walk", "[cpu]") {
    CpuEngine engine;
    // Output rows of 6561 doubles read at a stride of 3 (a piece of the row is the unit), and an
    // axis of 2187 too long for the tile (its first 9, then 3 of the rest, go in).
    const std::vector<double> in = numbered(59049, 1.0);
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, {3, 6561}, {1, 3}, 0, {0, 1}) == 0);
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, {3, 3, 2187, 3}, {19683, 3, 9, 1}, 0, {0, 1, 2, 3}) == 0);
    // An empty axis: nothing to walk, and no tiler divides by it.
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, {5, 0, 7}, {1, 35, 5}, 0, {2, 1, 0}) == 0);
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, {2, 0, 2, 2, 2}, {1, 16, 8, 2, 4}, 0, {4, 1, 0, 3, 2}) == 0);
    CHECK(wrong_after_permute(engine, FERRO_DTYPE_F64, in, {0, 8, 8}, {64, 1, 8}, 0, {0, 1, 2}) == 0);
}

TEST_CASE("cpu: reduce over a middle axis, with NaN propagation for max", "[cpu]") {
    CpuEngine engine;
    std::vector<double> in(24);
    std::iota(in.begin(), in.end(), 0.0);
    in[5] = std::nan("");
    std::vector<double> out(8);
    const std::vector<int64_t> in_shape = {2, 3, 4}, in_strides = {12, 4, 1}, out_shape = {2, 1, 4}, out_strides = {4, 0, 1};
    ferro_reduce_args r{sizeof r, FERRO_REDUCE_SUM, view(in, FERRO_DTYPE_F64, in_shape, in_strides),
                        view(out, FERRO_DTYPE_F64, out_shape, out_strides)};
    REQUIRE(engine.f().reduce(engine.inst.self, nullptr, &r) == nullptr);
    CHECK(out[0] == 0 + 4 + 8);
    CHECK(std::isnan(out[1]));
    CHECK(out[4] == 12 + 16 + 20);
    r.op = FERRO_REDUCE_MAX;
    REQUIRE(engine.f().reduce(engine.inst.self, nullptr, &r) == nullptr);
    CHECK(std::isnan(out[1]));
    CHECK(out[7] == 23);
}

TEST_CASE("cpu: reduce over leading axes onto a contiguous block matches a naive loop", "[cpu]") {
    CpuEngine engine;
    // in [3, 2, 5] reduced over axes 0 and 1 (rows of 5), and a strided input over axis 0.
    std::vector<double> in(30);
    for (size_t i = 0; i < in.size(); ++i) in[i] = std::sin(static_cast<double>(i));
    in[7] = std::nan("");  // column 2: NaN for sum, max and min alike
    std::vector<double> out(5);
    const std::vector<int64_t> in_shape = {3, 2, 5}, in_strides = {10, 5, 1}, out_shape = {1, 1, 5}, out_strides = {5, 5, 1};
    for (uint32_t op :
         {uint32_t{FERRO_REDUCE_SUM}, uint32_t{FERRO_REDUCE_PROD}, uint32_t{FERRO_REDUCE_MAX}, uint32_t{FERRO_REDUCE_MIN}}) {
        ferro_reduce_args r{sizeof r, op, view(in, FERRO_DTYPE_F64, in_shape, in_strides),
                            view(out, FERRO_DTYPE_F64, out_shape, out_strides)};
        REQUIRE(engine.f().reduce(engine.inst.self, nullptr, &r) == nullptr);
        for (size_t j = 0; j < 5; ++j) {
            double want = op == FERRO_REDUCE_PROD  ? 1
                          : op == FERRO_REDUCE_MAX ? -INFINITY
                          : op == FERRO_REDUCE_MIN ? INFINITY
                                                   : 0;
            for (size_t row = 0; row < 6; ++row) {
                const double x = in[row * 5 + j];
                if (op == FERRO_REDUCE_SUM) want += x;
                else if (op == FERRO_REDUCE_PROD) want *= x;
                else if (std::isnan(x) || std::isnan(want)) want = std::nan("");
                else want = op == FERRO_REDUCE_MAX ? std::max(want, x) : std::min(want, x);
            }
            INFO("op " << op << " column " << j);
            if (std::isnan(want)) CHECK(std::isnan(out[j]));
            else CHECK(std::abs(out[j] - want) <= 1e-12 * (1 + std::abs(want)));
        }
    }
    // Rows in reverse order (negative stride over the reduced axis) sum the same.
    const std::vector<int64_t> rev_shape = {6, 5}, rev_strides = {-5, 1}, out2_shape = {1, 5}, out2_strides = {5, 1};
    std::vector<double> dense(30);
    std::iota(dense.begin(), dense.end(), 0.0);
    ferro_reduce_args r{sizeof r, FERRO_REDUCE_SUM, view(dense, FERRO_DTYPE_F64, rev_shape, rev_strides, 25),
                        view(out, FERRO_DTYPE_F64, out2_shape, out2_strides)};
    REQUIRE(engine.f().reduce(engine.inst.self, nullptr, &r) == nullptr);
    CHECK(out == std::vector<double>{75, 81, 87, 93, 99});
}

TEST_CASE("cpu: cast converts between every pair of dtypes with numpy's rules", "[cpu]") {
    CpuEngine engine;
    std::vector<std::complex<double>> z = {{2.5, -1}, {0, 3}};
    std::vector<double> real(2);
    std::vector<uint8_t> flags(2);
    const std::vector<int64_t> shape = {2}, strides = {1};
    ferro_cast_args c{sizeof c, 0, view(z, FERRO_DTYPE_C128, shape, strides), view(real, FERRO_DTYPE_F64, shape, strides)};
    REQUIRE(engine.f().cast(engine.inst.self, nullptr, &c) == nullptr);
    CHECK(real == std::vector<double>{2.5, 0});  // complex -> real keeps the real part
    c.out = view(flags, FERRO_DTYPE_BOOL, shape, strides);
    REQUIRE(engine.f().cast(engine.inst.self, nullptr, &c) == nullptr);
    CHECK(flags == std::vector<uint8_t>{1, 1});  // non-zero complex -> true
}

TEST_CASE("cpu: unsupported op and dtype pairs answer UNIMPLEMENTED, not garbage", "[cpu]") {
    CpuEngine engine;
    std::vector<std::complex<double>> z(2), out(2);
    const std::vector<int64_t> shape = {2}, strides = {1};
    ferro_unary_args u{sizeof u, FERRO_UNARY_FLOOR, view(z, FERRO_DTYPE_C128, shape, strides),
                       view(out, FERRO_DTYPE_C128, shape, strides)};
    auto parts = take_status(engine.host.api, engine.f().unary(engine.inst.self, nullptr, &u));
    CHECK(parts.code == FERRO_UNIMPLEMENTED);
    CHECK_THAT(parts.message, Catch::Contains("cpu engine: unary does not support op 25"));
    std::vector<uint8_t> flags(2);
    ferro_binary_args b{sizeof b, FERRO_BINARY_LT, view(z, FERRO_DTYPE_C128, shape, strides),
                        view(z, FERRO_DTYPE_C128, shape, strides), view(flags, FERRO_DTYPE_BOOL, shape, strides)};
    CHECK(take_status(engine.host.api, engine.f().binary(engine.inst.self, nullptr, &b)).code == FERRO_UNIMPLEMENTED);
}

TEST_CASE("cpu: integer division by zero and INT64_MIN / -1 do not trap", "[cpu]") {
    CpuEngine engine;
    std::vector<int64_t> a = {7, -7, INT64_MIN, 5}, b = {0, 2, -1, -2}, out(4);
    const std::vector<int64_t> shape = {4}, strides = {1};
    ferro_binary_args d{sizeof d, FERRO_BINARY_DIV, view(a, FERRO_DTYPE_I64, shape, strides),
                        view(b, FERRO_DTYPE_I64, shape, strides), view(out, FERRO_DTYPE_I64, shape, strides)};
    REQUIRE(engine.f().binary(engine.inst.self, nullptr, &d) == nullptr);
    CHECK(out == std::vector<int64_t>{0, -4, INT64_MIN, -3});  // floor division, as numpy //
}

namespace {
void count_body(void* user, int64_t begin, int64_t end) {
    auto* hits = static_cast<std::vector<std::atomic<int>>*>(user);
    for (int64_t i = begin; i < end; ++i) ++(*hits)[static_cast<size_t>(i)];
}
}  // namespace

TEST_CASE("cpu: the native context's parallel_for covers every index exactly once", "[cpu]") {
    CpuEngine engine;
    const void* raw = nullptr;
    REQUIRE(engine.f().native_context(engine.inst.self, nullptr, &raw) == nullptr);
    const auto* ctx = static_cast<const ferro_cpu_context*>(raw);
    CHECK(ctx->struct_size == sizeof(ferro_cpu_context));
    CHECK(ctx->num_threads >= 1);
    for (int64_t n : {0, 1, 7, 100000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        ctx->parallel_for(ctx, n, 10, count_body, &hits);
        int64_t once = 0;
        for (auto& h : hits) once += h.load() == 1;
        CHECK(once == n);
    }
}

TEST_CASE("concurrency: back-to-back parallel regions of the cpu pool from several callers each run every index exactly once",
          "[cpu]") {
    // Workers claim chunks tagged with their region: one that wakes after its region ended
    // (or while the next one runs) must run nothing of either twice or not at all.
    ferro::cpu::ThreadPool pool(3);
    std::atomic<int64_t> wrong{0};
    const auto caller = [&](int seed) {
        std::vector<std::atomic<int>> hits(4096);
        for (int region = 0; region < 400; ++region) {
            const int64_t n = 1 + (region * 37 + seed * 11) % 4096;
            for (int64_t i = 0; i < n; ++i) hits[static_cast<size_t>(i)].store(0, std::memory_order_relaxed);
            pool.parallel_for(n, 1 + region % 7, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
            });
            for (int64_t i = 0; i < n; ++i) wrong += hits[static_cast<size_t>(i)].load(std::memory_order_relaxed) != 1;
        }
    };
    std::thread other(caller, 1);  // its regions run serially while this thread's run, and the reverse
    caller(2);
    other.join();
    CHECK(wrong.load() == 0);
}

TEST_CASE("concurrency: regions of the cpu pool reach spinning and sleeping workers alike, and their writes are seen", "[cpu]") {
    // Workers spin for a while after a region and then sleep; the caller spins for the last
    // chunk and then sleeps. Plain (non-atomic) writes of every chunk must be visible once
    // parallel_for returns, whichever way each side waited (TSan checks the ordering).
    std::vector<int64_t> values(1 << 14);
    for (int round = 0; round < 40; ++round) {
        ferro::cpu::ThreadPool pool(3);
        for (int region = 0; region < 6; ++region) {
            const int64_t n = 1000 + round * 97 + region * 13;
            pool.parallel_for(n, 16, [&](int64_t b, int64_t e) {
                if (b == 0 && region % 2 == 1) std::this_thread::sleep_for(std::chrono::microseconds(400));
                for (int64_t i = b; i < e; ++i) values[static_cast<size_t>(i)] = i * 3 + region;
            });
            int64_t wrong = 0;
            for (int64_t i = 0; i < n; ++i) wrong += values[static_cast<size_t>(i)] != i * 3 + region;
            REQUIRE(wrong == 0);
            // Past the spin window, so the next region wakes sleeping workers.
            if (region % 3 == 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }  // each pool is destroyed while its workers may still be spinning
}

TEST_CASE("cpu: a parallel region inside a parallel body runs serially instead of deadlocking", "[cpu]") {
    ferro::cpu::ThreadPool pool(2);
    std::atomic<int64_t> total{0};
    pool.parallel_for(4, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            pool.parallel_for(1000, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
        }
    });
    CHECK(total.load() == 4000);
}
