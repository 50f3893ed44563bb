#include "fft_transpose.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ferro::fft {
namespace {

template <class C>
void transpose_edges(const C* src, int64_t src_ld, C* dst, int64_t dst_ld, int64_t rows, int64_t cols, int64_t tiled_rows,
                     int64_t tiled_cols) {
    for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = i < tiled_rows ? tiled_cols : 0; j < cols; ++j) dst[j * dst_ld + i] = src[i * src_ld + j];
    }
}

// The portable tiles: four rows at a time, so that each destination line takes four elements
// in a row.
template <class C> void transpose_baseline(const C* src, int64_t src_ld, C* dst, int64_t dst_ld, int64_t rows, int64_t cols) {
    const int64_t tr = rows / 4 * 4, tc = cols / 4 * 4;
    for (int64_t i = 0; i < tr; i += 4) {
        for (int64_t j = 0; j < tc; ++j) {
            C* d = dst + j * dst_ld + i;
            const C* s = src + i * src_ld + j;
            d[0] = s[0];
            d[1] = s[src_ld];
            d[2] = s[2 * src_ld];
            d[3] = s[3 * src_ld];
        }
    }
    transpose_edges(src, src_ld, dst, dst_ld, rows, cols, tr, tc);
}

#if defined(__x86_64__)
// A 4 x 4 tile of 8-byte elements (c64): four rows of 32 bytes, unpacked and recombined.
[[gnu::target("avx")]] inline void tile_c64(const double* s, int64_t ls, double* d, int64_t ld) {
    const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + ls);
    const __m256d r2 = _mm256_loadu_pd(s + 2 * ls), r3 = _mm256_loadu_pd(s + 3 * ls);
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(d + ld, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(d + 2 * ld, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(d + 3 * ld, _mm256_permute2f128_pd(t1, t3, 0x31));
}

// A 4 x 4 tile of 16-byte elements (c128): each row two registers of two elements.
[[gnu::target("avx")]] inline void tile_c128(const double* s, int64_t ls, double* d, int64_t ld) {
    const __m256d a0 = _mm256_loadu_pd(s), b0 = _mm256_loadu_pd(s + 4);
    const __m256d a1 = _mm256_loadu_pd(s + ls), b1 = _mm256_loadu_pd(s + ls + 4);
    const __m256d a2 = _mm256_loadu_pd(s + 2 * ls), b2 = _mm256_loadu_pd(s + 2 * ls + 4);
    const __m256d a3 = _mm256_loadu_pd(s + 3 * ls), b3 = _mm256_loadu_pd(s + 3 * ls + 4);
    _mm256_storeu_pd(d, _mm256_permute2f128_pd(a0, a1, 0x20));
    _mm256_storeu_pd(d + 4, _mm256_permute2f128_pd(a2, a3, 0x20));
    _mm256_storeu_pd(d + ld, _mm256_permute2f128_pd(a0, a1, 0x31));
    _mm256_storeu_pd(d + ld + 4, _mm256_permute2f128_pd(a2, a3, 0x31));
    _mm256_storeu_pd(d + 2 * ld, _mm256_permute2f128_pd(b0, b1, 0x20));
    _mm256_storeu_pd(d + 2 * ld + 4, _mm256_permute2f128_pd(b2, b3, 0x20));
    _mm256_storeu_pd(d + 3 * ld, _mm256_permute2f128_pd(b0, b1, 0x31));
    _mm256_storeu_pd(d + 3 * ld + 4, _mm256_permute2f128_pd(b2, b3, 0x31));
}

// Blocks of kBlock x kBlock elements (8 or 16 KiB: in L1 with room to spare) are walked whole,
// so that every line of the destination and the source is written or read completely while it
// is in L1: a row-by-row walk left each destination line half written (4 elements of 8) when a
// 32-row buffer was scattered into a 1024-line column, and fetched it twice. The next block's
// source lines are asked for ahead of time: in a column pass each row of a block lies in
// another page, which the hardware prefetchers do not follow.
constexpr int64_t kBlock = 32;

template <class C> void prefetch_block(const C* base, int64_t ld, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) {
        const char* row = reinterpret_cast<const char*>(base + r * ld);
        for (int64_t b = 0; b < cols * static_cast<int64_t>(sizeof(C)); b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
    }
}

// `Tile` moves a 4 x 4 tile of C between arrays of doubles, `per` doubles an element.
// DstLinesFirst (c64 only, whose cache line holds 8 elements, two tiles' rows): the two tiles of
// each destination line are written one after the other, instead of a band of 4 source rows at
// a time. For a destination whose lines lie a multiple of 4 KiB apart: all of a block's
// destination lines then fall in one L1 set, and in bands each line left L1 half written and
// came back for its other half. The three copies of a 2^20-point c64 four-step (the last one
// into the output, 8 KiB a line), one thread: 3.40 -> 2.94 ms; the transform on two threads:
// 3.85 -> 3.25 ms (medians of 5 alternated processes). The padded buffers keep the bands:
// written lines first too, the three copies took 4-16% longer than with this rule.
template <class C, int per, void (*Tile)(const double*, int64_t, double*, int64_t), bool DstLinesFirst>
[[gnu::target("avx")]] void transpose_avx(const C* src, int64_t src_ld, C* dst, int64_t dst_ld, int64_t rows, int64_t cols) {
    constexpr int64_t band = DstLinesFirst ? 8 : 4;
    const int64_t tr = rows / 4 * 4, tc = cols / 4 * 4;
    const auto* s = reinterpret_cast<const double*>(src);
    auto* d = reinterpret_cast<double*>(dst);
    for (int64_t i0 = 0; i0 < tr; i0 += kBlock) {
        const int64_t i1 = std::min(i0 + kBlock, tr);
        for (int64_t j0 = 0; j0 < tc; j0 += kBlock) {
            const int64_t j1 = std::min(j0 + kBlock, tc);
            // The next block: along the row, else the next band of rows.
            const int64_t ni = j1 < tc ? i0 : i1, nj = j1 < tc ? j1 : 0;
            if (ni < tr) {
                prefetch_block(src + ni * src_ld + nj, src_ld, std::min(kBlock, tr - ni), std::min(kBlock, tc - nj));
            }
            for (int64_t i = i0; i < i1; i += band) {
                for (int64_t j = j0; j < j1; j += 4) {
                    Tile(s + (i * src_ld + j) * per, src_ld * per, d + (j * dst_ld + i) * per, dst_ld * per);
                    if (DstLinesFirst && i + 4 < i1) {
                        Tile(s + ((i + 4) * src_ld + j) * per, src_ld * per, d + (j * dst_ld + i + 4) * per, dst_ld * per);
                    }
                }
            }
        }
    }
    transpose_edges(src, src_ld, dst, dst_ld, rows, cols, tr, tc);
}

bool has_avx() {
    static const bool avx = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx") != 0;
    }();
    return avx;
}
#endif

