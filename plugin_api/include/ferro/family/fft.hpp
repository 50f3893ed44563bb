// ferro plugin ABI — the fft family's contract (header-only C++), for the plugins that serve it.
//
// Family "fft", version 1.1 (libferro_fft.so defines it; fft_vulkan and fft_cuda add modules).
// Its ops, in this order (1.1 appended the last four), each take one input (f32, f64, c64 or
// c128; the r2c ones real only) and give one output, with these attributes in this order (the
// host normalises them: defaults filled, types checked):
//
//   fft ifft rfft irfft hfft ihfft   n (int or None: the input's length), axis (int, -1),
//                                    norm (str, "backward"), planner (str, "estimate")
//   fft2 ifft2 rfft2 irfft2          s (int[] or None: the input's lengths), axes (int[], [-2, -1];
//                                    None: as fftn), norm, planner
//   fftn ifftn rfftn irfftn          s (int[] or None), axes (int[] or None: all axes, or the last
//                                    len(s)), norm, planner
//   hfft2 ihfft2, hfftn ihfftn       as fft2, and as fftn (scipy.fft's and torch.fft's)
//
// Semantics are numpy.fft's (scipy.fft's for the 2-D and N-D hfft and ihfft): n / s zero-pad
// or truncate each transformed axis, the last axis of `axes` is the halved one of the real
// transforms, norm is backward | ortho | forward (None: backward), planner is FFTW's effort
// (other modules may ignore it). describe() turns a call into the Transform it asks for, output
// dtype and shape included, with the family's own error messages: a module for another engine
// computes exactly that. A family of another major version may differ: bind with
// ferro/family_binding.hpp, which checks the major and maps the ops by name.
#pragma once

#include "ferro/plugin.hpp"
#include "ferro/rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferro::family::fft {

inline constexpr const char* kId = "fft";
inline constexpr const char* kVersion = "1.1.0";
inline constexpr int kMajor = 1;

enum class Op : uint32_t {
    fft,
    ifft,
    rfft,
    irfft,
    hfft,
    ihfft,
    fft2,
    ifft2,
    rfft2,
    irfft2,
    fftn,
    ifftn,
    rfftn,
    irfftn,
    hfft2,
    ihfft2,
    hfftn,
    ihfftn,
    count
};

// complex -> complex, real -> half spectrum, half spectrum -> real.
enum class Kind { c2c, r2c, c2r };
enum class Norm { backward, ortho, forward };
enum class Planner { estimate, measure, patient, exhaustive };

// numpy's _swap_direction: backward <-> forward, ortho stays. It is also the norm of the
// adjoint transform (the adjoint of a scaling by c is the same scaling).
inline Norm dual(Norm norm) {
    return norm == Norm::backward ? Norm::forward : norm == Norm::forward ? Norm::backward : Norm::ortho;
}

// A call as the transform it is, validated (bad input throws INVALID_ARGUMENT naming the op).
struct Transform {
    Op op = Op::count;
    Kind kind = Kind::c2c;
    bool inverse = false;   // scaled by 1/N under norm "backward" (ifft*, irfft*, ihfft)
    int sign = -1;          // exponent sign of the DFT (c2c: +1 for ifft*)
    bool conj_in = false;   // hfft: irfft of conj(x)
    bool conj_out = false;  // ihfft: conj of rfft(x)
    Norm norm = Norm::backward;
    Planner planner = Planner::estimate;
    ferro_dtype in_dtype = FERRO_DTYPE_INVALID;    // as given
    ferro_dtype work_dtype = FERRO_DTYPE_INVALID;  // what the transform reads: complex, or real for r2c
    ferro_dtype out_dtype = FERRO_DTYPE_INVALID;
    std::vector<int64_t> in_shape;   // the input's
    std::vector<int64_t> fit_shape;  // after padding / truncation (c2r: last axis n/2 + 1)
    std::vector<int64_t> out_shape;
    std::vector<int64_t> axes;     // normalised, in the order given: the last is halved (r2c, c2r)
    std::vector<int64_t> lengths;  // logical transform length per axis (numpy's s)
    double scale = 1;              // applied to the output

