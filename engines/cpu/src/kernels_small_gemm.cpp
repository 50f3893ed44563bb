// Small products (at most kSmallGemm multiply-adds each) on the engine's own loops.
//
// Real dtypes: a register-tiled kernel. An MR x W block of C accumulates in a local array of
// compile-time size, which the compiler keeps in vector registers: each step of k broadcasts
// one element of A per row and reads W contiguous elements of B (packed row-major first when
// its rows are not contiguous). W is two vector registers wide, MR = 4 rows, so eight
// independent accumulators hide the multiply-add latency. The kernel is compiled once per
// instruction set (SmallGemmIsa) from the same source, through always_inline templates under
// a target attribute, and the widest the CPU has is chosen once.
//
// Complex dtypes: a row kernel in axpy order (std::complex arithmetic keeps its NaN/Inf rules,
// which do not vectorise).
#include "small_gemm.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace ferro::cpu {
namespace {

// One product with B rows contiguous.
template <class T>
struct Product {
    const T* a;
    int64_t a_rs, a_cs;
    const T* b;
    int64_t b_rs;
    T* c;
    int64_t c_rs, c_cs;
    int64_t m, n, k;
    T alpha, beta;
};

// A vector of VectorBytes / sizeof(T) lanes (GCC's vector extension: plain arithmetic, held
// in registers of the instruction set the enclosing function is compiled for).
template <class T, int VectorBytes>
struct Simd {
    typedef T type __attribute__((vector_size(VectorBytes)));
    static constexpr int lanes = VectorBytes / static_cast<int>(sizeof(T));
};

// C[i0 : i0 + MR, j0 : j0 + W]; W is a multiple of the vector's lanes or less than one vector.
template <class T, int MR, int W, int VectorBytes>
[[gnu::always_inline]] inline void tile(const Product<T>& p, int64_t i0, int64_t j0) {
    using S = Simd<T, VectorBytes>;
    using V = typename S::type;
    constexpr int L = W >= S::lanes ? S::lanes : 1;  // narrower than a vector: scalars
    constexpr int R = W / L;
    using Acc = std::conditional_t<L == 1, T, V>;
    Acc acc[MR][R] = {};
    const T* a = p.a + i0 * p.a_rs;
    const T* b = p.b + j0;
    for (int64_t q = 0; q < p.k; ++q) {
        const T* brow = b + q * p.b_rs;
        Acc y[R];
#pragma GCC unroll 16
        for (int s = 0; s < R; ++s) __builtin_memcpy(&y[s], brow + s * L, sizeof(Acc));
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
            const T x = a[r * p.a_rs + q * p.a_cs];
#pragma GCC unroll 16
            for (int s = 0; s < R; ++s) acc[r][s] += x * y[s];
        }
    }
    T* c = p.c + i0 * p.c_rs + j0 * p.c_cs;
    if (p.c_cs == 1) {  // rows of C contiguous: whole vectors
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 16
            for (int s = 0; s < R; ++s) {
                T* z = c + r * p.c_rs + s * L;
                Acc v = p.alpha * acc[r][s];
                if (p.beta != T(0)) {
                    Acc old;
                    __builtin_memcpy(&old, z, sizeof old);
                    v += p.beta * old;
                }
                __builtin_memcpy(z, &v, sizeof v);
            }
        }
        return;
    }
    T out[MR][W];
    __builtin_memcpy(out, acc, sizeof out);
    for (int r = 0; r < MR; ++r) {
        for (int j = 0; j < W; ++j) {
            T& z = c[r * p.c_rs + j * p.c_cs];
            z = p.beta == T(0) ? p.alpha * out[r][j] : p.alpha * out[r][j] + p.beta * z;
        }
    }
}

// Columns j.. of rows i0 : i0 + MR when fewer than 2W remain: a tile of W if it fits, then
// halving widths down to one column.
template <class T, int MR, int W, int VB>
[[gnu::always_inline]] inline void column_tail(const Product<T>& p, int64_t i0, int64_t j) {
    if constexpr (W >= 1) {
        if (p.n - j >= W) {
            tile<T, MR, W, VB>(p, i0, j);
            j += W;
        }
        column_tail<T, MR, W / 2, VB>(p, i0, j);
    }
}

