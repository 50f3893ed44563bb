// The fft family's op schemas and the one description of a call they share with prepare and
// the rules (describe): numpy.fft's argument names, defaults, shapes and dtypes.
#include "fft.hpp"

#include <ferro/schema.hpp>

#include <algorithm>
#include <cmath>

namespace ferro::fft {
namespace {

enum class Arity { one, two, n };  // fft (n, axis) | fft2 (s, axes = (-2, -1)) | fftn (s, axes = None)

struct OpInfo {
    const char* name;
    Kind kind;
    bool inverse, conj_in, conj_out;
    Arity arity;
    const char* doc;
};

constexpr OpInfo infos[] = {
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
};
static_assert(std::size(infos) == static_cast<size_t>(Op::count));

constexpr ferro_dtype float_dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64, FERRO_DTYPE_C64, FERRO_DTYPE_C128};
constexpr int64_t last_two[] = {-2, -1};

constexpr const char* norm_doc =
    "backward (forward unscaled, inverse 1/n) | ortho (both 1/sqrt(n)) | forward (forward 1/n, inverse unscaled)";
constexpr const char* planner_doc =
    "FFTW planner effort: estimate | measure | patient | exhaustive (plans are made once per call signature; "
    "FERRO_FFT_WISDOM keeps measured plans across runs)";

ferro_attr_spec axes_default_last_two() {
    // None is numpy's too: every axis, or the last len(s), as fftn.
    ferro_attr_spec s{sizeof s, FERRO_ATTR_I64_ARRAY, FERRO_ATTR_FLAG_OPTIONAL, 0, "axes", {},
                      "the axes to transform (None: all, or the last len(s), as fftn)"};
    s.default_value.type = FERRO_ATTR_I64_ARRAY;
    s.default_value.count = 2;
    s.default_value.v.i64_array = last_two;
    return s;
}

const ferro_attr_spec one_d_attrs[] = {
    plugin::spec_optional("n", FERRO_ATTR_I64,
                          "length of the transformed axis: the input is zero-padded or truncated to it (None: the "
                          "input's length; irfft and hfft: 2 (m - 1) for m input points)"),
    plugin::spec_i64("axis", -1, "the axis to transform"),
    plugin::spec_str("norm", "backward", norm_doc),
    plugin::spec_str("planner", "estimate", planner_doc)};
const ferro_attr_spec two_d_attrs[] = {
    plugin::spec_optional("s", FERRO_ATTR_I64_ARRAY, "transform lengths per axis (None: the input's; see n)"),
    axes_default_last_two(), plugin::spec_str("norm", "backward", norm_doc),
    plugin::spec_str("planner", "estimate", planner_doc)};
const ferro_attr_spec n_d_attrs[] = {
    plugin::spec_optional("s", FERRO_ATTR_I64_ARRAY, "transform lengths per axis (None: the input's; see n)"),
    plugin::spec_optional("axes", FERRO_ATTR_I64_ARRAY,
                          "axes to transform (None: all, or the last len(s) when s is given)"),
    plugin::spec_str("norm", "backward", norm_doc), plugin::spec_str("planner", "estimate", planner_doc)};

[[noreturn]] void invalid(Op op, const std::string& what) {
    throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": " + what);
}

std::string shape_str(std::span<const int64_t> shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

Norm parse_norm(Op op, const ferro_attr_value& v) {
    const std::string s = v.type == FERRO_ATTR_STR ? v.v.str : "backward";
    if (s == "backward") return Norm::backward;
    if (s == "ortho") return Norm::ortho;
    if (s == "forward") return Norm::forward;
    invalid(op, "attribute norm must be backward, ortho or forward, got \"" + s + "\"");
}

Planner parse_planner(Op op, const ferro_attr_value& v) {
    const std::string s = v.v.str;
    if (s == "estimate") return Planner::estimate;
    if (s == "measure") return Planner::measure;
    if (s == "patient") return Planner::patient;
    if (s == "exhaustive") return Planner::exhaustive;
    invalid(op, "attribute planner must be estimate, measure, patient or exhaustive, got \"" + s + "\"");
}

// The transformed axes, normalised and checked, and the lengths asked for (empty: none given).
void axes_and_lengths(Op op, Arity arity, const ferro_attr_value* attrs, int ndim, std::vector<int64_t>& axes,
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
                invalid(op, "attribute s has " + std::to_string(count) + " entries, more than input 0's " +
                                std::to_string(ndim) + " dimensions");
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

template <Op op>
ferro_status infer(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        const Transform t = describe(op, a->attrs, a->inputs[0]);
        ferro_signature& out = a->outputs[0];
        out = {};
        out.struct_size = sizeof out;
        out.dtype = t.out_dtype;
        out.ndim = static_cast<int32_t>(t.out_shape.size());
        std::copy(t.out_shape.begin(), t.out_shape.end(), out.shape);
        a->n_outputs = 1;
    });
}

template <Op op> ferro_status vjp_of(const ferro_host_api* host, const ferro_vjp_args* a) { return vjp(op, host, a); }
template <Op op> ferro_status jvp_of(const ferro_host_api* host, const ferro_jvp_args* a) { return jvp(op, host, a); }

template <Op op>
ferro_op_schema schema() {
    const OpInfo& info = infos[static_cast<uint32_t>(op)];
    const ferro_attr_spec* attrs = info.arity == Arity::one ? one_d_attrs : info.arity == Arity::two ? two_d_attrs : n_d_attrs;
    ferro_op_schema s{};
    s.struct_size = sizeof s;
    s.name = info.name;
    s.doc = info.doc;
    s.n_inputs = 1;
    s.min_inputs = 1;
    s.n_outputs = 1;
    s.n_attrs = 4;
    s.attrs = attrs;
    s.n_dtypes = info.kind == Kind::r2c ? 2 : 4;  // real transforms of real input only
    s.dtypes = float_dtypes;
    s.infer = infer<op>;
    s.diff_inputs = 1;
    s.diff_outputs = 1;
    s.vjp = vjp_of<op>;
    s.jvp = jvp_of<op>;
    return s;
}

template <size_t... I>
const ferro_op_schema* table(std::index_sequence<I...>) {
    static const ferro_op_schema all[] = {schema<static_cast<Op>(I)>()...};
    return all;
}

}  // namespace

const ferro_op_schema* schemas() { return table(std::make_index_sequence<static_cast<size_t>(Op::count)>{}); }

std::string qualified(Op op) { return std::string("fft.") + infos[static_cast<uint32_t>(op)].name; }

const char* norm_name(Norm norm) {
    return norm == Norm::backward ? "backward" : norm == Norm::ortho ? "ortho" : "forward";
}

int64_t Transform::logical_size() const {
    int64_t n = 1;
    for (int64_t l : lengths) n *= l;
    return n;
}

Transform describe(Op op, const ferro_attr_value* attrs, const ferro_signature& in) {
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
                        (info.arity == Arity::one ? "" : info.arity == Arity::two ? "2" : "n"));
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
                invalid(op, "the output length along axis " + std::to_string(a) + " would be 2 (m - 1) = " +
                                std::to_string(n) + " for m = " + std::to_string(t.in_shape[a]) +
                                " input points; give " + (info.arity == Arity::one ? "n" : "s") + " explicitly");
            }
        }
        if (n <= 0) {
            invalid(op, "axis " + std::to_string(a) + " of input 0 (shape " + shape_str(t.in_shape) +
                            ") is empty; a transform needs at least one point (give " +
                            (info.arity == Arity::one ? "n" : "s") + ")");
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

}  // namespace ferro::fft
