// Blocked walks over K strided operands whose memory orders disagree (a permuting copy, a
// product of a tensor with a permuted one). Walked in the output's order element by element,
// such an operand is read a few elements per cache line, in an order the prefetcher does not
// follow: einsum's permutes of [2] * 24 or 3^17 elements, and its products of 3^16 elements
// with one operand permuted, ran 3-10x slower than a stream of the same bytes. Instead, the
// axes that nest into a dense block of each operand make a tile (the blocks may share axes);
// the tile is walked through tables of its units' offsets, in the output's order, so that every
// operand's lines stay in cache while they are used, and the other axes walk from tile to tile.
#pragma once

#include "cpu_engine.hpp"

#include <ferro/types.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>

namespace ferro::cpu::tiles {

// A tile grows each operand's block to kTile units and holds at most kTileUnits units.
inline constexpr int64_t kTile = 32;
inline constexpr int64_t kTileUnits = kTile * kTile;
// Output rows of this many bytes or more stream as they are when every operand reads them in
// order (contiguous or broadcast); else a piece of a row is the unit.
inline constexpr int64_t kLongRunBytes = 4096;
// An operand of this many bytes or fewer stays in L1 however it is walked: it needs no block.
inline constexpr int64_t kResidentBytes = 4096;

// One axis of a walk: its length and each operand's element stride along it (operand 0 is
// the output).
template <int K> struct Axis {
    int64_t size;
    std::array<int64_t, K> stride;
};
template <int K> using Axes = std::array<Axis<K>, FERRO_MAX_NDIM>;

// The axes of `shape` with size-1 axes dropped and axes merged wherever two are nested the same
// way in every operand (a [19, 19] block dense in the input and in the output is one axis of
// 361), so that blocks are as long as they can be. Returns the count.
template <int K> int coalesce(int ndim, const int64_t* shape, const std::array<const int64_t*, K>& strides, Axes<K>& axes) {
    int n = 0;
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] == 1) continue;
        Axis<K>& x = axes[static_cast<size_t>(n++)];
        x.size = shape[d];
        for (int k = 0; k < K; ++k) x.stride[static_cast<size_t>(k)] = strides[static_cast<size_t>(k)][d];
    }
    const auto nested = [](const Axis<K>& outer, const Axis<K>& inner) {
        for (int k = 0; k < K; ++k) {
            if (outer.stride[static_cast<size_t>(k)] != inner.stride[static_cast<size_t>(k)] * inner.size) return false;
        }
        return true;
    };
    for (bool merged = true; merged;) {
        merged = false;
        for (int x = 0; x < n && !merged; ++x) {
            for (int y = 0; y < n && !merged; ++y) {
                Axis<K>& outer = axes[static_cast<size_t>(x)];
                const Axis<K>& inner = axes[static_cast<size_t>(y)];
                if (x == y || !nested(outer, inner)) continue;
                outer = {outer.size * inner.size, inner.stride};
                axes[static_cast<size_t>(y)] = axes[static_cast<size_t>(--n)];
                merged = true;
            }
        }
    }
    return n;
}

// Walks the element offsets (one per operand) of the multi-indices of `axes`, in row-major
// order from any starting index: carrying one axis per step beats dividing the linear index
// out per element when the axes are a few elements long.
template <int K> class Odometer {
public:
    Odometer(const Axis<K>* axes, int n, int64_t start) : axes_(axes), n_(n) {
        at.fill(0);
        for (int d = n - 1; d >= 0; --d) {
            const Axis<K>& x = axes[d];
            index_[static_cast<size_t>(d)] = start % x.size;
            start /= x.size;
            for (size_t k = 0; k < K; ++k) at[k] += index_[static_cast<size_t>(d)] * x.stride[k];
        }
    }
    void next() {
        for (int d = n_ - 1; d >= 0; --d) {  // carrying outwards
            const Axis<K>& x = axes_[d];
            for (size_t k = 0; k < K; ++k) at[k] += x.stride[k];
            if (++index_[static_cast<size_t>(d)] < x.size) return;
            index_[static_cast<size_t>(d)] = 0;
            for (size_t k = 0; k < K; ++k) at[k] -= x.size * x.stride[k];
        }
    }
    std::array<int64_t, K> at;  // each operand's element offset

private:
    const Axis<K>* axes_;
    int n_;
    std::array<int64_t, FERRO_MAX_NDIM> index_{};
};