template <class T, int MR, int W, int VB>
[[gnu::always_inline]] inline void row_block(const Product<T>& p, int64_t i0) {
    int64_t j = 0;
    for (; j + W <= p.n; j += W) tile<T, MR, W, VB>(p, i0, j);
    column_tail<T, MR, W / 2, VB>(p, i0, j);
}

template <class T, int W, int VB>
[[gnu::always_inline]] inline void product(const Product<T>& p) {
    int64_t i = 0;
    for (; i + 4 <= p.m; i += 4) row_block<T, 4, W, VB>(p, i);
    if (p.m - i >= 2) {
        row_block<T, 2, W, VB>(p, i);
        i += 2;
    }
    if (p.m - i == 1) row_block<T, 1, W, VB>(p, i);
}

// VectorBytes: the width of one register of the instruction set the caller is compiled for.
template <class T, int VectorBytes>
[[gnu::always_inline]] inline void real_products(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    constexpr int W = 2 * VectorBytes / static_cast<int>(sizeof(T));
    const bool pack_b = g.b.col_stride != 1 && g.n > 1;
    std::vector<T> packed(pack_b ? static_cast<size_t>(g.k * g.n) : 0);
    Product<T> p{nullptr, g.a.row_stride, g.a.col_stride, nullptr, g.b.row_stride, nullptr,
                 g.c.row_stride, g.c.col_stride, g.m, g.n, g.k, alpha, beta};
    for (int64_t at = p0; at < p1; ++at) {
        p.a = static_cast<const T*>(g.a.data) + at * g.a.batch_stride;
        p.b = static_cast<const T*>(g.b.data) + at * g.b.batch_stride;
        p.c = static_cast<T*>(g.c.data) + at * g.c.batch_stride;
        if (pack_b) {
            for (int64_t q = 0; q < g.k; ++q)
                for (int64_t j = 0; j < g.n; ++j)
                    packed[static_cast<size_t>(q * g.n + j)] = p.b[q * g.b.row_stride + j * g.b.col_stride];
            p.b = packed.data();
            p.b_rs = g.n;
        }
        product<T, W, VectorBytes>(p);
    }
}

template <class T>
void real_baseline(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    real_products<T, 16>(g, alpha, beta, p0, p1);
}

#if defined(__x86_64__)
template <class T>
[[gnu::target("avx2,fma")]] void real_avx2(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    real_products<T, 32>(g, alpha, beta, p0, p1);
}

template <class T>
[[gnu::target("avx512f,avx512vl,avx2,fma")]] void real_avx512(const ferro_gemm_args& g, T alpha, T beta, int64_t p0,
                                                               int64_t p1) {
    real_products<T, 64>(g, alpha, beta, p0, p1);
}
#endif

// Complex: each output row accumulates, kRowMax columns at a time, in a local array, axpy
// order (i, q, j), so the inner loop runs over a contiguous row of B. B is packed row-major
// (conjugated if asked) when needed; A and C take any strides. N > 0 fixes the row length at
// compile time, which unrolls the inner loops of the smallest products; N = 0 reads g.n.
constexpr int64_t kRowMax = 64;
constexpr int64_t kFixedMax = 8;
template <class T, int64_t N>
void complex_rows(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    const int64_t n = N > 0 ? N : g.n;
    const bool pack_b = (g.b.col_stride != 1 && n > 1) || g.conj_b;
    std::vector<T> packed(pack_b ? static_cast<size_t>(g.k * n) : 0);
    T acc[N > 0 ? N : kRowMax];
    for (int64_t p = p0; p < p1; ++p) {
        const T* a = static_cast<const T*>(g.a.data) + p * g.a.batch_stride;
        const T* b = static_cast<const T*>(g.b.data) + p * g.b.batch_stride;
        T* c = static_cast<T*>(g.c.data) + p * g.c.batch_stride;
        int64_t b_rs = g.b.row_stride;
        if (pack_b) {
            for (int64_t q = 0; q < g.k; ++q) {
                for (int64_t j = 0; j < n; ++j) {
                    const T y = b[q * g.b.row_stride + j * g.b.col_stride];
                    packed[static_cast<size_t>(q * n + j)] = g.conj_b ? std::conj(y) : y;
                }
            }
            b = packed.data();
            b_rs = n;
        }
        for (int64_t i = 0; i < g.m; ++i) {
            for (int64_t j0 = 0; j0 < n; j0 += kRowMax) {
                const int64_t w = N > 0 ? N : std::min(kRowMax, n - j0);
                for (int64_t j = 0; j < w; ++j) acc[j] = T(0);
                for (int64_t q = 0; q < g.k; ++q) {
                    const T x = a[i * g.a.row_stride + q * g.a.col_stride];
                    const T* brow = b + q * b_rs + j0;
                    const T xc = g.conj_a ? std::conj(x) : x;
                    for (int64_t j = 0; j < w; ++j) acc[j] += xc * brow[j];
                }
                T* crow = c + i * g.c.row_stride + j0 * g.c.col_stride;
                const int64_t cs = g.c.col_stride;
                for (int64_t j = 0; j < w; ++j) {
                    crow[j * cs] = beta == T(0) ? alpha * acc[j] : alpha * acc[j] + beta * crow[j * cs];
                }
            }
        }
    }
}

