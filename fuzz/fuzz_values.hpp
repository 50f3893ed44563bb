// Values the fuzz targets draw from FuzzedDataProvider: mostly small, sometimes the extremes
// that overflow counts and products. Moderate sizes (10^5 to 10^15 elements) are left out on
// purpose: they are legitimate requests that only exhaust the fuzzing machine's memory.
#pragma once

#include <ferro/ferro.h>

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ferro::fuzz {

// True about once in `n` draws, and false when the input is used up: a seed written as plain
// text (its bytes all taken by strings) then takes the common path everywhere.
inline bool rarely(FuzzedDataProvider& in, int n) { return in.ConsumeIntegralInRange(0, n - 1) == n - 1; }

inline int64_t small_or_extreme(FuzzedDataProvider& in) {
    if (!rarely(in, 16)) return in.ConsumeIntegralInRange<int64_t>(-4, 8);
    return in.PickValueInArray<int64_t>({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                         int64_t{1} << 41, int64_t{1} << 62, -(int64_t{1} << 62)});
}

inline double some_double(FuzzedDataProvider& in) {
    return in.PickValueInArray<double>({0.0, 1.0, -1.0, 0.5, 2.0, 8.0, 1e-3, 1e-300, 1e300, -1e300,
                                        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN()});
}

inline ferro_dtype some_dtype(FuzzedDataProvider& in) {
    if (in.ConsumeIntegralInRange<int>(0, 7) != 0) {
        return in.PickValueInArray<ferro_dtype>(
            {FERRO_DTYPE_F32, FERRO_DTYPE_F64, FERRO_DTYPE_C64, FERRO_DTYPE_C128, FERRO_DTYPE_I64, FERRO_DTYPE_BOOL});
    }
    return in.ConsumeIntegral<ferro_dtype>();  // anything, DLPack's or not
}

}  // namespace ferro::fuzz
