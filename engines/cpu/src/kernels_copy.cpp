// fill, cast and copy_strided.
#include "elementwise.hpp"
#include "tiles.hpp"

#include <algorithm>
#include <array>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ferro::cpu {

ferro_status fill(Engine& e, const ferro_fill_args& a) {
    const ferro_scalar v = a.value;
    const bool ok = visit_dtype(a.out.dtype, [&](auto tag) {
        using T = decltype(tag);
        T value;
        if constexpr (is_complex_v<T>) value = T(static_cast<real_t<T>>(v.real), static_cast<real_t<T>>(v.imag));
        else if constexpr (is_float_v<T>) value = static_cast<T>(v.real);
        else if constexpr (is_bool_v<T>) value = v.integer != 0 ? 1 : 0;
        else value = v.integer;
        // The input of map1 is the output itself with zero strides: only its type matters.
        ferro_tensor_view none = a.out;
        const int64_t zeros[FERRO_MAX_NDIM] = {};
        none.strides = zeros;
        map1<T, T>(e, none, a.out, [value](T) { return value; });
    });
    return ok ? nullptr : unsupported(e, "fill", "this dtype");
}

ferro_status cast(Engine& e, const ferro_cast_args& a) {
    bool inner_ok = false;
    const bool ok = visit_dtype(a.in.dtype, [&](auto in_tag) {
        using In = decltype(in_tag);
        inner_ok = visit_dtype(a.out.dtype, [&](auto out_tag) {
            using Out = decltype(out_tag);
            map1<In, Out>(e, a.in, a.out, [](In x) { return convert<Out>(x); });
        });
    });
    return ok && inner_ok ? nullptr : unsupported(e, "cast", "this dtype pair");
}

namespace {

using tiles::kTile;
// The walks' operands: 0 the output, 1 the input.
using Axes = tiles::Axes<2>;
constexpr size_t kOut = 0, kIn = 1;

// One tile of a transpose: out[r * out_i + c] = in[r + c * in_o], r < rows, c < cols (the
// input's unit-stride axis is r, the output's c).
template <class T> void transpose_tile(const T* in, int64_t in_o, T* out, int64_t out_i, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) out[r * out_i + c] = in[r + c * in_o];
    }
}

#if defined(__x86_64__)
// The same through AVX2 registers, for the element sizes that have a block copy below: whole
// side x side blocks (side rows of the input loaded whole, transposed in registers, stored as
// side rows of the output), the ragged edges element by element. Element by element, a
// strided load per element, the MPS networks' packs ([92, 361] doubles into [361, 92]) ran at
// 33 GB/s from L2, slower than the products they feed; in blocks, 50-75 GB/s. 2048^2
// transposes went 7-10 -> 3.5 ms in f64, 5-6 -> 1.3-2.7 ms in f32, and [92, 361] c128 packs
// 1.4-1.7x faster (AMD EPYC, Zen 4). The baseline build has 128-bit registers, so these are
// compiled for AVX2 and chosen when the CPU has it.
template <class Block, class T>
[[gnu::target("avx2")]] void transpose_tile_avx2(const T* in, int64_t in_o, T* out, int64_t out_i, int64_t rows, int64_t cols) {
    constexpr int64_t side = Block::side;
    const int64_t whole_rows = rows / side * side, whole_cols = cols / side * side;
    for (int64_t r = 0; r < whole_rows; r += side) {
        for (int64_t c = 0; c < whole_cols; c += side) Block::copy(in + r + c * in_o, in_o, out + r * out_i + c, out_i);
        transpose_tile(in + r + whole_cols * in_o, in_o, out + r * out_i + whole_cols, out_i, side, cols - whole_cols);
    }
    transpose_tile(in + whole_rows, in_o, out + whole_rows * out_i, out_i, rows - whole_rows, cols);
}

// 8-byte elements (f64, c64, 64-bit integers): 4 x 4, by unpacks and lane swaps.
struct Block8 {
    static constexpr int64_t side = 4;
    [[gnu::target("avx2")]] static void copy(const uint64_t* in, int64_t in_o, uint64_t* out, int64_t out_i) {
        const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
        const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + in_o));
        const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * in_o));
        const __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 3 * in_o));
        const __m256i lo01 = _mm256_unpacklo_epi64(v0, v1), hi01 = _mm256_unpackhi_epi64(v0, v1);
        const __m256i lo23 = _mm256_unpacklo_epi64(v2, v3), hi23 = _mm256_unpackhi_epi64(v2, v3);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(lo01, lo23, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + out_i), _mm256_permute2x128_si256(hi01, hi23, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * out_i), _mm256_permute2x128_si256(lo01, lo23, 0x31));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 3 * out_i), _mm256_permute2x128_si256(hi01, hi23, 0x31));
    }
};