template <class T, int64_t... N>
void complex_rows_fixed(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1,
                        std::integer_sequence<int64_t, N...>) {
    // Runs the instance whose N + 1 equals g.n (1 <= g.n <= kFixedMax).
    (void)((g.n == N + 1 ? (complex_rows<T, N + 1>(g, alpha, beta, p0, p1), true) : false) || ...);
}

template <class T>
void complex_products(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    if (g.n <= kFixedMax) {
        complex_rows_fixed<T>(g, alpha, beta, p0, p1, std::make_integer_sequence<int64_t, kFixedMax>{});
    } else {
        complex_rows<T, 0>(g, alpha, beta, p0, p1);
    }
}

std::vector<SmallGemmIsa> detect_isas() {
    std::vector<SmallGemmIsa> isas = {SmallGemmIsa::baseline};
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        isas.push_back(SmallGemmIsa::avx2);
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
            isas.push_back(SmallGemmIsa::avx512);
        }
    }
#endif
    return isas;
}

}  // namespace

const char* name_of(SmallGemmIsa isa) {
    switch (isa) {
        case SmallGemmIsa::avx2: return "avx2";
        case SmallGemmIsa::avx512: return "avx512";
        default: return "baseline";
    }
}

const std::vector<SmallGemmIsa>& small_gemm_isas() {
    static const std::vector<SmallGemmIsa> isas = detect_isas();
    return isas;
}

template <class T>
void small_gemm_on(SmallGemmIsa isa, const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    if constexpr (is_complex_v<T>) {
        (void)isa;
        complex_products<T>(g, alpha, beta, p0, p1);
    } else {
#if defined(__x86_64__)
        if (isa == SmallGemmIsa::avx512) return real_avx512<T>(g, alpha, beta, p0, p1);
        if (isa == SmallGemmIsa::avx2) return real_avx2<T>(g, alpha, beta, p0, p1);
#endif
        real_baseline<T>(g, alpha, beta, p0, p1);
    }
}

template <class T>
void small_gemm(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    static const SmallGemmIsa best = small_gemm_isas().back();
    small_gemm_on<T>(best, g, alpha, beta, p0, p1);
}

template void small_gemm<float>(const ferro_gemm_args&, float, float, int64_t, int64_t);
template void small_gemm<double>(const ferro_gemm_args&, double, double, int64_t, int64_t);
template void small_gemm<c64>(const ferro_gemm_args&, c64, c64, int64_t, int64_t);
template void small_gemm<c128>(const ferro_gemm_args&, c128, c128, int64_t, int64_t);
template void small_gemm_on<float>(SmallGemmIsa, const ferro_gemm_args&, float, float, int64_t, int64_t);
template void small_gemm_on<double>(SmallGemmIsa, const ferro_gemm_args&, double, double, int64_t, int64_t);
template void small_gemm_on<c64>(SmallGemmIsa, const ferro_gemm_args&, c64, c64, int64_t, int64_t);
template void small_gemm_on<c128>(SmallGemmIsa, const ferro_gemm_args&, c128, c128, int64_t, int64_t);

}  // namespace ferro::cpu
