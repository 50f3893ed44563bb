// The fft family's op schemas: numpy.fft's argument names and defaults, with infer from the
// family's contract (describe, ferro/family/fft.hpp).
#include "fft.hpp"

#include <ferro/schema.hpp>

#include <algorithm>
#include <cmath>

namespace ferro::fft {
namespace {

constexpr ferro_dtype float_dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64, FERRO_DTYPE_C64, FERRO_DTYPE_C128};
constexpr int64_t last_two[] = {-2, -1};

constexpr const char* norm_doc =
    "backward (forward unscaled, inverse 1/n) | ortho (both 1/sqrt(n)) | forward (forward 1/n, inverse unscaled)";
constexpr const char* planner_doc =
    "FFTW planner effort: estimate | measure | patient | exhaustive (plans are made once per call signature; "
    "FERRO_FFT_WISDOM keeps measured plans across runs)";

ferro_attr_spec axes_default_last_two() {
    // None is numpy's too: every axis, or the last len(s), as fftn.
    ferro_attr_spec s{sizeof s,
                      FERRO_ATTR_I64_ARRAY,
                      FERRO_ATTR_FLAG_OPTIONAL,
                      0,
                      "axes",
                      {},
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
    plugin::spec_i64("axis", -1, "the axis to transform"), plugin::spec_str("norm", "backward", norm_doc),
    plugin::spec_str("planner", "estimate", planner_doc)};
const ferro_attr_spec two_d_attrs[] = {
    plugin::spec_optional("s", FERRO_ATTR_I64_ARRAY, "transform lengths per axis (None: the input's; see n)"),
    axes_default_last_two(), plugin::spec_str("norm", "backward", norm_doc),
    plugin::spec_str("planner", "estimate", planner_doc)};
const ferro_attr_spec n_d_attrs[] = {
    plugin::spec_optional("s", FERRO_ATTR_I64_ARRAY, "transform lengths per axis (None: the input's; see n)"),
    plugin::spec_optional("axes", FERRO_ATTR_I64_ARRAY, "axes to transform (None: all, or the last len(s) when s is given)"),
    plugin::spec_str("norm", "backward", norm_doc), plugin::spec_str("planner", "estimate", planner_doc)};

template <Op op> ferro_status infer(const ferro_host_api* host, ferro_infer_args* a) {
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

template <Op op> ferro_op_schema schema() {
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

template <size_t... I> const ferro_op_schema* table(std::index_sequence<I...>) {
    static const ferro_op_schema all[] = {schema<static_cast<Op>(I)>()...};
    return all;
}

}  // namespace

const ferro_op_schema* schemas() { return table(std::make_index_sequence<static_cast<size_t>(Op::count)>{}); }

}  // namespace ferro::fft
