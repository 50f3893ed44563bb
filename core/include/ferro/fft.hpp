// ferro::fft — typed calls into the fft family (libferro_fft.so, loaded from the plugin search
// path), with numpy.fft semantics and argument names: n / s zero-pad or truncate the
// transformed axes, axis / axes pick them (negative allowed), norm is "backward" (default),
// "ortho" or "forward". planner is FFTW's effort ("estimate" by default, "measure",
// "patient", "exhaustive"); plans are made once per call signature. docs/fft.md has the
// details. fftfreq, rfftfreq, fftshift and ifftshift are built from core ops here.
// Included by ferro/ferro.hpp.
#pragma once

#include <ferro/ferro.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ferro::fft {

// An optional list of integers: numpy's s (None: the input's lengths) and axes (None: all,
// or the last len(s)). Not std::optional<std::vector>: GCC 12 warns that a disengaged one
// "may be used uninitialized" in callers built with -O1 and sanitizers.
class Dims {
public:
    Dims() = default;
    Dims(std::nullopt_t) {}                                           // NOLINT(google-explicit-constructor): None, as in numpy
    Dims(std::vector<int64_t> v) : v_(std::move(v)), given_(true) {}  // NOLINT(google-explicit-constructor)
    Dims(std::initializer_list<int64_t> v) : v_(v), given_(true) {}   // NOLINT(google-explicit-constructor)
    Dims(const std::optional<std::vector<int64_t>>& v)
        : v_(v.value_or(std::vector<int64_t>{})), given_(v.has_value()) {}  // NOLINT
    bool given() const { return given_; }
    const std::vector<int64_t>& values() const { return v_; }

private:
    std::vector<int64_t> v_;
    bool given_ = false;
};
using Lengths = Dims;
using Axes = Dims;

namespace detail {
// Attributes as the C ABI takes them, on the stack, and only those that differ from numpy's
// defaults (the schema's): a call with the defaults passes none, so the host has no attribute
// to encode or compare, and with the call site's cached op handle (ferro::detail::call1) a small
// transform's call allocates nothing but its output.
class CallAttrs {
public:
    void i64(const char* name, std::optional<int64_t> v) {
        if (!v) return;
        ferro_named_attr& a = next(name, FERRO_ATTR_I64);
        a.value.v.i64 = *v;
    }
    void axis(int64_t v) {
        if (v != -1) i64("axis", v);
    }
    void dims(const char* name, const Dims& d) {
        if (!d.given()) return;
        ferro_named_attr& a = next(name, FERRO_ATTR_I64_ARRAY);
        a.value.count = static_cast<uint32_t>(d.values().size());
        a.value.v.i64_array = d.values().data();
    }
    // axes, whose default is None (fftn: all axes)
    void axes(const Dims& d) { dims("axes", d); }
    // axes, whose default is the list `by_default` (fft2: the last two): not given is the default
    void axes(const Dims& d, std::initializer_list<int64_t> by_default) {
        if (d.given() && !std::equal(d.values().begin(), d.values().end(), by_default.begin(), by_default.end())) {
            dims("axes", d);
        }
    }
    void str(const char* name, const std::string& v, const char* by_default) {
        if (v == by_default) return;
        ferro_named_attr& a = next(name, FERRO_ATTR_STR);
        a.value.v.str = v.c_str();
    }
    const ferro_named_attr* data() const { return attrs_; }
    uint32_t size() const { return n_; }

private:
    ferro_named_attr& next(const char* name, uint32_t type) {
        ferro_named_attr& a = attrs_[n_++];
        a = {name, {}};
        a.value.type = type;
        return a;
    }
    ferro_named_attr attrs_[4];
    uint32_t n_ = 0;
};

}  // namespace detail

#define FERRO_FFT_ONE_D(name)                                                                           \
    inline Tensor name(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,     \
                       const std::string& norm = "backward", const std::string& planner = "estimate") { \
        detail::CallAttrs a;                                                                            \
        a.i64("n", n);                                                                                  \
        a.axis(axis);                                                                                   \
        a.str("norm", norm, "backward");                                                                \
        a.str("planner", planner, "estimate");                                                          \
        return ::ferro::detail::call1<"fft." #name>(x, {x.get()}, a.data(), a.size());                  \
    }
#define FERRO_FFT_MANY_D(name, ...)                                                                     \
    inline Tensor name(const Tensor& x, const Lengths& s = {}, const Axes& axes = Axes(__VA_ARGS__),    \
                       const std::string& norm = "backward", const std::string& planner = "estimate") { \
        detail::CallAttrs a;                                                                            \
        a.dims("s", s);                                                                                 \
        a.axes(axes __VA_OPT__(, ) __VA_ARGS__);                                                        \
        a.str("norm", norm, "backward");                                                                \
        a.str("planner", planner, "estimate");                                                          \
        return ::ferro::detail::call1<"fft." #name>(x, {x.get()}, a.data(), a.size());                  \
    }
