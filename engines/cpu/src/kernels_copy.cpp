// fill, cast and copy_strided.
#include "elementwise.hpp"

#include <algorithm>
#include <array>

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

// A permuting copy whose input and output are contiguous along different axes (a transpose
// in some two of its axes). Element by element, one side would be read or written with a
// large stride and every cache line touched once per element; copying kTile x kTile blocks
// reads and writes whole lines instead (measured 2-3x on the permutes einsum packs).
constexpr int64_t kTile = 32;
constexpr int64_t kTileElements = kTile * kTile;

// One axis of a copy: its length and its element strides in the input and the output.
struct Axis {
    int64_t size, in, out;
};
using Axes = std::array<Axis, FERRO_MAX_NDIM>;

// The copy's axes with size-1 axes dropped and axes merged wherever two are nested the same way
// in both layouts (a [19, 19] block dense in the input and in the output is one axis of 361),
// so the tile's two axes are as long as they can be. Returns the count.
int coalesce(const ferro_copy_args& a, Axes& axes) {
    int n = 0;
    for (int d = 0; d < a.out.ndim; ++d) {
        if (a.out.shape[d] != 1) axes[static_cast<size_t>(n++)] = {a.out.shape[d], a.in.strides[d], a.out.strides[d]};
    }
    for (bool merged = true; merged;) {
        merged = false;
        for (int x = 0; x < n && !merged; ++x) {
            for (int y = 0; y < n && !merged; ++y) {
                Axis& outer = axes[static_cast<size_t>(x)];
                const Axis& inner = axes[static_cast<size_t>(y)];
                if (x == y || outer.in != inner.in * inner.size || outer.out != inner.out * inner.size) continue;
                outer = {outer.size * inner.size, inner.in, inner.out};
                axes[static_cast<size_t>(y)] = axes[static_cast<size_t>(--n)];
                merged = true;
            }
        }
    }
    return n;
}

// Walks the element offsets (input and output) of the multi-indices of `axes`, in row-major
// order from any starting index: carrying one axis per step beats dividing the linear index
// out per element when the axes are a few elements long.
class Odometer {
public:
    Odometer(const Axis* axes, int n, int64_t start) : axes_(axes), n_(n) {
        for (int k = n - 1; k >= 0; --k) {
            const Axis& x = axes[k];
            index_[static_cast<size_t>(k)] = start % x.size;
            start /= x.size;
            in += index_[static_cast<size_t>(k)] * x.in;
            out += index_[static_cast<size_t>(k)] * x.out;
        }
    }
    void next() {
        for (int k = n_ - 1; k >= 0; --k) {  // carrying outwards
            const Axis& x = axes_[k];
            in += x.in;
            out += x.out;
            if (++index_[static_cast<size_t>(k)] < x.size) return;
            index_[static_cast<size_t>(k)] = 0;
            in -= x.size * x.in;
            out -= x.size * x.out;
        }
    }
    int64_t in = 0, out = 0;

private:
    const Axis* axes_;
    int n_;
    std::array<int64_t, FERRO_MAX_NDIM> index_{};
};

