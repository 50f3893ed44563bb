// vector_norm on the cpu: any strides, any reduced axes, every order. p = 2 and other
// positive p scale by the largest |x| first, so that squares and powers neither overflow
// nor underflow (as LAPACK's nrm2).
#pragma once

#include "matrix_io.hpp"

#include <ferro/types.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

namespace ferro::linalg {

// Element offsets of a linear index over some axes of a view (row-major order of those axes).
class AxesWalk {
public:
    AxesWalk(const ferro_tensor_view& v, const std::vector<int64_t>& axes) {
        for (int64_t a : axes) {
            sizes_.push_back(v.shape[a]);
            strides_.push_back(v.strides[a]);
            count_ *= v.shape[a];
        }
    }
    int64_t count() const { return count_; }
    int64_t operator()(int64_t index) const { return offset_of(index, sizes_, strides_); }

private:
    std::vector<int64_t> sizes_, strides_;
    int64_t count_ = 1;
};

template <class T, class R>
void vector_norm(const ferro_tensor_view& in, const std::vector<int64_t>& reduced, double ord, R* out) {
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < in.ndim; ++d) {
        if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
    }
    const AxesWalk outer(in, kept), inner(in, reduced);
    const T* x = static_cast<const T*>(in.data);
    const R inf = std::numeric_limits<R>::infinity();
    for (int64_t o = 0; o < outer.count(); ++o) {
        const T* base = x + outer(o);
        auto magnitude = [&](int64_t i) { return static_cast<R>(std::abs(base[inner(i)])); };
        R result = 0;
        if (std::isinf(ord) || ord == 0 || ord > 0) {
            // max |x| (NaN wins), min |x| for -inf, and the non-zero count for 0.
            R largest = 0, smallest = inf, nonzero = 0;
            bool nan = false;
            for (int64_t i = 0; i < inner.count(); ++i) {
                const R v = magnitude(i);
                nan = nan || std::isnan(v);
                largest = std::max(largest, v);
                smallest = std::min(smallest, v);
                nonzero += v != 0 ? 1 : 0;
            }
            if (nan) result = std::numeric_limits<R>::quiet_NaN();
            else if (ord == 0) result = nonzero;
            else if (std::isinf(ord)) result = ord > 0 ? largest : smallest;
            else if (largest == 0 || std::isinf(largest)) result = largest;
            else if (ord == 1) {
                for (int64_t i = 0; i < inner.count(); ++i) result += magnitude(i);
            } else {
                R sum = 0;
                for (int64_t i = 0; i < inner.count(); ++i) {
                    const R scaled = magnitude(i) / largest;
                    sum += ord == 2 ? scaled * scaled : std::pow(scaled, static_cast<R>(ord));
                }
                result = largest * (ord == 2 ? std::sqrt(sum) : std::pow(sum, static_cast<R>(1.0 / ord)));
            }
        } else {  // p < 0: a zero element makes the sum infinite and the norm 0
            R sum = 0;
            for (int64_t i = 0; i < inner.count(); ++i) sum += std::pow(magnitude(i), static_cast<R>(ord));
            result = std::pow(sum, static_cast<R>(1.0 / ord));
        }
        out[o] = result;
    }
}

}  // namespace ferro::linalg
