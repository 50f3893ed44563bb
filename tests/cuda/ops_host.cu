// See ops_host.hpp: the kernels' element functions, looped on the host.
#include "ops_host.hpp"

#include "binary_ops.cuh"
#include "reduce_ops.cuh"
#include "unary_ops.cuh"

namespace ferro::cuda::host {
namespace {

template <uint32_t Op, class T> bool unary_one(ferro_dtype out_dtype, const void* in, void* out, int64_t n) {
    using U = Unary<Op, T>;
    if constexpr (U::supported) {
        if (out_dtype != dtype_of<typename U::Out>()) return false;
        const T* x = static_cast<const T*>(in);
        auto* y = static_cast<typename U::Out*>(out);
        for (int64_t i = 0; i < n; ++i) y[i] = U{}(x[i]);
        return true;
    } else {
        return false;
    }
}

template <uint32_t Op, class T> bool binary_one(ferro_dtype out_dtype, const void* a, const void* b, void* out, int64_t n) {
    using B = Binary<Op, T>;
    if constexpr (B::supported) {
        if (out_dtype != dtype_of<typename B::Out>()) return false;
        const T* x = static_cast<const T*>(a);
        const T* y = static_cast<const T*>(b);
        auto* z = static_cast<typename B::Out*>(out);
        for (int64_t i = 0; i < n; ++i) z[i] = B{}(x[i], y[i]);
        return true;
    } else {
        return false;
    }
}

template <class T, uint32_t Op> bool reduce_one(ferro_dtype out_dtype, const void* in, void* out, int64_t n) {
    using R = Reducer<T, Op>;
    if (out_dtype != dtype_of<typename R::Out>()) return false;
    const T* x = static_cast<const T*>(in);
    Running<R> run;
    for (int64_t i = 0; i < n; ++i) run.add(R::lift(x[i]));
    *static_cast<typename R::Out*>(out) = convert<typename R::Out>(run.total());
    return true;
}

}  // namespace

bool unary(uint32_t op, ferro_dtype in_dtype, ferro_dtype out_dtype, const void* in, void* out, int64_t n) {
    bool ok = false;
    visit_dtype(in_dtype, [&](auto tag) {
        using T = decltype(tag);
        with_op<FERRO_UNARY_COUNT_>(op, [&](auto o) { ok = unary_one<decltype(o)::value, T>(out_dtype, in, out, n); });
    });
    return ok;
}

bool binary(uint32_t op, ferro_dtype dtype, ferro_dtype out_dtype, const void* a, const void* b, void* out, int64_t n) {
    bool ok = false;
    visit_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        with_op<FERRO_BINARY_COUNT_>(op, [&](auto o) { ok = binary_one<decltype(o)::value, T>(out_dtype, a, b, out, n); });
    });
    return ok;
}

bool cast(ferro_dtype from, ferro_dtype to, const void* in, void* out, int64_t n) {
    bool ok = false;
    visit_dtype(from, [&](auto in_tag) {
        using In = decltype(in_tag);
        ok = visit_dtype(to, [&](auto out_tag) {
            using Out = decltype(out_tag);
            for (int64_t i = 0; i < n; ++i) static_cast<Out*>(out)[i] = convert<Out>(static_cast<const In*>(in)[i]);
        });
    });
    return ok;
}

bool reduce(uint32_t op, ferro_dtype dtype, ferro_dtype out_dtype, const void* in, void* out, int64_t n) {
    bool ok = false;
    visit_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        constexpr bool ordered = !is_complex_v<T> && !is_bool_v<T>;
        switch (op) {
            case FERRO_REDUCE_SUM:
                if constexpr (!is_bool_v<T>) ok = reduce_one<T, FERRO_REDUCE_SUM>(out_dtype, in, out, n);
                break;
            case FERRO_REDUCE_PROD:
                if constexpr (!is_bool_v<T>) ok = reduce_one<T, FERRO_REDUCE_PROD>(out_dtype, in, out, n);
                break;
            case FERRO_REDUCE_MAX:
                if constexpr (ordered) ok = reduce_one<T, FERRO_REDUCE_MAX>(out_dtype, in, out, n);
                break;
            case FERRO_REDUCE_MIN:
                if constexpr (ordered) ok = reduce_one<T, FERRO_REDUCE_MIN>(out_dtype, in, out, n);
                break;
            case FERRO_REDUCE_ANY: ok = reduce_one<T, FERRO_REDUCE_ANY>(out_dtype, in, out, n); break;
            case FERRO_REDUCE_ALL: ok = reduce_one<T, FERRO_REDUCE_ALL>(out_dtype, in, out, n); break;
            default: break;
        }
    });
    return ok;
}

Offsets strided_offsets(int ndim, const int64_t* shape, const int64_t* out_strides, const int64_t* in_strides) {
    ferro_tensor_view out{}, in{};
    out.ndim = in.ndim = ndim;
    out.shape = in.shape = shape;
    out.strides = out_strides;
    in.strides = in_strides;
    const ferro_tensor_view* const views[2] = {&out, &in};
    const Strided<2> s = make_strided(views);
    Offsets o;
    o.merged_ndim = s.ndim;
    for (int64_t i = 0; i < s.numel; ++i) {
        int64_t off[2];
        offsets_of(s, i, off);
        o.out.push_back(off[0]);
        o.in.push_back(off[1]);
    }
    return o;
}

}  // namespace ferro::cuda::host
