// Typed elementwise maps over strided operands; each kernel file instantiates them with its
// scalar functions.
#pragma once

#include "cpu_engine.hpp"
#include "dtype_dispatch.hpp"
#include "strided_loop.hpp"
#include "tiles.hpp"

namespace ferro::cpu {

inline int64_t itemsize(ferro_dtype dt) { return FERRO_DTYPE_BITS(dt) / 8; }

// Row-major dense (every element, in order, no gaps): such operands need no strided loop.
inline bool is_dense(const ferro_tensor_view& v) {
    int64_t expected = 1;
    for (int d = v.ndim - 1; d >= 0; --d) {
        if (v.shape[d] != 1 && v.strides[d] != expected) return false;
        expected *= v.shape[d];
    }
    return true;
}

inline int64_t numel_of(const ferro_tensor_view& v) {
    int64_t n = 1;
    for (int d = 0; d < v.ndim; ++d) n *= v.shape[d];
    return n;
}

// Runs body(begin, end) over [0, n), on the pool when n is large.
template <class Body> void run_flat(Engine& e, int64_t n, Body&& body, int64_t threshold = kParallelThreshold) {
    if (n < threshold) {
        body(int64_t{0}, n);
    } else {
        e.pool->parallel_for(n, kParallelGrain, body);
    }
}

// Below this many elements the operands sit in L2 and a tiled walk's tables cost more than the
// lines they save.
inline constexpr int64_t kTiledMinElements = int64_t{1} << 15;

// out[i] = f(in[i]) tile by tile (tiles.hpp), when the input is not laid out in the output's
// order (a function of a transposed or permuted view). False when tiles would not help.
template <class In, class Out, class F>
bool tiled_map1(Engine& e, const ferro_tensor_view& in, const ferro_tensor_view& out, F f, int64_t threshold) {
    tiles::Axes<2> axes;
    const int nd = tiles::coalesce<2>(out.ndim, out.shape, {out.strides, in.strides}, axes);
    tiles::Tiling<2> t;
    if (!tiles::plan(axes, nd, sizeof(In), t)) return false;
    const auto *to = t.offset[0].data(), *from = t.offset[1].data();
    const int64_t sx = t.row_stride[1];
    tiles::for_each_tile(e, t, threshold, [&](const std::array<int64_t, 2>& base) {
        Out* o = static_cast<Out*>(out.data) + base[0];
        const In* x = static_cast<const In*>(in.data) + base[1];
        if (t.row == 1) {
            for (int64_t u = 0; u < t.units; ++u) o[to[u]] = f(x[from[u]]);
            return;
        }
        for (int64_t u = 0; u < t.units; ++u) {
            Out* ou = o + to[u];
            const In* xu = x + from[u];
            if (sx == 1) {
                for (int64_t i = 0; i < t.row; ++i) ou[i] = f(xu[i]);  // vectorises
            } else {
                for (int64_t i = 0; i < t.row; ++i) ou[i] = f(xu[i * sx]);
            }
        }
    });
    return true;
}

// out[i] = f(in[i]), in broadcast to out's shape by its strides; on the pool from `threshold`
// elements.
template <class In, class Out, class F>
void map1(Engine& e, const ferro_tensor_view& in, const ferro_tensor_view& out, F f, int64_t threshold = kParallelThreshold) {
    if (is_dense(in) && is_dense(out)) {  // the common case: one flat, vectorisable loop
        const auto* a = static_cast<const In*>(in.data);
        auto* o = static_cast<Out*>(out.data);
        run_flat(
            e, numel_of(out),
            [&](int64_t b, int64_t end) {
                for (int64_t i = b; i < end; ++i) o[i] = f(a[i]);
            },
            threshold);
        return;
    }
    if (numel_of(out) >= kTiledMinElements && tiled_map1<In, Out>(e, in, out, f, threshold)) return;
    StridedLoop<2> loop(out.ndim, out.shape, {out.strides, in.strides},
                        {static_cast<char*>(out.data), static_cast<char*>(in.data)}, {sizeof(Out), sizeof(In)});
    run_loop(
        e, loop,
        [&](const std::array<char*, 2>& p, int64_t n, const std::array<int64_t, 2>& s) {
            auto* o = reinterpret_cast<Out*>(p[0]);
            const auto* a = reinterpret_cast<const In*>(p[1]);
            if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
                for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);  // contiguous: vectorisable
            } else {
                for (int64_t i = 0; i < n; ++i) {
                    *reinterpret_cast<Out*>(p[0] + i * s[0]) = f(*reinterpret_cast<const In*>(p[1] + i * s[1]));
                }
            }
        },
        threshold);
}