// 4-byte elements: 8 x 8, pairs interleaved, then quads, then lanes.
struct Block4 {
    static constexpr int64_t side = 8;
    [[gnu::target("avx2")]] static void copy(const uint32_t* in, int64_t in_o, uint32_t* out, int64_t out_i) {
        __m256 v[8], t[8], q[8];
        for (int j = 0; j < 8; ++j)
            v[j] = _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + j * in_o)));
        for (int j = 0; j < 8; j += 2) {
            t[j] = _mm256_unpacklo_ps(v[j], v[j + 1]);
            t[j + 1] = _mm256_unpackhi_ps(v[j], v[j + 1]);
        }
        for (int j = 0; j < 8; j += 4) {
            q[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44);
            q[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xEE);
            q[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44);
            q[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
        }
        for (int j = 0; j < 4; ++j) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j * out_i),
                                _mm256_castps_si256(_mm256_permute2f128_ps(q[j], q[j + 4], 0x20)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (j + 4) * out_i),
                                _mm256_castps_si256(_mm256_permute2f128_ps(q[j], q[j + 4], 0x31)));
        }
    }
};

// 16-byte elements (c128): 2 x 2, two elements of a row per register, lanes swapped.
struct Block16 {
    static constexpr int64_t side = 2;
    [[gnu::target("avx2")]] static void copy(const c128* in, int64_t in_o, c128* out, int64_t out_i) {
        const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
        const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + in_o));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(v0, v1, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + out_i), _mm256_permute2x128_si256(v0, v1, 0x31));
    }
};

bool has_avx2() {
    static const bool avx2 = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0;
    }();
    return avx2;
}
#endif

// A permuting copy whose input and output are contiguous along different axes (a transpose
// in some two of its axes). Element by element, one side would be read or written with a
// large stride and every cache line touched once per element; copying kTile x kTile blocks
// reads and writes whole lines instead (measured 2-3x on the permutes einsum packs). Only
// tiles of at least `min_area` elements (and sides of 4) are taken.
template <class T> bool tiled_transpose(Engine& e, const ferro_copy_args& a, const Axes& axes, int nd, int64_t min_area) {
    int i = -1, o = -1;  // the input's and the output's unit-stride axes
    for (int d = 0; d < nd; ++d) {
        if (axes[static_cast<size_t>(d)].stride[kIn] == 1 && i < 0) i = d;
        if (axes[static_cast<size_t>(d)].stride[kOut] == 1 && o < 0) o = d;
    }
    if (i < 0 || o < 0 || i == o) return false;
    const int64_t side_i = std::min(kTile, axes[static_cast<size_t>(i)].size);
    const int64_t side_o = std::min(kTile, axes[static_cast<size_t>(o)].size);
    if (side_i < 4 || side_o < 4 || side_i * side_o < min_area) return false;
    Axes outer;
    int n_dims = 0;
    int64_t n_outer = 1;
    for (int d = 0; d < nd; ++d) {
        if (d == i || d == o) continue;
        outer[static_cast<size_t>(n_dims++)] = axes[static_cast<size_t>(d)];
        n_outer *= axes[static_cast<size_t>(d)].size;
    }
    const int64_t ni = axes[static_cast<size_t>(i)].size, no = axes[static_cast<size_t>(o)].size;
    const int64_t in_o = axes[static_cast<size_t>(o)].stride[kIn], out_i = axes[static_cast<size_t>(i)].stride[kOut];
    const int64_t tiles_i = (ni + kTile - 1) / kTile;
    const T* in = static_cast<const T*>(a.in.data);
    T* out = static_cast<T*>(a.out.data);
    auto copy_tile = transpose_tile<T>;
#if defined(__x86_64__)
    if (has_avx2()) {
        if constexpr (std::is_same_v<T, uint64_t>) copy_tile = transpose_tile_avx2<Block8, T>;
        if constexpr (std::is_same_v<T, uint32_t>) copy_tile = transpose_tile_avx2<Block4, T>;
        if constexpr (std::is_same_v<T, c128>) copy_tile = transpose_tile_avx2<Block16, T>;
    }
#endif
    // The input's lines of the tile at rows [r0, r1) of axis i and [c0, c1) of axis o, asked
    // for one tile ahead: a tile reads kTile lines each kTile elements apart, a pattern the
    // hardware prefetchers do not follow, so an input that is not in cache (an einsum
    // network's operand) was copied at memory latency: 121 x 361 doubles took 170 us cold
    // against 21 us warm, 72 us with this.
    constexpr int64_t kLine = 64 / static_cast<int64_t>(sizeof(T));
    const auto prefetch = [&](const T* base, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t r = r0; r < r1; r += kLine) __builtin_prefetch(base + r + c * in_o, 0, 3);
        }
    };
    // Work item w: the outer index w / tiles_i, and a band of kTile rows along axis i. A range
    // of items walks the outer index as an odometer: with axes of a few elements a band is a
    // handful of elements, and dividing out its index per band cost more than the copy.
    const auto bands = [&](int64_t w0, int64_t w1) {
        tiles::Odometer<2> at(outer.data(), n_dims, w0 / tiles_i);
        int64_t tile = w0 % tiles_i;
        for (int64_t w = w0; w < w1; ++w) {
            const int64_t r0 = tile * kTile, r1 = std::min(ni, r0 + kTile);
            for (int64_t c0 = 0; c0 < no; c0 += kTile) {
                const int64_t c1 = std::min(no, c0 + kTile);
                if (c1 < no) prefetch(in + at.at[kIn], r0, r1, c1, std::min(no, c1 + kTile));
                else if (r1 < ni) prefetch(in + at.at[kIn], r1, std::min(ni, r1 + kTile), 0, std::min(no, kTile));
                copy_tile(in + at.at[kIn] + r0 + c0 * in_o, in_o, out + at.at[kOut] + r0 * out_i + c0, out_i, r1 - r0, c1 - c0);
            }
            if (++tile < tiles_i) continue;
            tile = 0;
            at.next();
        }
    };
    const int64_t items = n_outer * tiles_i;
    if (n_outer * ni * no < kCopyParallelThreshold) {
        bands(0, items);
    } else {
        e.pool->parallel_for(items, std::max<int64_t>(1, kParallelGrain / (std::min(kTile, ni) * no)), bands);
    }
    return true;
}