    int64_t logical_size() const {  // N: product of lengths
        int64_t n = 1;
        for (int64_t l : lengths) n *= l;
        return n;
    }
    int64_t half_len() const { return lengths.back() / 2 + 1; }  // the halved axis' half spectrum
};

enum class Arity { one, two, n };  // fft (n, axis) | fft2 (s, axes = (-2, -1)) | fftn (s, axes = None)

// Each op, in the order of Op: name, kind, direction, conjugations, arity, one-line doc.
struct OpInfo {
    const char* name;
    Kind kind;
    bool inverse, conj_in, conj_out;
    Arity arity;
    const char* doc;
};

inline constexpr OpInfo infos[] = {
    {"fft", Kind::c2c, false, false, false, Arity::one, "1-D discrete Fourier transform"},
    {"ifft", Kind::c2c, true, false, false, Arity::one, "1-D inverse discrete Fourier transform"},
    {"rfft", Kind::r2c, false, false, false, Arity::one, "1-D DFT of real input: the n/2 + 1 non-negative frequencies"},
    {"irfft", Kind::c2r, true, false, false, Arity::one, "inverse of rfft: n real points from n/2 + 1 frequencies"},
    {"hfft", Kind::c2r, false, true, false, Arity::one, "DFT of a Hermitian-symmetric signal given by its first half: real"},
    {"ihfft", Kind::r2c, true, false, true, Arity::one, "inverse of hfft: the half spectrum of a real signal's inverse DFT"},
    {"fft2", Kind::c2c, false, false, false, Arity::two, "2-D discrete Fourier transform"},
    {"ifft2", Kind::c2c, true, false, false, Arity::two, "2-D inverse discrete Fourier transform"},
    {"rfft2", Kind::r2c, false, false, false, Arity::two, "2-D DFT of real input (last axis halved)"},
    {"irfft2", Kind::c2r, true, false, false, Arity::two, "inverse of rfft2"},
    {"fftn", Kind::c2c, false, false, false, Arity::n, "N-D discrete Fourier transform"},
    {"ifftn", Kind::c2c, true, false, false, Arity::n, "N-D inverse discrete Fourier transform"},
    {"rfftn", Kind::r2c, false, false, false, Arity::n, "N-D DFT of real input (last axis halved)"},
    {"irfftn", Kind::c2r, true, false, false, Arity::n, "inverse of rfftn"},
    {"hfft2", Kind::c2r, false, true, false, Arity::two,
     "2-D DFT of a Hermitian-symmetric signal given by its half (last axis halved): real"},
    {"ihfft2", Kind::r2c, true, false, true, Arity::two,
     "inverse of hfft2: the half spectrum of a real signal's inverse 2-D DFT"},
    {"hfftn", Kind::c2r, false, true, false, Arity::n,
     "N-D DFT of a Hermitian-symmetric signal given by its half (last axis halved): real"},
    {"ihfftn", Kind::r2c, true, false, true, Arity::n, "inverse of hfftn: the half spectrum of a real signal's inverse N-D DFT"},
};
static_assert(std::size(infos) == static_cast<size_t>(Op::count));

inline const char* op_name(Op op) { return infos[static_cast<uint32_t>(op)].name; }  // "rfft"
inline std::string qualified(Op op) { return std::string("fft.") + op_name(op); }    // "fft.rfft"

[[noreturn]] inline void invalid(Op op, const std::string& what) {
    throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": " + what);
}