// out[i] = f(a[i], b[i]) tile by tile (tiles.hpp), when the operands' memory orders disagree:
// einsum's products of 3^16 elements with one operand permuted read it at 2-6 GB/s walked in
// the output's order. False when tiles would not help.
template <class In, class Out, class F>
bool tiled_map2(Engine& e, const ferro_tensor_view& a, const ferro_tensor_view& b, const ferro_tensor_view& out, F f) {
    tiles::Axes<3> axes;
    const int nd = tiles::coalesce<3>(out.ndim, out.shape, {out.strides, a.strides, b.strides}, axes);
    tiles::Tiling<3> t;
    if (!tiles::plan(axes, nd, sizeof(In), t)) return false;
    const auto *to = t.offset[0].data(), *from_a = t.offset[1].data(), *from_b = t.offset[2].data();
    const int64_t sx = t.row_stride[1], sy = t.row_stride[2];
    tiles::for_each_tile(e, t, kParallelThreshold, [&](const std::array<int64_t, 3>& base) {
        Out* o = static_cast<Out*>(out.data) + base[0];
        const In* x = static_cast<const In*>(a.data) + base[1];
        const In* y = static_cast<const In*>(b.data) + base[2];
        if (t.row == 1) {
            for (int64_t u = 0; u < t.units; ++u) o[to[u]] = f(x[from_a[u]], y[from_b[u]]);
            return;
        }
        for (int64_t u = 0; u < t.units; ++u) {  // rows: the contiguous and broadcast cases vectorise
            Out* ou = o + to[u];
            const In *xu = x + from_a[u], *yu = y + from_b[u];
            if (sx == 1 && sy == 1) {
                for (int64_t i = 0; i < t.row; ++i) ou[i] = f(xu[i], yu[i]);
            } else if (sx == 1 && sy == 0) {
                for (int64_t i = 0; i < t.row; ++i) ou[i] = f(xu[i], *yu);
            } else if (sx == 0 && sy == 1) {
                for (int64_t i = 0; i < t.row; ++i) ou[i] = f(*xu, yu[i]);
            } else {
                for (int64_t i = 0; i < t.row; ++i) ou[i] = f(xu[i * sx], yu[i * sy]);
            }
        }
    });
    return true;
}

// out[i] = f(a[i], b[i]).
template <class In, class Out, class F>
void map2(Engine& e, const ferro_tensor_view& a, const ferro_tensor_view& b, const ferro_tensor_view& out, F f) {
    if (is_dense(a) && is_dense(b) && is_dense(out)) {
        const auto* x = static_cast<const In*>(a.data);
        const auto* y = static_cast<const In*>(b.data);
        auto* o = static_cast<Out*>(out.data);
        run_flat(e, numel_of(out), [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) o[i] = f(x[i], y[i]);
        });
        return;
    }
    if (numel_of(out) >= kTiledMinElements && tiled_map2<In, Out>(e, a, b, out, f)) return;
    StridedLoop<3> loop(out.ndim, out.shape, {out.strides, a.strides, b.strides},
                        {static_cast<char*>(out.data), static_cast<char*>(a.data), static_cast<char*>(b.data)},
                        {sizeof(Out), sizeof(In), sizeof(In)});
    run_loop(e, loop, [&](const std::array<char*, 3>& p, int64_t n, const std::array<int64_t, 3>& s) {
        auto* o = reinterpret_cast<Out*>(p[0]);
        const auto* x = reinterpret_cast<const In*>(p[1]);
        const auto* y = reinterpret_cast<const In*>(p[2]);
        if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
            for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
        } else if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
            const In c = *y;  // tensor op scalar: the most common broadcast
            for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], c);
        } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(In)) {
            const In c = *x;  // scalar op tensor (1 - y, 2 / x)
            for (int64_t i = 0; i < n; ++i) o[i] = f(c, y[i]);
        } else {
            for (int64_t i = 0; i < n; ++i) {
                *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                    f(*reinterpret_cast<const In*>(p[1] + i * s[1]), *reinterpret_cast<const In*>(p[2] + i * s[2]));
            }
        }
    });
}

}  // namespace ferro::cpu
