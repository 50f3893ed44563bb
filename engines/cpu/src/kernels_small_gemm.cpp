// Small and skinny products (takes_small_gemm) on the engine's own loops.
//
// Real dtypes: a register-tiled kernel. An MR x W block of C accumulates in a local array of
// compile-time size, which the compiler keeps in vector registers: each step of k broadcasts
// one element of A per row and reads W contiguous elements of B. With AVX-512, 8 rows x 3
// vectors (24 accumulators); with AVX2, 6 rows x 2 vectors (12 of its 16 registers: 4 x 2 ran
// at 15-28 GF/s against OpenBLAS's 19-41 on one core of an AMD EPYC, 6 x 2 at 35-44 on products
// up to 256^3); the baseline, 4 rows x 2 vectors. C is computed in blocks of 64 rows, each
// column panel of B read once per block. B is packed in panels of one tile's width when its
// rows are not contiguous, and whenever it serves 64 rows or more: read in place, a B whose row
// stride is a multiple of 4 KiB keeps its rows in the same few cache sets (f64 512^3 at 10
// GF/s, 42 packed) and its rows spread over many pages. The kernel is compiled once per
// instruction set (SmallGemmIsa) from the same source, through always_inline templates under
// a target attribute, and the widest the CPU has is chosen once.
//
// Complex dtypes: a row kernel in axpy order (std::complex arithmetic keeps its NaN/Inf rules,
// which do not vectorise).
#include "small_gemm.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace ferro::cpu {
namespace {

// A core's L2 cache. The fft plugin asks the same (fft_four_step.cpp); each builds against the
// plugin headers only, so each keeps its own few lines.
constexpr int64_t kAssumedL2Bytes = int64_t{1} << 20;  // when the C library cannot tell
int64_t l2_cache_bytes() {
    static const int64_t bytes = [] {
        const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
        return reported > 0 ? int64_t{reported} : kAssumedL2Bytes;
    }();
    return bytes;
}

// One product with B rows contiguous. When B was packed, it lies in panels of one tile's width
// (each k x W, row-major, one after the other), the last padded to a whole tile, so every
// panel reads whole vectors from consecutive addresses and only the last one's stores are cut
// short.
template <class T> struct Product {
    const T* a;
    int64_t a_rs, a_cs;
    const T* b;
    int64_t b_rs;
    T* c;
    int64_t c_rs, c_cs;
    int64_t m, n, k;
    T alpha, beta;
    bool panels;
    int64_t chunk;  // columns of C per pass over A (a multiple of the tile width)
};

// A vector of VectorBytes / sizeof(T) lanes (GCC's vector extension: plain arithmetic, held
// in registers of the instruction set the enclosing function is compiled for).
template <class T, int VectorBytes> struct Simd {
    typedef T type __attribute__((vector_size(VectorBytes)));
    static constexpr int lanes = VectorBytes / static_cast<int>(sizeof(T));
};

// How far ahead (rows of B) the kernel prefetches.
constexpr int64_t kPrefetchRows = 8;

// C[i0 : i0 + MR, j0 : min(j0 + W, n)]; W is a multiple of the vector's lanes or less than one
// vector.
template <class T, int MR, int W, int VectorBytes>
[[gnu::always_inline]] inline void tile(const Product<T>& p, int64_t i0, int64_t j0) {
    // A tile narrower than a vector runs on the narrower vector it fills (4 floats or 2
    // doubles in 16 bytes), scalars only below 16 bytes: the AVX2 copy ran 836 instructions for
    // a 4 x 4 f32 product on scalar tiles, 546 on a 16-byte one (callgrind).
    constexpr int kTileBytes = W * static_cast<int>(sizeof(T));
    constexpr int kBytes = kTileBytes >= VectorBytes ? VectorBytes : kTileBytes >= 16 ? kTileBytes : 0;
    using S = Simd<T, kBytes == 0 ? VectorBytes : kBytes>;
    using V = typename S::type;
    constexpr int L = kBytes == 0 ? 1 : S::lanes;
    constexpr int R = W / L;
    using Acc = std::conditional_t<L == 1, T, V>;
    Acc acc[MR][R] = {};
    const T* a = p.a + i0 * p.a_rs;
    const T* b = p.panels ? p.b + j0 * p.k : p.b + j0;  // j0 is a multiple of W with panels
    const int64_t b_rs = p.panels ? W : p.b_rs;
    for (int64_t q = 0; q < p.k; ++q) {
        const T* brow = b + q * b_rs;
        // B's rows lie a row stride apart: on a cold B the hardware prefetcher does not follow
        // (every row in another page), so fetch kPrefetchRows ahead (up to 1.6x on 21 x 429 x
        // 427 with B fresh from memory). Panels are read in order, which it does follow.
        if (L > 1 && !p.panels) {  // an address past B's end is not touched: prefetches do not fault
            const uintptr_t ahead = reinterpret_cast<uintptr_t>(brow) + static_cast<uintptr_t>(kPrefetchRows * b_rs) * sizeof(T);
#pragma GCC unroll 16
            for (int s = 0; s < R; ++s)
                __builtin_prefetch(reinterpret_cast<const void*>(ahead + static_cast<size_t>(s * L) * sizeof(T)));
            __builtin_prefetch(reinterpret_cast<const void*>(ahead + (W - 1) * sizeof(T)));
        }
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
    const int64_t valid = std::min<int64_t>(W, p.n - j0);
    if (p.c_cs == 1 && valid == W) {  // rows of C contiguous: whole vectors
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
        for (int j = 0; j < valid; ++j) {
            T& z = c[r * p.c_rs + j * p.c_cs];
            z = p.beta == T(0) ? p.alpha * out[r][j] : p.alpha * out[r][j] + p.beta * z;
        }
    }
}

// The widest power of two below w: the tile widths (and heights) that finish a remainder.
constexpr int next_smaller(int w) {
    int p = 1;
    while (p * 2 < w) p *= 2;
    return w > 1 ? p : 0;
}

// Rows i.. of columns [j, j + W) when fewer than MR rows remain: halving heights.
template <class T, int MR, int W, int VB> [[gnu::always_inline]] inline void row_tail(const Product<T>& p, int64_t i, int64_t j) {
    if constexpr (MR >= 1) {
        if (p.m - i >= MR) {
            tile<T, MR, W, VB>(p, i, j);
            i += MR;
        }
        row_tail<T, next_smaller(MR), W, VB>(p, i, j);
    }
}

// Every row of columns [j, j + W): the panel of B they read stays in cache while A's rows
// stream past it.
template <class T, int MR, int W, int VB> [[gnu::always_inline]] inline void panel(const Product<T>& p, int64_t j) {
    int64_t i = 0;
    for (; i + MR <= p.m; i += MR) tile<T, MR, W, VB>(p, i, j);
    row_tail<T, next_smaller(MR), W, VB>(p, i, j);
}

// Columns j.. when fewer than W remain: narrower panels, each width at most once.
template <class T, int MR, int W, int VB> [[gnu::always_inline]] inline void column_tail(const Product<T>& p, int64_t j) {
    if constexpr (W >= 1) {
        if (p.n - j >= W) {
            panel<T, MR, W, VB>(p, j);
            j += W;
        }
        column_tail<T, MR, next_smaller(W), VB>(p, j);
    }
}

// Rows of C done per pass over B: blocks of 64 rows, within which B is read panel by panel;
// a panel (k x W) stays in cache while the block's rows stream past it.
constexpr int64_t kRowBlock = kSmallGemmRows;

template <class T, int MR, int W, int VB> [[gnu::always_inline]] inline void product(const Product<T>& p) {
    Product<T> rows = p;
    for (int64_t j0 = 0; j0 < p.n; j0 += p.chunk) {
        const int64_t j1 = std::min(p.n, j0 + p.chunk);
        for (int64_t i0 = 0; i0 < p.m; i0 += kRowBlock) {
            rows.m = std::min(kRowBlock, p.m - i0);
            rows.a = p.a + i0 * p.a_rs;
            rows.c = p.c + i0 * p.c_rs;
            int64_t j = j0;
            for (; j + W <= j1; j += W) panel<T, MR, W, VB>(rows, j);
            if (j == j1) continue;                       // only the last chunk can end in part of a tile
            if (p.panels) panel<T, MR, W, VB>(rows, j);  // one last, partly stored panel
            else column_tail<T, MR, next_smaller(W), VB>(rows, j);
        }
    }
}

// One operand of a product as the kernel reads it: element (i, j) of batch p at
// data[p * bs + i * rs + j * cs].
template <class T> struct Operand {
    const T* data;
    int64_t bs, rs, cs;
};

// The kernel reads B by contiguous rows, packing it when they are not, and stores C by whole
// vectors when its rows are contiguous (element by element otherwise). Computing C^T = B^T A^T
// instead swaps the roles of A and B and C's strides; it is chosen when that copies less: a
// skinny A times a column-major B packs A^T (m x k) instead of B (k x n), while a product whose
// C^T would be stored element by element keeps its orientation.
template <class T> struct Oriented {
    int64_t m, n, k;
    Operand<T> a, b;
    T* c;
    int64_t c_bs, c_rs, c_cs;
    bool pack_b;
};

struct Orientation {
    bool swap;
    bool pack_b;     // in the chosen orientation
    int64_t copies;  // elements packed or stored one by one
};

Orientation choose_orientation(const ferro_gemm_args& g) {
    const bool pack_b = g.b.col_stride != 1 && g.n > 1;
    const bool pack_a_t = g.a.row_stride != 1 && g.m > 1;  // what swapping would pack: A^T's rows
    const int64_t keep = (pack_b ? g.k * g.n : 0) + (g.c.col_stride != 1 && g.n > 1 ? g.m * g.n : 0);
    const int64_t swapped = (pack_a_t ? g.k * g.m : 0) + (g.c.row_stride != 1 && g.m > 1 ? g.m * g.n : 0);
    if (swapped < keep) return {true, pack_a_t, swapped};
    return {false, pack_b, keep};
}

template <class T> Oriented<T> orient(const ferro_gemm_args& g) {
    const Operand<T> a{static_cast<const T*>(g.a.data), g.a.batch_stride, g.a.row_stride, g.a.col_stride};
    const Operand<T> b{static_cast<const T*>(g.b.data), g.b.batch_stride, g.b.row_stride, g.b.col_stride};
    T* c = static_cast<T*>(g.c.data);
    const Orientation o = choose_orientation(g);
    if (!o.swap) return {g.m, g.n, g.k, a, b, c, g.c.batch_stride, g.c.row_stride, g.c.col_stride, o.pack_b};
    return {g.n,
            g.m,
            g.k,
            {b.data, b.bs, b.cs, b.rs},
            {a.data, a.bs, a.cs, a.rs},
            c,
            g.c.batch_stride,
            g.c.col_stride,
            g.c.row_stride,
            o.pack_b};
}

// Products of at least this many rows pack B in panels even when its rows are contiguous (the
// copy is k x n against m x n x k multiply-adds).
constexpr int64_t kPanelRows = 64;

// MR x W: the tile of C held in registers (MR * W / lanes accumulators).
template <class T, int VectorBytes, int MR, int Vectors>
[[gnu::always_inline]] inline void real_products(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    constexpr int W = Vectors * VectorBytes / static_cast<int>(sizeof(T));
    constexpr int lanes = VectorBytes / static_cast<int>(sizeof(T));
    const Oriented<T> o = orient<T>(g);
    // A B narrower than one tile, rows ending in a part-vector, would run entirely on the
    // narrow tail tiles: with rows enough to amortise it, pack it padded to a whole tile.
    const bool pack = o.pack_b || (o.n < W && o.n % lanes != 0 && o.n > 1 && o.m >= 2 * MR) || (o.m >= kPanelRows && o.n > W);
    const int64_t padded_n = (o.n + W - 1) / W * W;
    std::vector<T> packed(pack ? static_cast<size_t>(o.k * padded_n) : 0);
    // Columns in chunks whose part of B fits in half of L2: every block of rows reads all of it.
    const int64_t fit = l2_cache_bytes() / 2 / (std::max<int64_t>(o.k, 1) * static_cast<int64_t>(sizeof(T)));
    const int64_t chunk = std::max<int64_t>(W, fit / W * W);
    Product<T> p{nullptr, o.a.rs, o.a.cs, nullptr, o.b.rs, nullptr, o.c_rs, o.c_cs, o.m, o.n, o.k, alpha, beta, pack, chunk};
    for (int64_t at = p0; at < p1; ++at) {
        p.a = o.a.data + at * o.a.bs;
        p.b = o.b.data + at * o.b.bs;
        p.c = o.c + at * o.c_bs;
        if (pack) {
            for (int64_t j0 = 0; j0 < o.n; j0 += W) {
                T* to = packed.data() + j0 * o.k;
                const int64_t w = std::min<int64_t>(W, o.n - j0);
                for (int64_t q = 0; q < o.k; ++q)
                    for (int64_t j = 0; j < w; ++j) to[q * W + j] = p.b[q * o.b.rs + (j0 + j) * o.b.cs];
            }
            p.b = packed.data();
        }
        product<T, MR, W, VectorBytes>(p);
    }
}

template <class T> void real_baseline(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    real_products<T, 16, 4, 2>(g, alpha, beta, p0, p1);
}

#if defined(__x86_64__)
template <class T> [[gnu::target("avx2,fma")]] void real_avx2(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    real_products<T, 32, 6, 2>(g, alpha, beta, p0, p1);
}

template <class T>
[[gnu::target("avx512f,avx512vl,avx2,fma")]] void real_avx512(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    real_products<T, 64, 8, 3>(g, alpha, beta, p0, p1);
}
#endif

// Complex: each output row accumulates, kRowMax columns at a time, in a local array, axpy
// order (i, q, j), so the inner loop runs over a contiguous row of B. B is packed row-major
// (conjugated if asked) when needed; A and C take any strides. N > 0 fixes the row length at
// compile time, which unrolls the inner loops of the smallest products; N = 0 reads g.n.
constexpr int64_t kRowMax = 64;
constexpr int64_t kFixedMax = 8;
template <class T, int64_t N> void complex_rows(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
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
void complex_rows_fixed(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1, std::integer_sequence<int64_t, N...>) {
    // Runs the instance whose N + 1 equals g.n (1 <= g.n <= kFixedMax).
    (void)((g.n == N + 1 ? (complex_rows<T, N + 1>(g, alpha, beta, p0, p1), true) : false) || ...);
}

template <class T> void complex_products(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
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

bool takes_small_gemm(const ferro_gemm_args& g, bool complex) {
    const int64_t work = g.m * g.n * g.k;
    if (work <= kSmallGemm) return true;
    if (complex) return false;
    const Orientation o = choose_orientation(g);
    const int64_t m = o.swap ? g.n : g.m, n = o.swap ? g.m : g.n;
    const int64_t element = g.dtype == FERRO_DTYPE_F32 ? 4 : 8;
    // Mid-sized products first, whatever their copies: those are under 1/16 of the work
    // when every side is over 32, and the skinny ones among the shallow (11 x 2185 x 19 with a
    // column-major B, 1/11) ran 0.93x OpenBLAS's time with B packed.
    if (work > kMidGemmWork) {
        const bool b_fits = std::max({g.m, g.n, g.k}) <= kMidGemmSide && g.k * n * element * 2 <= l2_cache_bytes();
        const bool shallow = g.k <= kMidGemmDepth && g.m * g.n <= kMidGemmOutput;
        if (b_fits || shallow) return true;
    }
    if (std::min({g.m, g.n, g.k}) > kSkinnySide) return false;
    // BLAS packs its operands as it multiplies; this kernel copies before it starts. Skinny
    // products whose copies (a B to pack, a C stored element by element, a B narrower than a
    // tile padded) exceed 1/16 of their multiply-adds stay with BLAS, and 1/32 when k is the
    // longest side, where OpenBLAS's kernels do well and the kernel's row and column tails
    // weigh most (Intel Xeon, two cores, f64 with a column-major B, time on the kernel over
    // OpenBLAS's: 19 x 2299 x 19 0.72, 19 x 1026 x 19 0.80, 11 x 2185 x 19 0.90, but
    // 19 x 19 x 2299 1.14 and 19 x 19 x 700 1.85; str_mps_varying_inner_product_200, made of
    // such products, 15.5 -> 8.3 ms). On an AMD EPYC, before the pool kept its workers
    // spinning between regions, 19 x 2200 x 19 with a column-major B ran 1.5x slower here.
    const int64_t share = g.k > std::max(g.m, g.n) ? 32 : 16;
    const int64_t padding = !o.pack_b && n < kSkinnySide && m >= kSkinnySide / 2 ? g.k * n : 0;
    return (o.copies + padding) * share <= work;
}

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

template <class T> void small_gemm_on(SmallGemmIsa isa, const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
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

template <class T> void small_gemm(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
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