// A permute of many short axes (einsum's networks of size-2 labels: tiled_transpose finds no
// axis of 4; a [2] * 24 permute of doubles took 115 ms element by element), or of runs of a
// cache line or more: copied tile by tile (tiles.hpp), from any size. Not through map1's tiled
// walk: std::copy_n moves a contiguous row with the C library's widest moves (AVX-512 here),
// where map1's loop is built for the baseline's 128-bit registers; gm_queen's 3^17 permute
// with rows of 27 doubles took 98-101 ms here and 132-137 ms there.
template <class T> bool blocked_permute(Engine& e, const ferro_copy_args& a, const Axes& axes, int nd) {
    tiles::Tiling<2> t;
    if (!tiles::plan(axes, nd, sizeof(T), t)) return false;
    const T* in = static_cast<const T*>(a.in.data);
    T* out = static_cast<T*>(a.out.data);
    const auto& to = t.offset[kOut];
    const auto& from = t.offset[kIn];
    const int64_t step = t.row_stride[kIn];
    tiles::for_each_tile(e, t, kCopyParallelThreshold, [&](const std::array<int64_t, 2>& base) {
        const T* src = in + base[kIn];
        T* dst = out + base[kOut];
        if (t.row == 1) {
            for (int64_t u = 0; u < t.units; ++u) dst[to[static_cast<size_t>(u)]] = src[from[static_cast<size_t>(u)]];
        } else if (step == 1) {
            for (int64_t u = 0; u < t.units; ++u)
                std::copy_n(src + from[static_cast<size_t>(u)], t.row, dst + to[static_cast<size_t>(u)]);
        } else {
            for (int64_t u = 0; u < t.units; ++u) {
                const T* row = src + from[static_cast<size_t>(u)];
                T* into = dst + to[static_cast<size_t>(u)];
                for (int64_t i = 0; i < t.row; ++i) into[i] = row[i * step];
            }
        }
    });
    return true;
}

template <class T> void copy_as(Engine& e, const ferro_copy_args& a) {
    if (numel_of(a.out) == 0) return;  // the tilers would divide by an empty axis
    Axes axes;
    const int nd = tiles::coalesce<2>(a.out.ndim, a.out.shape, {a.out.strides, a.in.strides}, axes);
    // Transposes of small tiles (4 x 4, 4 x 8) go to the tiles of nested axes first: a
    // [4, 4, 4, 1996, 4] permute of a cold input (lm_batch_likelihood_brackets packed two, before
    // einsum laid its intermediates out for their readers), dense blocks of 256 doubles spread
    // 1996 ways, took 1.6-2.6 ms as 4 x 4 tiles walked in the outer axes' order, 0.9-1.1 ms as
    // tiles of nested axes (AMD EPYC, Zen 4); batched 4 x 4 and 4 x 8 transposes gained 10-25%,
    // and from 8 x 8 the two were even or the transpose ahead.
    constexpr int64_t kSmallTransposeTile = 64;
    if (tiled_transpose<T>(e, a, axes, nd, kSmallTransposeTile) || blocked_permute<T>(e, a, axes, nd) ||
        tiled_transpose<T>(e, a, axes, nd, 0)) {
        return;
    }
    map1<T, T>(
        e, a.in, a.out, [](T x) { return x; }, kCopyParallelThreshold);
}

}  // namespace

ferro_status copy_strided(Engine& e, const ferro_copy_args& a) {
    if (a.in.dtype != a.out.dtype) return unsupported(e, "copy_strided", "different dtypes");
    // Copy by element size only: all dtypes of one size move the same way.
    switch (itemsize(a.out.dtype)) {
        case 1: copy_as<uint8_t>(e, a); return nullptr;
        case 4: copy_as<uint32_t>(e, a); return nullptr;
        case 8: copy_as<uint64_t>(e, a); return nullptr;
        case 16: copy_as<c128>(e, a); return nullptr;
        default: return unsupported(e, "copy_strided", "this element size");
    }
}

}  // namespace ferro::cpu