// A walk cut into tiles of units. A unit is one element or, when the output's unit-stride axis
// holds a cache line or more, a row along that axis (each operand at its own stride there).
// Rows matter: gm_queen's permute of 3^17 doubles has runs of 27 dense on both sides; moved run
// by run in the output's order it read them 1944 bytes apart (0.22-0.24 s), by tiles of rows
// it takes 0.14-0.16 s.
template <int K> struct Tiling {
    int64_t row = 1;                    // elements per unit
    std::array<int64_t, K> row_stride;  // each operand's stride along a row
    int64_t units = 1;                  // per tile
    // Where each unit of a tile starts in each operand, in the output's order; the first
    // `units` are set (zeroing them all would cost K x 8 KiB a call).
    std::array<std::array<int64_t, kTileUnits>, K> offset;
    Axes<K> outer;  // the axes walked from tile to tile
    int n_outer = 0;
    int64_t tiles = 1;
};

// The smallest divisor of n of at least `need` and at most `limit`; else the largest divisor
// within `limit`; 1 when there is none.
inline int64_t split_factor(int64_t n, int64_t need, int64_t limit) {
    int64_t best = 1;
    for (int64_t f = 2; f <= std::min(n, limit); ++f) {
        if (n % f != 0) continue;
        best = f;
        if (f >= need) break;
    }
    return best;
}

