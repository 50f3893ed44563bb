// fill, cast and copy_strided.
#include "elementwise.hpp"

#include <algorithm>
#include <array>
#include <vector>

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

template <class T>
bool tiled_transpose(Engine& e, const ferro_copy_args& a) {
    const int nd = a.out.ndim;
    int i = -1, o = -1;  // the input's and the output's unit-stride axes
    for (int d = 0; d < nd; ++d) {
        if (a.out.shape[d] < 2) continue;
        if (a.in.strides[d] == 1 && i < 0) i = d;
        if (a.out.strides[d] == 1 && o < 0) o = d;
    }
    if (i < 0 || o < 0 || i == o || a.out.shape[i] < 4 || a.out.shape[o] < 4) return false;
    std::vector<int> outer;
    int64_t n_outer = 1;
    for (int d = 0; d < nd; ++d) {
        if (d != i && d != o && a.out.shape[d] > 1) {
            outer.push_back(d);
            n_outer *= a.out.shape[d];
        }
    }
    const int64_t ni = a.out.shape[i], no = a.out.shape[o];
    const int64_t in_o = a.in.strides[o], out_i = a.out.strides[i];
    const int64_t tiles_i = (ni + kTile - 1) / kTile;
    const T* in = static_cast<const T*>(a.in.data);
    T* out = static_cast<T*>(a.out.data);
    const int n_dims = static_cast<int>(outer.size());
    // Work item w: the outer index w / tiles_i, and a band of kTile rows along axis i. A range
    // of items walks the outer index as an odometer: with axes of a few elements a band is a
    // handful of elements, and dividing out its index per band cost more than the copy.
    const auto bands = [&](int64_t w0, int64_t w1) {
        std::array<int64_t, FERRO_MAX_NDIM> index{};
        int64_t rest = w0 / tiles_i, in_at = 0, out_at = 0;
        for (int k = n_dims - 1; k >= 0; --k) {
            const int d = outer[static_cast<size_t>(k)];
            index[static_cast<size_t>(k)] = rest % a.out.shape[d];
            rest /= a.out.shape[d];
            in_at += index[static_cast<size_t>(k)] * a.in.strides[d];
            out_at += index[static_cast<size_t>(k)] * a.out.strides[d];
        }
        int64_t tile = w0 % tiles_i;
        for (int64_t w = w0; w < w1; ++w) {
            const int64_t r0 = tile * kTile, r1 = std::min(ni, r0 + kTile);
            for (int64_t c0 = 0; c0 < no; c0 += kTile) {
                const int64_t c1 = std::min(no, c0 + kTile);
                for (int64_t r = r0; r < r1; ++r) {
                    const T* src = in + in_at + r + c0 * in_o;
                    T* dst = out + out_at + r * out_i + c0;
                    for (int64_t c = 0; c < c1 - c0; ++c) dst[c] = src[c * in_o];
                }
            }
            if (++tile < tiles_i) continue;
            tile = 0;
            for (int k = n_dims - 1; k >= 0; --k) {  // next outer index, carrying outwards
                const int d = outer[static_cast<size_t>(k)];
                in_at += a.in.strides[d];
                out_at += a.out.strides[d];
                if (++index[static_cast<size_t>(k)] < a.out.shape[d]) break;
                index[static_cast<size_t>(k)] = 0;
                in_at -= a.out.shape[d] * a.in.strides[d];
                out_at -= a.out.shape[d] * a.out.strides[d];
            }
        }
    };
    const int64_t items = n_outer * tiles_i;
    if (n_outer * ni * no < kParallelThreshold) {
        bands(0, items);
    } else {
        e.pool->parallel_for(items, std::max<int64_t>(1, kParallelGrain / (std::min(kTile, ni) * no)), bands);
    }
    return true;
}

template <class T>
void copy_as(Engine& e, const ferro_copy_args& a) {
    if (tiled_transpose<T>(e, a)) return;
    map1<T, T>(e, a.in, a.out, [](T x) { return x; });
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
