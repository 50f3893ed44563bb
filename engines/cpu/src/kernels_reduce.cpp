// The reduce kernel: sum, prod, max, min, any, all over the axes where out has size 1.
// Accumulates f32 in double and c64 in complex<double>; floating sums are pairwise (blocks of
// kBlock elements summed with eight accumulators, the block sums combined as a binary tree), so
// their rounding error grows with log n rather than n, as numpy's; max/min propagate NaN, as
// numpy.
#include "elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace ferro::cpu {
namespace {

template <class T> struct wide { using type = T; };
template <> struct wide<float> { using type = double; };
template <> struct wide<c64> { using type = c128; };
template <> struct wide<boolean> { using type = int64_t; };

// Integer sums and products wrap modulo 2^64, as numpy's do (wrap_add, wrap_mul).
template <class A> A add(A x, A y) {
    if constexpr (std::is_same_v<A, int64_t>) return wrap_add(x, y);
    else return x + y;
}
template <class A> A mul(A x, A y) {
    if constexpr (std::is_same_v<A, int64_t>) return wrap_mul(x, y);
    else return x * y;
}

// Floating sums go pairwise; integer sums are exact (modulo 2^64) in any order.
template <class T, uint32_t Op>
constexpr bool kPairwise = Op == FERRO_REDUCE_SUM && (std::is_floating_point_v<T> || is_complex_v<T>);
constexpr int64_t kBlock = 128;

// Pairwise summation of a stream of block sums: level k holds the sum of 2^k blocks, and
// adding a block carries like a binary counter, so the sums combined are always of equal size.
template <class Acc> class Cascade {
public:
    void add(Acc block) {
        int k = 0;
        for (uint64_t c = count_; c & 1u; c >>= 1, ++k) block = level_[k] + block;
        level_[k] = block;
        ++count_;
    }
    Acc total() const {
        Acc sum{};
        bool first = true;
        for (int k = 0; k < 64; ++k) {
            if ((count_ >> k) & 1u) {
                sum = first ? level_[k] : level_[k] + sum;
                first = false;
            }
        }
        return sum;
    }

private:
    Acc level_[64]{};
    uint64_t count_ = 0;
};

// The sum of up to kBlock elements at stride `step` bytes (sizeof(T): contiguous), in Acc with
// eight accumulators, which the compiler keeps in vector registers.
template <class Acc, class T> Acc block_sum(const char* p, int64_t n, int64_t step) {
    Acc a[8] = {};
    int64_t i = 0;
    if (step == static_cast<int64_t>(sizeof(T))) {
        const T* x = reinterpret_cast<const T*>(p);
        for (; i + 8 <= n; i += 8) {
            for (int k = 0; k < 8; ++k) a[k] += convert<Acc>(x[i + k]);
        }
    } else {
        for (; i + 8 <= n; i += 8) {
            for (int k = 0; k < 8; ++k) a[k] += convert<Acc>(*reinterpret_cast<const T*>(p + (i + k) * step));
        }
    }
    for (; i < n; ++i) a[i % 8] += convert<Acc>(*reinterpret_cast<const T*>(p + i * step));
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Adds a run of n elements at stride `step` bytes to `sum`, block by block.
template <class Acc, class T> void add_run(Cascade<Acc>& sum, const char* p, int64_t n, int64_t step) {
    for (int64_t i = 0; i < n; i += kBlock) sum.add(block_sum<Acc, T>(p + i * step, std::min(kBlock, n - i), step));
}

template <class T, uint32_t Op> struct Reducer {
    // Acc: what we accumulate in; Out: what we store.
    using Acc =
        std::conditional_t<Op == FERRO_REDUCE_ANY || Op == FERRO_REDUCE_ALL, bool,
                           std::conditional_t<Op == FERRO_REDUCE_SUM || Op == FERRO_REDUCE_PROD, typename wide<T>::type, T>>;
    using Out = std::conditional_t<std::is_same_v<Acc, bool>, boolean, T>;
    static constexpr bool kPairwiseSum = kPairwise<T, Op>;

    static Acc identity() {
        if constexpr (Op == FERRO_REDUCE_SUM) return Acc(0);
        else if constexpr (Op == FERRO_REDUCE_PROD) return Acc(1);
        else if constexpr (Op == FERRO_REDUCE_ANY) return false;
        else if constexpr (Op == FERRO_REDUCE_ALL) return true;
        else if constexpr (std::is_floating_point_v<T>) {
            return Op == FERRO_REDUCE_MAX ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
        } else {
            return Op == FERRO_REDUCE_MAX ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        }
    }
    static Acc step(Acc acc, T x) {
        if constexpr (Op == FERRO_REDUCE_SUM) return add(acc, convert<Acc>(x));
        else if constexpr (Op == FERRO_REDUCE_PROD) return mul(acc, convert<Acc>(x));
        else if constexpr (Op == FERRO_REDUCE_ANY) return acc || x != T{};
        else if constexpr (Op == FERRO_REDUCE_ALL) return acc && x != T{};
        else {
            if constexpr (std::is_floating_point_v<T>) {
                if (std::isnan(acc) || std::isnan(x)) return std::isnan(acc) ? acc : x;
            }
            return Op == FERRO_REDUCE_MAX ? (x > acc ? x : acc) : (x < acc ? x : acc);
        }
    }
    static Acc combine(Acc a, Acc b) {
        if constexpr (Op == FERRO_REDUCE_SUM) return add(a, b);
        else if constexpr (Op == FERRO_REDUCE_PROD) return mul(a, b);
        else if constexpr (Op == FERRO_REDUCE_ANY) return a || b;
        else if constexpr (Op == FERRO_REDUCE_ALL) return a && b;
        else return step(a, b);
    }
};

// Dims of `in` split into kept ones (out follows in) and reduced ones (out has size 1).
struct Split {
    int kept_ndim = 0, red_ndim = 0;
    int64_t kept_shape[FERRO_MAX_NDIM], kept_in[FERRO_MAX_NDIM], kept_out[FERRO_MAX_NDIM];
    int64_t red_shape[FERRO_MAX_NDIM], red_in[FERRO_MAX_NDIM];
};

bool split_axes(const ferro_reduce_args& a, Split& s) {
    if (a.in.ndim != a.out.ndim) return false;
    for (int d = 0; d < a.in.ndim; ++d) {
        if (a.out.shape[d] == a.in.shape[d]) {
            s.kept_shape[s.kept_ndim] = a.in.shape[d];
            s.kept_in[s.kept_ndim] = a.in.strides[d];
            s.kept_out[s.kept_ndim++] = a.out.strides[d];
        } else if (a.out.shape[d] == 1) {
            s.red_shape[s.red_ndim] = a.in.shape[d];
            s.red_in[s.red_ndim++] = a.in.strides[d];
        } else {
            return false;
        }
    }
    return true;
}

// Reduces the sub-space [begin, end) of the reduced dims starting at `base`.
template <class R, class T> typename R::Acc reduce_range(const StridedLoop<1>& loop, int64_t begin, int64_t end) {
    if constexpr (R::kPairwiseSum) {
        Cascade<typename R::Acc> sum;
        loop.run(begin, end, [&](const std::array<char*, 1>& p, int64_t n, const std::array<int64_t, 1>& s) {
            add_run<typename R::Acc, T>(sum, p[0], n, s[0]);
        });
        return sum.total();
    }
    typename R::Acc acc = R::identity();
    loop.run(begin, end, [&](const std::array<char*, 1>& p, int64_t n, const std::array<int64_t, 1>& s) {
        if (s[0] == sizeof(T)) {  // contiguous run: no stride arithmetic
            const T* x = reinterpret_cast<const T*>(p[0]);
            for (int64_t i = 0; i < n; ++i) acc = R::step(acc, x[i]);
        } else {
            for (int64_t i = 0; i < n; ++i) acc = R::step(acc, *reinterpret_cast<const T*>(p[0] + i * s[0]));
        }
    });
    return acc;
}

// The kept dims of `in` as one contiguous block of `count` elements that the reduced dims step
// over (a column sum of a row-major matrix, a bias gradient): true when the kept dims are
// in's trailing dims with row-major strides and out is dense.
bool kept_block(const ferro_reduce_args& a, const Split& s, int64_t& count) {
    if (s.kept_ndim == 0 || !is_dense(a.out)) return false;
    int64_t expected = 1;
    for (int k = s.kept_ndim - 1, d = a.in.ndim - 1; k >= 0; --k, --d) {
        if (a.in.shape[d] != s.kept_shape[k] || a.out.shape[d] != s.kept_shape[k])
            return false;  // a reduced dim sits among the kept
        if (s.kept_shape[k] != 1 && s.kept_in[k] != expected) return false;
        expected *= s.kept_shape[k];
    }
    count = expected;
    return true;
}

// Rows [r0, r1) of `rows` combined into `acc` (count elements each); floating sums pairwise:
// halves of more than kBlock rows summed apart, the second into `spare[level]`.
template <class R, class T>
void accumulate_rows(const StridedLoop<1>& rows, int64_t r0, int64_t r1, int64_t count, typename R::Acc* acc,
                     std::vector<std::unique_ptr<typename R::Acc[]>>& spare, size_t level) {
    if (R::kPairwiseSum && r1 - r0 > kBlock) {
        const int64_t mid = r0 + (r1 - r0) / 2;
        accumulate_rows<R, T>(rows, r0, mid, count, acc, spare, level + 1);
        if (spare.size() <= level) spare.resize(level + 1);
        if (!spare[level]) spare[level].reset(new typename R::Acc[static_cast<size_t>(count)]);
        typename R::Acc* half = spare[level].get();
        std::fill(half, half + count, R::identity());
        accumulate_rows<R, T>(rows, mid, r1, count, half, spare, level + 1);
        for (int64_t j = 0; j < count; ++j) acc[j] = R::combine(acc[j], half[j]);
        return;
    }
    rows.run(r0, r1, [&](const std::array<char*, 1>& p, int64_t n, const std::array<int64_t, 1>& st) {
        for (int64_t r = 0; r < n; ++r) {
            const T* x = reinterpret_cast<const T*>(p[0] + r * st[0]);
            for (int64_t j = 0; j < count; ++j) acc[j] = R::step(acc[j], x[j]);
        }
    });
}

// Reduction over leading dims onto a contiguous block: accumulate whole rows, so the inner
// loop runs along contiguous memory (and vectorises) instead of striding per output.
template <class R, class T> void reduce_rows(const ferro_reduce_args& a, const Split& s, int64_t count) {
    using Out = typename R::Out;
    // An array, not a vector: any and all accumulate in bool, and vector<bool> has no data().
    std::unique_ptr<typename R::Acc[]> acc(new typename R::Acc[static_cast<size_t>(count)]);
    std::fill(acc.get(), acc.get() + count, R::identity());
    const StridedLoop<1> rows(s.red_ndim, s.red_shape, {s.red_in}, {static_cast<char*>(a.in.data)}, {sizeof(T)});
    std::vector<std::unique_ptr<typename R::Acc[]>> spare;
    accumulate_rows<R, T>(rows, 0, rows.numel(), count, acc.get(), spare, 0);
    Out* out = static_cast<Out*>(a.out.data);
    for (int64_t j = 0; j < count; ++j) out[j] = convert<Out>(acc[j]);
}

template <class T, uint32_t Op> void reduce_typed(Engine& e, const ferro_reduce_args& a, const Split& s) {
    using R = Reducer<T, Op>;
    using Out = typename R::Out;
    if (int64_t count = 0; s.red_ndim > 0 && kept_block(a, s, count) && count > 1) {
        return reduce_rows<R, T>(a, s, count);
    }
    if (s.kept_ndim == 0 && is_dense(a.in) && numel_of(a.in) < kParallelThreshold) {
        // A small dense tensor reduced to one value: one flat loop (pairwise for sums).
        const T* x = static_cast<const T*>(a.in.data);
        const int64_t n = numel_of(a.in);
        typename R::Acc acc = R::identity();
        if constexpr (R::kPairwiseSum) {
            Cascade<typename R::Acc> sum;
            add_run<typename R::Acc, T>(sum, reinterpret_cast<const char*>(x), n, sizeof(T));
            acc = sum.total();
        } else {
            for (int64_t i = 0; i < n; ++i) acc = R::step(acc, x[i]);
        }
        *static_cast<Out*>(a.out.data) = convert<Out>(acc);
        return;
    }
    auto red_loop_at = [&](char* base) { return StridedLoop<1>(s.red_ndim, s.red_shape, {s.red_in}, {base}, {sizeof(T)}); };
    StridedLoop<2> outer(s.kept_ndim, s.kept_shape, {s.kept_out, s.kept_in},
                         {static_cast<char*>(a.out.data), static_cast<char*>(a.in.data)}, {sizeof(Out), sizeof(T)});
    const StridedLoop<1> probe = red_loop_at(static_cast<char*>(a.in.data));
    if (outer.numel() == 1 && probe.numel() >= kParallelThreshold) {
        // One output, many inputs: per-thread partials combined in chunk order.
        const unsigned parts = e.pool->size();
        std::vector<typename R::Acc> partial(parts, R::identity());
        e.pool->parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                partial[p] = reduce_range<R, T>(probe, probe.numel() * p / parts, probe.numel() * (p + 1) / parts);
            }
        });
        typename R::Acc acc = R::identity();
        for (const auto& v : partial) acc = R::combine(acc, v);
        *static_cast<Out*>(a.out.data) = convert<Out>(acc);
        return;
    }
    run_loop(e, outer, [&](const std::array<char*, 2>& p, int64_t n, const std::array<int64_t, 2>& st) {
        for (int64_t i = 0; i < n; ++i) {
            const auto loop = red_loop_at(p[1] + i * st[1]);
            *reinterpret_cast<Out*>(p[0] + i * st[0]) = convert<Out>(reduce_range<R, T>(loop, 0, loop.numel()));
        }
    });
}

}  // namespace

