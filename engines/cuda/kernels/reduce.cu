// The reduce kernel: sum, prod, max, min, any, all over the axes where out has size 1, with the
// cpu engine's semantics (f32 sums in double, c64 in c128, integers wrap, max/min propagate
// NaN); floating sums are compensated in each thread's run (Running). Three shapes of work:
//  - one thread per output, looping over its inputs: few inputs per output, or reduced axes
//    that are not contiguous (a column sum: neighbouring threads read neighbouring elements);
//  - one block per output (or per part of an output), threads striding through the inputs and
//    combining in shared memory: long contiguous reductions;
//  - with few outputs, several blocks per output write partials that a second kernel combines.
#include "reduce_ops.cuh"

#include <utility>

namespace ferro::cuda {
namespace {

// Kept axes (strides: out, in) and reduced axes (strides: in), each merged where contiguous.
struct ReduceLayout {
    Strided<2> kept;
    Strided<1> red;
};

template <class R, class T>
__device__ __forceinline__ typename R::Acc reduce_span(const T* in, const Strided<1>& red, int64_t begin, int64_t end,
                                                       int64_t step) {
    Running<R> run;
    for (int64_t j = begin; j < end; j += step) {
        int64_t off[1];
        offsets_of(red, j, off);
        run.add(R::lift(in[off[0]]));
    }
    return run.total();
}

template <class R, class T> __global__ void reduce_serial_kernel(typename R::Out* out, const T* in, ReduceLayout L) {
    FERRO_GRID_STRIDE(o, L.kept.numel) {
        int64_t off[2];
        offsets_of(L.kept, o, off);
        out[off[0]] = convert<typename R::Out>(reduce_span<R>(in + off[1], L.red, 0, L.red.numel, 1));
    }
}

// Block b reduces part (b % parts) of output (b / parts).
template <class R, class T>
__global__ void reduce_block_kernel(typename R::Out* out, typename R::Acc* partial, const T* in, ReduceLayout L, int64_t parts) {
    using Acc = typename R::Acc;
    // Raw storage: a __shared__ array may not have constructors to run (complex has).
    __shared__ alignas(16) unsigned char raw[kBlock * sizeof(Acc)];
    Acc* shared = reinterpret_cast<Acc*>(raw);
    for (int64_t b = blockIdx.x; b < L.kept.numel * parts; b += gridDim.x) {
        const int64_t o = b / parts, p = b % parts;
        int64_t off[2];
        offsets_of(L.kept, o, off);
        Acc acc = reduce_span<R>(in + off[1], L.red, p * kBlock + threadIdx.x, L.red.numel, parts * kBlock);
        shared[threadIdx.x] = acc;
        __syncthreads();
        for (int width = kBlock / 2; width > 0; width /= 2) {
            if (static_cast<int>(threadIdx.x) < width)
                shared[threadIdx.x] = R::combine(shared[threadIdx.x], shared[threadIdx.x + width]);
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            if (parts == 1) out[off[0]] = convert<typename R::Out>(shared[0]);
            else partial[b] = shared[0];
        }
        __syncthreads();  // shared is reused by the next b
    }
}

template <class R>
__global__ void reduce_combine_kernel(typename R::Out* out, const typename R::Acc* partial, Strided<2> kept, int64_t parts) {
    FERRO_GRID_STRIDE(o, kept.numel) {
        Running<R> run;
        for (int64_t p = 0; p < parts; ++p) run.add(partial[o * parts + p]);
        int64_t off[2];
        offsets_of(kept, o, off);
        out[off[0]] = convert<typename R::Out>(run.total());
    }
}

template <class T, uint32_t Op> ferro_status reduce_typed(Session& s, const ferro_reduce_args& a, const ReduceLayout& L) {
    using R = Reducer<T, Op>;
    using Out = typename R::Out;
    Engine& e = *s.engine;
    if (L.kept.numel == 0) return nullptr;
    Out* out = element0<Out>(a.out);
    const T* in = element0<const T>(a.in);
    const int64_t n_out = L.kept.numel, n_red = L.red.numel;
    const bool contiguous = L.red.ndim > 0 && L.red.stride[0][L.red.ndim - 1] == 1;
    if (n_red <= 32 || (!contiguous && n_out >= 2048)) {
        reduce_serial_kernel<R><<<grid_for(e, n_out), kBlock, 0, e.stream>>>(out, in, L);
        return launch_status(e, "reduce");
    }
    // Enough blocks to fill the device, each with at least 8 inputs per thread.
    const int64_t target = int64_t{e.props.multiProcessorCount} * 8;
    int64_t parts = n_out >= target ? 1 : (target + n_out - 1) / n_out;
    parts = std::max<int64_t>(1, std::min(parts, n_red / (kBlock * 8)));
    const int64_t blocks = std::min<int64_t>(n_out * parts, int64_t{e.props.multiProcessorCount} * 32);
    typename R::Acc* partial = nullptr;
    if (parts > 1) {
        void* p = nullptr;
        if (ferro_status st = alloc_async(e, static_cast<uint64_t>(n_out * parts) * sizeof(typename R::Acc), &p)) return st;
        partial = static_cast<typename R::Acc*>(p);
    }
    reduce_block_kernel<R><<<static_cast<unsigned>(blocks), kBlock, 0, e.stream>>>(out, partial, in, L, parts);
    ferro_status st = launch_status(e, "reduce");
    if (parts > 1) {
        if (st == nullptr) {
            reduce_combine_kernel<R><<<grid_for(e, n_out), kBlock, 0, e.stream>>>(out, partial, L.kept, parts);
            st = launch_status(e, "reduce");
        }
        free_async(e, partial);
    }
    return st;
}

}  // namespace

ferro_status reduce(Session& s, const ferro_reduce_args& a) {
    if (a.in.ndim != a.out.ndim) return unsupported(s, "reduce", "an output of another rank than the input");
    ReduceLayout L;
    L.kept.numel = L.red.numel = 1;
    for (int d = 0; d < a.in.ndim; ++d) {
        if (a.out.shape[d] == a.in.shape[d]) {
            push_axis(L.kept, a.in.shape[d], {a.out.strides[d], a.in.strides[d]});
        } else if (a.out.shape[d] == 1) {
            push_axis(L.red, a.in.shape[d], {a.in.strides[d]});
        } else {
            return unsupported(s, "reduce", "an output shape that is not the input's with size-1 reduced axes");
        }
    }
    const bool logical = a.op == FERRO_REDUCE_ANY || a.op == FERRO_REDUCE_ALL;
    if (logical ? a.out.dtype != FERRO_DTYPE_BOOL : a.out.dtype != a.in.dtype)
        return unsupported(s, "reduce", "this output dtype");
    ferro_status st = nullptr;
    bool done = false;
    visit_dtype(a.in.dtype, [&](auto tag) {
        using T = decltype(tag);
        constexpr bool ordered = !is_complex_v<T> && !is_bool_v<T>;
        switch (a.op) {
            case FERRO_REDUCE_SUM:
                if constexpr (!is_bool_v<T>) {
                    st = reduce_typed<T, FERRO_REDUCE_SUM>(s, a, L);
                    done = true;
                }
                break;
            case FERRO_REDUCE_PROD:
                if constexpr (!is_bool_v<T>) {
                    st = reduce_typed<T, FERRO_REDUCE_PROD>(s, a, L);
                    done = true;
                }
                break;
            case FERRO_REDUCE_MAX:
                if constexpr (ordered) {
                    st = reduce_typed<T, FERRO_REDUCE_MAX>(s, a, L);
                    done = true;
                }
                break;
            case FERRO_REDUCE_MIN:
                if constexpr (ordered) {
                    st = reduce_typed<T, FERRO_REDUCE_MIN>(s, a, L);
                    done = true;
                }
                break;
            case FERRO_REDUCE_ANY:
                st = reduce_typed<T, FERRO_REDUCE_ANY>(s, a, L);
                done = true;
                break;
            case FERRO_REDUCE_ALL:
                st = reduce_typed<T, FERRO_REDUCE_ALL>(s, a, L);
                done = true;
                break;
            default: break;
        }
    });
    return done ? st : unsupported(s, "reduce", "op " + std::to_string(a.op) + " on this dtype");
}

}  // namespace ferro::cuda
