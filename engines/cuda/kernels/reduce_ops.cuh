// The reductions as element functions (host and device): Reducer<T, Op>'s accumulator type,
// identity, lift and combine, and Running (a compensated sum for floating sums), with the cpu
// engine's semantics (f32 sums in double, c64 in c128, integers wrap, max/min propagate NaN).
#pragma once

#include "device.cuh"

#include <cuda/std/cmath>

namespace ferro::cuda {

template <class T> struct wide { using type = T; };
template <> struct wide<float> { using type = double; };
template <> struct wide<c64> { using type = c128; };
template <> struct wide<boolean> { using type = int64_t; };

template <class T, uint32_t Op> struct Reducer {
    static constexpr bool kSum = Op == FERRO_REDUCE_SUM;
    using Acc = ::cuda::std::conditional_t<
        Op == FERRO_REDUCE_ANY || Op == FERRO_REDUCE_ALL, bool,
        ::cuda::std::conditional_t<Op == FERRO_REDUCE_SUM || Op == FERRO_REDUCE_PROD, typename wide<T>::type, T>>;
    using Out = ::cuda::std::conditional_t<::cuda::std::is_same_v<Acc, bool>, boolean, T>;

    FERRO_HD static Acc identity() {
        if constexpr (Op == FERRO_REDUCE_SUM) return Acc(0);
        else if constexpr (Op == FERRO_REDUCE_PROD) return Acc(1);
        else if constexpr (Op == FERRO_REDUCE_ANY) return false;
        else if constexpr (Op == FERRO_REDUCE_ALL) return true;
        else if constexpr (is_float_v<T>) return Op == FERRO_REDUCE_MAX ? -T(INFINITY) : T(INFINITY);
        else return Op == FERRO_REDUCE_MAX ? INT64_MIN : INT64_MAX;
    }
    FERRO_HD static Acc combine(Acc acc, Acc x) {
        if constexpr (Op == FERRO_REDUCE_SUM || Op == FERRO_REDUCE_PROD) {
            if constexpr (is_int_v<Acc>) {  // wraps modulo 2^64, as numpy
                return Op == FERRO_REDUCE_SUM ? wrap_add(acc, x) : wrap_mul(acc, x);
            } else {
                return Op == FERRO_REDUCE_SUM ? acc + x : acc * x;
            }
        } else if constexpr (Op == FERRO_REDUCE_ANY) {
            return acc || x;
        } else if constexpr (Op == FERRO_REDUCE_ALL) {
            return acc && x;
        } else {
            if constexpr (is_float_v<T>) {
                if (::cuda::std::isnan(acc) || ::cuda::std::isnan(x)) return ::cuda::std::isnan(acc) ? acc : x;
            }
            return Op == FERRO_REDUCE_MAX ? (x > acc ? x : acc) : (x < acc ? x : acc);
        }
    }
    FERRO_HD static Acc lift(T x) {  // an input as the accumulator takes it
        if constexpr (::cuda::std::is_same_v<Acc, bool>) return x != T{};
        else return convert<Acc>(x);
    }
};

// Neumaier's compensated sum of one real part: `sum + x`, with what its rounding lost added to
// `lost`. Only additions, so no multiply-add contraction can change it.
template <class F> FERRO_HD void add_compensated(F& sum, F& lost, F x) {
    const F t = sum + x;
    lost += ::cuda::std::fabs(sum) >= ::cuda::std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
}

// A running reduction. Floating sums are compensated (Neumaier's variant of Kahan's
// summation): a thread's run of any length is then accurate to a few ulps, as numpy's pairwise
// sums are, before the runs are combined as a tree. Other reductions just combine.
template <class R> struct Running {
    using Acc = typename R::Acc;
    static constexpr bool compensated = R::kSum && fp<Acc>;
    Acc acc = R::identity();
    Acc lost = Acc(0);

    FERRO_HD void add(Acc v) {
        if constexpr (!compensated) {
            acc = R::combine(acc, v);
        } else if constexpr (is_complex_v<Acc>) {
            real_t<Acc> re = acc.real(), im = acc.imag(), lost_re = lost.real(), lost_im = lost.imag();
            add_compensated(re, lost_re, v.real());
            add_compensated(im, lost_im, v.imag());
            acc = Acc(re, im);
            lost = Acc(lost_re, lost_im);
        } else {
            add_compensated(acc, lost, v);
        }
    }
    FERRO_HD Acc total() const {
        if constexpr (compensated) return acc + lost;
        else return acc;
    }
};

}  // namespace ferro::cuda