#define FERRO_FFT_TWO_D(name) FERRO_FFT_MANY_D(name, {-2, -1})
#define FERRO_FFT_N_D(name) FERRO_FFT_MANY_D(name)

// 1-D: complex <-> complex (fft, ifft), real -> half spectrum (rfft) and back (irfft: n real
// points, by default 2 (m - 1) from m), Hermitian signal given by its half -> real (hfft)
// and back (ihfft).
FERRO_FFT_ONE_D(fft)
FERRO_FFT_ONE_D(ifft)
FERRO_FFT_ONE_D(rfft)
FERRO_FFT_ONE_D(irfft)
FERRO_FFT_ONE_D(hfft)
FERRO_FFT_ONE_D(ihfft)
// 2-D over axes (default the last two; `{}` and std::nullopt also mean the last two, as there is
// no None here: pass every axis for numpy's fft2(axes=None)) and N-D (default all axes, or the
// last len(s)); the real ones halve the last axis in `axes`. norm: "backward" is numpy's None.
FERRO_FFT_TWO_D(fft2)
FERRO_FFT_TWO_D(ifft2)
FERRO_FFT_TWO_D(rfft2)
FERRO_FFT_TWO_D(irfft2)
FERRO_FFT_N_D(fftn)
FERRO_FFT_N_D(ifftn)
FERRO_FFT_N_D(rfftn)
FERRO_FFT_N_D(irfftn)
// 2-D and N-D Hermitian transforms (scipy.fft's): hfft2 / hfftn take the half spectrum of a
// Hermitian-symmetric signal (last axis in `axes` halved) and give its real DFT; ihfft2 /
// ihfftn are their inverses, from real input.
FERRO_FFT_TWO_D(hfft2)
FERRO_FFT_TWO_D(ihfft2)
FERRO_FFT_N_D(hfftn)
FERRO_FFT_N_D(ihfftn)

#undef FERRO_FFT_ONE_D
#undef FERRO_FFT_TWO_D
#undef FERRO_FFT_N_D
#undef FERRO_FFT_MANY_D

// The sample frequencies of fft(n points, spacing d): [0, 1, ..., ceil(n/2) - 1, -floor(n/2),
// ..., -1] / (d n), and of rfft: [0, 1, ..., n/2] / (d n).
inline Tensor fftfreq(const Runtime& rt, int64_t n, double d = 1.0, DType dtype = DType::f64, const std::string& engine = "cpu") {
    std::vector<double> f(static_cast<size_t>(n > 0 ? n : 0));
    for (int64_t i = 0; i < n; ++i)
        f[static_cast<size_t>(i)] = static_cast<double>(i < (n + 1) / 2 ? i : i - n) / (d * static_cast<double>(n));
    return rt.tensor<double>(f, {static_cast<int64_t>(f.size())}, engine).to(dtype);
}
inline Tensor rfftfreq(const Runtime& rt, int64_t n, double d = 1.0, DType dtype = DType::f64,
                       const std::string& engine = "cpu") {
    std::vector<double> f(static_cast<size_t>(n > 0 ? n / 2 + 1 : 0));
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<double>(i) / (d * static_cast<double>(n));
    return rt.tensor<double>(f, {static_cast<int64_t>(f.size())}, engine).to(dtype);
}

namespace detail {
// numpy.roll by floor(n/2) (fftshift) or -floor(n/2) (ifftshift) along each axis (None: all).
inline Tensor shift(const Tensor& x, const Axes& axes, bool inverse) {
    std::vector<int64_t> which = axes.values();
    if (!axes.given())
        for (int64_t a = 0; a < x.ndim(); ++a) which.push_back(a);
    Tensor out = x;
    for (int64_t a : which) {
        const int64_t axis = a < 0 ? a + x.ndim() : a;
        const int64_t n = out.shape()[static_cast<size_t>(axis)];
        const int64_t split = inverse ? n / 2 : n - n / 2;  // the first element of the result
        if (n > 1) out = concat({out.slice(axis, split, n), out.slice(axis, 0, split)}, axis);
    }
    return out;
}
}  // namespace detail

// The zero frequency to the centre: numpy.fft.fftshift, and its inverse.
inline Tensor fftshift(const Tensor& x, const Axes& axes = {}) { return detail::shift(x, axes, false); }
inline Tensor ifftshift(const Tensor& x, const Axes& axes = {}) { return detail::shift(x, axes, true); }

}  // namespace ferro::fft