template <class T>
bool tiled_transpose(Engine& e, const ferro_copy_args& a, const Axes& axes, int nd) {
    int i = -1, o = -1;  // the input's and the output's unit-stride axes
    for (int d = 0; d < nd; ++d) {
        if (axes[static_cast<size_t>(d)].in == 1 && i < 0) i = d;
        if (axes[static_cast<size_t>(d)].out == 1 && o < 0) o = d;
    }
    if (i < 0 || o < 0 || i == o || axes[static_cast<size_t>(i)].size < 4 || axes[static_cast<size_t>(o)].size < 4) {
        return false;
    }
    Axes outer;
    int n_dims = 0;
    int64_t n_outer = 1;
    for (int d = 0; d < nd; ++d) {
        if (d == i || d == o) continue;
        outer[static_cast<size_t>(n_dims++)] = axes[static_cast<size_t>(d)];
        n_outer *= axes[static_cast<size_t>(d)].size;
    }
    const int64_t ni = axes[static_cast<size_t>(i)].size, no = axes[static_cast<size_t>(o)].size;
    const int64_t in_o = axes[static_cast<size_t>(o)].in, out_i = axes[static_cast<size_t>(i)].out;
    const int64_t tiles_i = (ni + kTile - 1) / kTile;
    const T* in = static_cast<const T*>(a.in.data);
    T* out = static_cast<T*>(a.out.data);
    // Work item w: the outer index w / tiles_i, and a band of kTile rows along axis i. A range
    // of items walks the outer index as an odometer: with axes of a few elements a band is a
    // handful of elements, and dividing out its index per band cost more than the copy.
    const auto bands = [&](int64_t w0, int64_t w1) {
        Odometer at(outer.data(), n_dims, w0 / tiles_i);
        int64_t tile = w0 % tiles_i;
        for (int64_t w = w0; w < w1; ++w) {
            const int64_t r0 = tile * kTile, r1 = std::min(ni, r0 + kTile);
            for (int64_t c0 = 0; c0 < no; c0 += kTile) {
                const int64_t c1 = std::min(no, c0 + kTile);
                for (int64_t r = r0; r < r1; ++r) {
                    const T* src = in + at.in + r + c0 * in_o;
                    T* dst = out + at.out + r * out_i + c0;
                    for (int64_t c = 0; c < c1 - c0; ++c) dst[c] = src[c * in_o];
                }
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
// axis of 4). Element by element the copy reads or writes a few elements per step of a
// 20-odd-axis odometer (a [2] * 24 permute of doubles took 115 ms). Instead, the axes that
// nest into a dense block of the input, and those of the output, make a tile (the two sets
// may share axes); the tile is copied through tables of its elements' offsets, in the
// output's order, so that its input and output lines stay in L1 while they are used, and the
// other axes walk from tile to tile.
//
// A run dense on both sides of a cache line or more is the tile's unit instead of an element.
// Moved run by run, a permute of 3^17 doubles with runs of 27 (gm_queen's largest) reads its
// runs 1944 bytes apart in an order the prefetcher does not follow: 0.22-0.24 s with its
// memory faulted in, where a memcpy of its 1 GiB takes 0.06-0.1 s; by tiles of runs 0.14-0.16
// s. Runs of kLongRunBytes or more stream as they are.
constexpr int64_t kLongRunBytes = 4096;

template <class T>
bool blocked_permute(Engine& e, const ferro_copy_args& a, const Axes& axes, int nd) {
    int run_axis = -1;  // coalesced, at most one axis is dense on both sides
    for (int d = 0; d < nd; ++d) {
        const Axis& x = axes[static_cast<size_t>(d)];
        if (x.in == 1 && x.out == 1 && x.size * static_cast<int64_t>(sizeof(T)) >= 64) run_axis = d;
    }
    const int64_t run = run_axis < 0 ? 1 : axes[static_cast<size_t>(run_axis)].size;
    if (run * static_cast<int64_t>(sizeof(T)) >= kLongRunBytes) return false;
    // The tile: the axes that nest into a dense block of the input and those of the output,
    // each block grown an axis at a time in turn while it is under kTile units and the tile
    // (their union) within kTileElements units.
    std::array<bool, FERRO_MAX_NDIM> in_tile{};
    if (run_axis >= 0) in_tile[static_cast<size_t>(run_axis)] = true;
    int64_t in_block = run, out_block = run, tile = 1;  // blocks in elements, the tile in units
    const auto extend = [&](int64_t Axis::*stride, int64_t& block) {
        if (block >= kTile * run) return false;
        for (int d = 0; d < nd; ++d) {
            const Axis& x = axes[static_cast<size_t>(d)];
            if (x.*stride != block) continue;  // not the axis that continues the block
            const int64_t grown = in_tile[static_cast<size_t>(d)] ? tile : tile * x.size;
            if (grown > kTileElements) return false;
            in_tile[static_cast<size_t>(d)] = true;
            tile = grown;
            block *= x.size;
            return true;
        }
        return false;
    };
    for (bool grew = true; grew;) {
        grew = extend(&Axis::in, in_block);
        grew = extend(&Axis::out, out_block) || grew;
    }
    // Blocks under a cache line are not worth the tables; one block on both sides is a plain copy.
    const int64_t min_block = run > 1 ? 2 * run : 4;
    if (in_block < min_block || out_block < min_block || (tile * run == in_block && tile * run == out_block)) return false;
    Axes tile_axes, outer;
    int n_tile = 0, n_outer_axes = 0;
    int64_t n_outer = 1;
    for (int d = 0; d < nd; ++d) {
        const Axis& x = axes[static_cast<size_t>(d)];
        if (d == run_axis) continue;
        if (in_tile[static_cast<size_t>(d)]) {
            tile_axes[static_cast<size_t>(n_tile++)] = x;
        } else {
            outer[static_cast<size_t>(n_outer_axes++)] = x;
            n_outer *= x.size;
        }
    }
    // The tile's units in the output's order (row-major over its axes by falling output
    // stride), with where each starts on both sides.
    std::sort(tile_axes.begin(), tile_axes.begin() + n_tile, [](const Axis& x, const Axis& y) { return x.out > y.out; });
    std::array<int64_t, kTileElements> in_offset, out_offset;  // the first `tile` are set (zeroing all cost 16 KiB a call)
    Odometer unit(tile_axes.data(), n_tile, 0);
    for (int64_t t = 0; t < tile; ++t, unit.next()) {
        in_offset[static_cast<size_t>(t)] = unit.in;
        out_offset[static_cast<size_t>(t)] = unit.out;
    }
    const T* in = static_cast<const T*>(a.in.data);
    T* out = static_cast<T*>(a.out.data);
    const auto tiles = [&](int64_t t0, int64_t t1) {
        Odometer at(outer.data(), n_outer_axes, t0);
        for (int64_t t = t0; t < t1; ++t, at.next()) {
            const T* src = in + at.in;
            T* dst = out + at.out;
            if (run == 1) {
                for (int64_t k = 0; k < tile; ++k) dst[out_offset[static_cast<size_t>(k)]] = src[in_offset[static_cast<size_t>(k)]];
            } else {
                for (int64_t k = 0; k < tile; ++k) std::copy_n(src + in_offset[static_cast<size_t>(k)], run, dst + out_offset[static_cast<size_t>(k)]);
            }
        }
    };
    if (n_outer * tile * run < kCopyParallelThreshold) {
        tiles(0, n_outer);
    } else {
        e.pool->parallel_for(n_outer, std::max<int64_t>(1, kParallelGrain / (tile * run)), tiles);
    }
    return true;
}

template <class T>
void copy_as(Engine& e, const ferro_copy_args& a) {
    Axes axes;
    const int nd = coalesce(a, axes);
    if (tiled_transpose<T>(e, a, axes, nd) || blocked_permute<T>(e, a, axes, nd)) return;
    map1<T, T>(e, a.in, a.out, [](T x) { return x; }, kCopyParallelThreshold);
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