// AVX tiles where the CPU has them (an element of C is `sizeof(C) / 8` doubles).
template <class C> void transpose_dispatched(const C* src, int64_t src_ld, C* dst, int64_t dst_ld, int64_t rows, int64_t cols) {
#if defined(__x86_64__)
    if (has_avx()) {
        constexpr int per = sizeof(C) / sizeof(double);
        constexpr auto tile = per == 1 ? tile_c64 : tile_c128;
        if (per == 1 && dst_ld * static_cast<int64_t>(sizeof(C)) % 4096 == 0)
            return transpose_avx<C, per, tile, true>(src, src_ld, dst, dst_ld, rows, cols);
        return transpose_avx<C, per, tile, false>(src, src_ld, dst, dst_ld, rows, cols);
    }
#endif
    transpose_baseline(src, src_ld, dst, dst_ld, rows, cols);
}

}  // namespace

void transpose(const std::complex<float>* src, int64_t src_ld, std::complex<float>* dst, int64_t dst_ld, int64_t rows,
               int64_t cols) {
    transpose_dispatched(src, src_ld, dst, dst_ld, rows, cols);
}

void transpose(const std::complex<double>* src, int64_t src_ld, std::complex<double>* dst, int64_t dst_ld, int64_t rows,
               int64_t cols) {
    transpose_dispatched(src, src_ld, dst, dst_ld, rows, cols);
}

void transpose_portable(const std::complex<float>* src, int64_t src_ld, std::complex<float>* dst, int64_t dst_ld, int64_t rows,
                        int64_t cols) {
    transpose_baseline(src, src_ld, dst, dst_ld, rows, cols);
}

void transpose_portable(const std::complex<double>* src, int64_t src_ld, std::complex<double>* dst, int64_t dst_ld, int64_t rows,
                        int64_t cols) {
    transpose_baseline(src, src_ld, dst, dst_ld, rows, cols);
}

}  // namespace ferro::fft