inline std::string shape_str(std::span<const int64_t> shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

inline Norm parse_norm(Op op, const ferro_attr_value& v) {
    const std::string s = v.type == FERRO_ATTR_STR ? v.v.str : "backward";
    if (s == "backward") return Norm::backward;
    if (s == "ortho") return Norm::ortho;
    if (s == "forward") return Norm::forward;
    invalid(op, "attribute norm must be backward, ortho or forward, got \"" + s + "\"");
}

inline Planner parse_planner(Op op, const ferro_attr_value& v) {
    const std::string s = v.v.str;
    if (s == "estimate") return Planner::estimate;
    if (s == "measure") return Planner::measure;
    if (s == "patient") return Planner::patient;
    if (s == "exhaustive") return Planner::exhaustive;
    invalid(op, "attribute planner must be estimate, measure, patient or exhaustive, got \"" + s + "\"");
}

// The transformed axes, normalised and checked, and the lengths asked for (empty: none given).
inline void axes_and_lengths(Op op, Arity arity, const ferro_attr_value* attrs, int ndim, std::vector<int64_t>& axes,
                             std::vector<int64_t>& lengths) {
    std::vector<int64_t> given;
    if (arity == Arity::one) {
        given.push_back(attrs[1].v.i64);
        if (attrs[0].type != FERRO_ATTR_NONE) lengths.push_back(attrs[0].v.i64);
    } else {
        if (attrs[0].type != FERRO_ATTR_NONE) lengths.assign(attrs[0].v.i64_array, attrs[0].v.i64_array + attrs[0].count);
        if (attrs[1].type != FERRO_ATTR_NONE) {
            given.assign(attrs[1].v.i64_array, attrs[1].v.i64_array + attrs[1].count);
        } else {  // fftn family: all axes, or the last len(s)
            const int64_t count = lengths.empty() ? ndim : static_cast<int64_t>(lengths.size());
            if (count > ndim) {
                invalid(op, "attribute s has " + std::to_string(count) + " entries, more than input 0's " + std::to_string(ndim) +
                                " dimensions");
            }
            for (int64_t a = ndim - count; a < ndim; ++a) given.push_back(a);
        }
    }
    for (size_t i = 0; i < given.size(); ++i) {
        const int64_t a = given[i];
        if (a < -ndim || a >= ndim) {
            invalid(op, (arity == Arity::one ? "attribute axis " : "axes entry " + std::to_string(i) + " is ") +
                            std::to_string(a) + (arity == Arity::one ? " is" : ",") + " out of range for input 0 with " +
                            std::to_string(ndim) + " dimensions");
        }
        const int64_t normal = a < 0 ? a + ndim : a;
        if (std::find(axes.begin(), axes.end(), normal) != axes.end()) {
            invalid(op, "axes entry " + std::to_string(i) + " repeats axis " + std::to_string(normal));
        }
        axes.push_back(normal);
    }
    if (!lengths.empty() && lengths.size() != axes.size()) {
        invalid(op, "attribute s has " + std::to_string(lengths.size()) + " entries but axes names " +
                        std::to_string(axes.size()) + " axes");
    }
    for (size_t i = 0; i < lengths.size(); ++i) {
        if (lengths[i] <= 0) {
            invalid(op, (arity == Arity::one ? std::string("attribute n") : "s entry " + std::to_string(i)) +
                            " must be positive, got " + std::to_string(lengths[i]));
        }
    }
}

inline const char* norm_name(Norm norm) {
    return norm == Norm::backward ? "backward" : norm == Norm::ortho ? "ortho" : "forward";
}

// The transform a call of `op` with (normalised) `attrs` on an input of signature `in` asks for.
inline Transform describe(Op op, const ferro_attr_value* attrs, const ferro_signature& in) {
    const OpInfo& info = infos[static_cast<uint32_t>(op)];
    Transform t;
    t.op = op;
    t.kind = info.kind;
    t.inverse = info.inverse;
    t.conj_in = info.conj_in;
    t.conj_out = info.conj_out;
    t.sign = info.kind == Kind::c2c ? (info.inverse ? 1 : -1) : info.kind == Kind::r2c ? -1 : 1;
    t.norm = parse_norm(op, attrs[2]);
    t.planner = parse_planner(op, attrs[3]);
    t.in_dtype = in.dtype;
    const bool complex_in = plugin::is_complex(in.dtype);
    if (in.dtype != FERRO_DTYPE_F32 && in.dtype != FERRO_DTYPE_F64 && !complex_in) {
        invalid(op, std::string("input 0 must be f32, f64, c64 or c128, got ") + plugin::dtype_attr_name(in.dtype));
    }
    if (info.kind == Kind::r2c && complex_in) {
        invalid(op, std::string("input 0 must be real (f32 or f64), got ") + plugin::dtype_attr_name(in.dtype) +
                        "; the transform of complex input is fft." + (info.inverse ? "ifft" : "fft") +
                        (info.arity == Arity::one   ? ""
                         : info.arity == Arity::two ? "2"
                                                    : "n"));
    }
    t.work_dtype = info.kind == Kind::r2c ? in.dtype : plugin::complex_dtype(in.dtype);
    t.out_dtype = info.kind == Kind::c2r ? plugin::real_dtype(in.dtype) : plugin::complex_dtype(in.dtype);
    t.in_shape.assign(in.shape, in.shape + in.ndim);

    std::vector<int64_t> asked;
    axes_and_lengths(op, info.arity, attrs, in.ndim, t.axes, asked);
    if (t.axes.empty() && info.kind != Kind::c2c) invalid(op, "a real transform needs at least one axis");
    t.fit_shape = t.in_shape;
    t.out_shape = t.in_shape;
    for (size_t i = 0; i < t.axes.size(); ++i) {
        const int64_t a = t.axes[i];
        const bool halved = info.kind != Kind::c2c && i + 1 == t.axes.size();
        int64_t n = asked.empty() ? t.in_shape[a] : asked[i];
        if (asked.empty() && halved && info.kind == Kind::c2r) {
            n = 2 * (t.in_shape[a] - 1);
            if (n <= 0) {
                invalid(op, "the output length along axis " + std::to_string(a) + " would be 2 (m - 1) = " + std::to_string(n) +
                                " for m = " + std::to_string(t.in_shape[a]) + " input points; give " +
                                (info.arity == Arity::one ? "n" : "s") + " explicitly");
            }
        }
        if (n <= 0) {
            invalid(op, "axis " + std::to_string(a) + " of input 0 (shape " + shape_str(t.in_shape) +
                            ") is empty; a transform needs at least one point (give " + (info.arity == Arity::one ? "n" : "s") +
                            ")");
        }
        t.lengths.push_back(n);
        t.fit_shape[a] = halved && info.kind == Kind::c2r ? n / 2 + 1 : n;
        t.out_shape[a] = halved && info.kind == Kind::r2c ? n / 2 + 1 : n;
    }
    const double size = static_cast<double>(t.logical_size());
    switch (t.norm) {
        case Norm::backward: t.scale = t.inverse ? 1.0 / size : 1.0; break;
        case Norm::forward: t.scale = t.inverse ? 1.0 : 1.0 / size; break;
        case Norm::ortho: t.scale = 1.0 / std::sqrt(size); break;
    }
    return t;
}

// ---- for modules that run on an engine's primitives (session executors) ----

// The part of `in` the transform reads (its first `read_shape` elements along each axis) into
// `dst`: conjugated for hfft, converted where the dtypes differ (real input of a complex
// transform), copied otherwise. `read_shape` is borrowed by the view: it outlives the call.
inline void gather_input(const ferro_host_api* host, ferro_session session, const Transform& t, ferro_tensor_view in,
                         const std::vector<int64_t>& read_shape, const ferro_tensor_view& dst) {
    in.shape = read_shape.data();
    if (t.conj_in && plugin::is_complex(in.dtype)) {
        ferro_unary_args conj{sizeof conj, FERRO_UNARY_CONJ, in, dst};
        plugin::check(host, host->session_unary(session, &conj));
    } else if (in.dtype != dst.dtype) {
        ferro_cast_args cast{sizeof cast, 0, in, dst};
        plugin::check(host, host->session_cast(session, &cast));
    } else {
        ferro_copy_args copy{sizeof copy, 0, in, dst};
        plugin::check(host, host->session_copy_strided(session, &copy));
    }
}

// The transform's result into `out`, times `scale` (a view of one element broadcast to out's
// shape) when the norm scales, then conjugated in place for ihfft.
inline void scatter_output(const ferro_host_api* host, ferro_session session, const Transform& t, const ferro_tensor_view& result,
                           const ferro_tensor_view* scale, const ferro_tensor_view& out) {
    if (scale != nullptr) {
        ferro_binary_args mul{sizeof mul, FERRO_BINARY_MUL, result, *scale, out};
        plugin::check(host, host->session_binary(session, &mul));
    } else {
        ferro_copy_args copy{sizeof copy, 0, result, out};
        plugin::check(host, host->session_copy_strided(session, &copy));
    }
    if (t.conj_out) {
        ferro_unary_args conj{sizeof conj, FERRO_UNARY_CONJ, out, out};
        plugin::check(host, host->session_unary(session, &conj));
    }
}

}  // namespace ferro::family::fft