ferro_status reduce(Engine& e, const ferro_reduce_args& a) {
    Split s;
    if (!split_axes(a, s)) return unsupported(e, "reduce", "an output shape that is not the input's with size-1 reduced axes");
    const bool logical = a.op == FERRO_REDUCE_ANY || a.op == FERRO_REDUCE_ALL;
    if (logical ? a.out.dtype != FERRO_DTYPE_BOOL : a.out.dtype != a.in.dtype) {
        return unsupported(e, "reduce", "this output dtype");
    }
    bool done = false;
    visit_dtype(a.in.dtype, [&](auto tag) {
        using T = decltype(tag);
        constexpr bool ordered = !is_complex_v<T> && !is_bool_v<T>;
        switch (a.op) {
            case FERRO_REDUCE_SUM:
                if constexpr (!is_bool_v<T>) {
                    reduce_typed<T, FERRO_REDUCE_SUM>(e, a, s);
                    done = true;
                }
                break;
            case FERRO_REDUCE_PROD:
                if constexpr (!is_bool_v<T>) {
                    reduce_typed<T, FERRO_REDUCE_PROD>(e, a, s);
                    done = true;
                }
                break;
            case FERRO_REDUCE_MAX:
                if constexpr (ordered) {
                    reduce_typed<T, FERRO_REDUCE_MAX>(e, a, s);
                    done = true;
                }
                break;
            case FERRO_REDUCE_MIN:
                if constexpr (ordered) {
                    reduce_typed<T, FERRO_REDUCE_MIN>(e, a, s);
                    done = true;
                }
                break;
            case FERRO_REDUCE_ANY:
                reduce_typed<T, FERRO_REDUCE_ANY>(e, a, s);
                done = true;
                break;
            case FERRO_REDUCE_ALL:
                reduce_typed<T, FERRO_REDUCE_ALL>(e, a, s);
                done = true;
                break;
            default: break;
        }
    });
    return done ? nullptr : unsupported(e, "reduce", "op " + std::to_string(a.op) + " on this dtype");
}

}  // namespace ferro::cpu
