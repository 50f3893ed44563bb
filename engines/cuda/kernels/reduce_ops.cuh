// The reductions as element functions (host and device): Reducer<T, Op>'s accumulator type,
// identity, step and combine, with the cpu engine's semantics (f32 sums in double, c64 in
// c128, integers wrap, max/min propagate NaN).
#pragma once

#include "device.cuh"

#include <cuda/std/cmath>

namespace ferro::cuda {

template <class T> struct wide { using type = T; };
template <> struct wide<float> { using type = double; };
template <> struct wide<c64> { using type = c128; };
template <> struct wide<boolean> { using type = int64_t; };

template <class T, uint32_t Op> struct Reducer {
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
    FERRO_HD static Acc step(Acc acc, T x) {
        if constexpr (::cuda::std::is_same_v<Acc, bool>) return combine(acc, x != T{});
        else return combine(acc, convert<Acc>(x));
    }
};

}  // namespace ferro::cuda