// Plans a tiled walk of `axes` (coalesced) for elements of `itemsize` bytes. False when tiles
// would not help: every operand laid out in the output's order (a plain walk reads it in
// order), output rows of kLongRunBytes or more that every operand reads in order (they stream
// as they are), or an operand whose block stays under a cache line yet is not wholly inside
// the tile (as a broadcast scalar is). An axis too long for the tile is split in two when its
// length has a divisor that fits (gm_queen's axes of 3^11).
template <int K> bool plan(Axes<K> axes, int nd, int64_t itemsize, Tiling<K>& t) {
    if (nd == 0 || std::any_of(axes.begin(), axes.begin() + nd, [](const Axis<K>& x) { return x.size == 0; })) return false;
    std::array<int, FERRO_MAX_NDIM> order;  // the axes by falling output stride
    const auto sort_by_output = [&] {
        for (int d = 0; d < nd; ++d) order[static_cast<size_t>(d)] = d;
        std::sort(order.begin(), order.begin() + nd,
                  [&](int x, int y) { return axes[static_cast<size_t>(x)].stride[0] > axes[static_cast<size_t>(y)].stride[0]; });
    };
    sort_by_output();
    const auto in_order = [&](size_t k) {  // operand k's strides fall with the output's (its broadcasts aside)
        int64_t previous = INT64_MAX;
        for (int i = 0; i < nd; ++i) {
            const int64_t s = axes[static_cast<size_t>(order[static_cast<size_t>(i)])].stride[k];
            if (s == 0) continue;
            if (s < 0 || s > previous) return false;
            previous = s;
        }
        return true;
    };
    bool ordered = true;
    for (size_t k = 1; k < K; ++k) ordered = ordered && in_order(k);
    if (ordered) return false;
    // Cuts axis d after its first `f` elements: the rest becomes an axis of its own, outside the tile.
    const auto split = [&](int d, int64_t f) {
        Axis<K>& x = axes[static_cast<size_t>(d)];
        Axis<K>& rest = axes[static_cast<size_t>(nd++)];
        rest.size = x.size / f;
        for (size_t k = 0; k < K; ++k) rest.stride[k] = x.stride[k] * f;
        x.size = f;
    };
    const int last = order[static_cast<size_t>(nd - 1)];
    const int row_axis = axes[static_cast<size_t>(last)].stride[0] == 1 ? last : -1;
    if (row_axis >= 0 && axes[static_cast<size_t>(row_axis)].size * itemsize >= kLongRunBytes) {
        const Axis<K>& x = axes[static_cast<size_t>(row_axis)];
        if (std::all_of(x.stride.begin(), x.stride.end(), [](int64_t s) { return s == 0 || s == 1; })) return false;
        const int64_t longest = kLongRunBytes / itemsize - 1;
        const int64_t f = split_factor(x.size, longest, longest);
        if (f * itemsize < 64 || nd == FERRO_MAX_NDIM) return false;
        split(row_axis, f);
    }
    const int unit_axis = row_axis >= 0 && axes[static_cast<size_t>(row_axis)].size * itemsize >= 64 ? row_axis : -1;
    t.row = unit_axis < 0 ? 1 : axes[static_cast<size_t>(unit_axis)].size;
    for (size_t k = 0; k < K; ++k) t.row_stride[k] = unit_axis < 0 ? 0 : axes[static_cast<size_t>(unit_axis)].stride[k];
    std::array<int64_t, K> footprint;  // elements each operand spans, broadcast axes left out
    for (size_t k = 0; k < K; ++k) {
        footprint[k] = 1;
        for (int d = 0; d < nd; ++d) {
            if (axes[static_cast<size_t>(d)].stride[k] != 0) footprint[k] *= axes[static_cast<size_t>(d)].size;
        }
    }
    const auto resident = [&](size_t k) { return footprint[k] * itemsize <= kResidentBytes; };
    // Each operand's block (the run of its memory the tile covers) grows an axis (or the first
    // part of one) at a time, in turn, while it is under kTile units and the tile (the union of
    // the blocks' axes) within kTileUnits units.
    std::array<bool, FERRO_MAX_NDIM> in_tile{};
    if (unit_axis >= 0) in_tile[static_cast<size_t>(unit_axis)] = true;
    std::array<int64_t, K> unit, block;  // in operand k's elements: what one unit covers, what the tile does
    for (size_t k = 0; k < K; ++k) block[k] = unit[k] = t.row_stride[k] == 1 ? t.row : 1;
    int64_t tile = 1;
    const auto extend = [&](size_t k) {
        if (resident(k) || block[k] >= kTile * unit[k]) return false;
        for (int d = 0; d < nd; ++d) {
            const Axis<K>& x = axes[static_cast<size_t>(d)];
            if (x.stride[k] != block[k]) continue;  // not the axis that continues the block
            int64_t take = x.size;
            if (!in_tile[static_cast<size_t>(d)] && tile * x.size > kTileUnits) {
                take = split_factor(x.size, (kTile * unit[k] + block[k] - 1) / block[k], kTileUnits / tile);
                if (take == 1 || nd == FERRO_MAX_NDIM) return false;
                split(d, take);
            }
            if (!in_tile[static_cast<size_t>(d)]) tile *= take;
            in_tile[static_cast<size_t>(d)] = true;
            block[k] *= take;
            return true;
        }
        return false;
    };
    for (bool grew = true; grew;) {  // the inputs first: the order the permutes were measured with
        grew = false;
        for (size_t k = K; k-- > 0;) grew = extend(k) || grew;
    }
    for (size_t k = 0; k < K; ++k) {
        const int64_t min_block = unit[k] > 1 ? 2 * unit[k] : 4;
        if (!resident(k) && block[k] < min_block && block[k] != footprint[k]) return false;
    }
    sort_by_output();
    Axes<K> tile_axes;
    int n_tile = 0;
    t.n_outer = 0;
    t.tiles = 1;
    for (int i = 0; i < nd; ++i) {  // both in the output's order
        const int d = order[static_cast<size_t>(i)];
        if (d == unit_axis) continue;
        if (in_tile[static_cast<size_t>(d)]) {
            tile_axes[static_cast<size_t>(n_tile++)] = axes[static_cast<size_t>(d)];
        } else {
            t.outer[static_cast<size_t>(t.n_outer++)] = axes[static_cast<size_t>(d)];
            t.tiles *= axes[static_cast<size_t>(d)].size;
        }
    }
    t.units = tile;
    Odometer<K> at(tile_axes.data(), n_tile, 0);
    for (int64_t u = 0; u < tile; ++u, at.next()) {
        for (size_t k = 0; k < K; ++k) t.offset[k][static_cast<size_t>(u)] = at.at[k];
    }
    return true;
}

// Calls tile(base) for every tile, base being its first unit's offset in each operand; on the
// pool from `threshold` elements.
template <int K, class Tile> void for_each_tile(Engine& e, const Tiling<K>& t, int64_t threshold, Tile&& tile) {
    const auto range = [&](int64_t t0, int64_t t1) {
        Odometer<K> at(t.outer.data(), t.n_outer, t0);
        for (int64_t i = t0; i < t1; ++i, at.next()) tile(at.at);
    };
    const int64_t per_tile = t.units * t.row;
    if (t.tiles * per_tile < threshold) {
        range(0, t.tiles);
    } else {
        e.pool->parallel_for(t.tiles, std::max<int64_t>(1, kParallelGrain / per_tile), range);
    }
}

}  // namespace ferro::cpu::tiles
