// Reductions over axes: sum, prod, max, min, mean, any, all; attributes `axes` (None = all)
// and `keepdim`. Integer and bool sums are i64 and means f64 (numpy); max/min of bool are
// any/all; an empty reduction gives the identity (mean of nothing is NaN).
#include "ops/core_family.hpp"
#include "ops/op_util.hpp"

#include <algorithm>

namespace ferro::host::ops {
namespace {

constexpr uint32_t kMean = 100;  // not an engine op: a sum followed by a division

// Which input axes are reduced.
boost::container::small_vector<bool, 8> reduced_axes(const CoreOp& op, const ferro_attr_value* attrs, int64_t ndim) {
    boost::container::small_vector<bool, 8> reduced(static_cast<size_t>(ndim), attrs[0].type == FERRO_ATTR_NONE);
    if (attrs[0].type == FERRO_ATTR_NONE) return reduced;
    for (uint32_t i = 0; i < attrs[0].count; ++i) {
        const int64_t axis = normalise_axis(op.qualified, attrs[0].v.i64_array[i], ndim, "axes entry");
        if (reduced[static_cast<size_t>(axis)]) invalid(op.qualified, fmt::format("axis {} is repeated in axes", axis));
        reduced[static_cast<size_t>(axis)] = true;
    }
    return reduced;
}

// {engine op, compute dtype, output dtype}.
struct ReduceTypes {
    uint32_t engine_op;
    ferro_dtype compute, out;
};

ReduceTypes reduce_types(const CoreOp& op, ferro_dtype in) {
    switch (op.code) {
        case FERRO_REDUCE_SUM:
        case FERRO_REDUCE_PROD: {
            const ferro_dtype c = in == FERRO_DTYPE_BOOL ? FERRO_DTYPE_I64 : in;
            return {op.code, c, c};
        }
        case kMean: return {FERRO_REDUCE_SUM, to_inexact(in), to_inexact(in)};
        case FERRO_REDUCE_MAX:
        case FERRO_REDUCE_MIN:
            if (is_complex(in)) invalid(op.qualified, "complex inputs have no order");
            if (in == FERRO_DTYPE_BOOL) {
                return {op.code == FERRO_REDUCE_MAX ? uint32_t{FERRO_REDUCE_ANY} : uint32_t{FERRO_REDUCE_ALL}, in,
                        FERRO_DTYPE_BOOL};
            }
            return {op.code, in, in};
        default: return {op.code, in, FERRO_DTYPE_BOOL};  // any, all
    }
}

void reduce_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto& in = a.inputs[0];
    const auto reduced = reduced_axes(op, a.attrs, in.ndim);
    const bool keepdim = a.attrs[1].v.boolean != 0;
    Dims shape;
    for (int d = 0; d < in.ndim; ++d) {
        if (!reduced[static_cast<size_t>(d)]) shape.push_back(in.shape[d]);
        else if (keepdim) shape.push_back(1);
    }
    set_output(a.outputs[0], reduce_types(op, in.dtype).out, shape);
    a.n_outputs = 1;
}

void reduce_exec(const CoreOp& op, const ferro_host_api* host, const ferro_exec_args& a) {
    const View in(a.inputs[0]);
    const auto reduced = reduced_axes(op, a.attrs, in.ndim());
    const auto types = reduce_types(op, in.v.dtype);
    // The output seen in keepdim layout: one dim per input dim, size 1 where reduced.
    View out(a.outputs[0]);
    const bool keepdim = a.attrs[1].v.boolean != 0;
    Dims shape, strides;
    int64_t count = 1;
    for (int d = 0, o = 0; d < in.ndim(); ++d) {
        if (reduced[static_cast<size_t>(d)]) {
            shape.push_back(1);
            strides.push_back(0);
            count *= in.shape[d];
            if (keepdim) ++o;
        } else {
            shape.push_back(a.outputs[0].shape[o]);
            strides.push_back(a.outputs[0].strides[o]);
            ++o;
        }
    }
    out.set(shape, strides);
    const View x = cast_to(host, a.session, in, types.compute);
    ferro_reduce_args r{sizeof r, types.engine_op, x.v, out.v};
    check(trusted::run(a.session, r, &ferro_engine_iface::reduce));
    if (op.code == kMean) {
        View n = scratch(host, a.session, types.out, {});
        ferro_fill_args f{sizeof f, 0, n.v, {static_cast<double>(count), 0, count}};
        check(trusted::run(a.session, f, &ferro_engine_iface::fill));
        const ferro_tensor_view& o = a.outputs[0];
        const View divisor = broadcast_to(n.v, {o.shape, static_cast<size_t>(o.ndim)});
        ferro_binary_args div{sizeof div, FERRO_BINARY_DIV, o, divisor.v, o};
        check(trusted::run(a.session, div, &ferro_engine_iface::binary));
    }
}

}  // namespace

void add_reduce_ops(std::vector<CoreOp>& ops) {
    struct Spec {
        const char* name;
        uint32_t code;
        const char* doc;
    };
    const Spec specs[] = {
        {"sum", FERRO_REDUCE_SUM, "sum over axes"},
        {"prod", FERRO_REDUCE_PROD, "product over axes"},
        {"max", FERRO_REDUCE_MAX, "maximum over axes (NaN-propagating)"},
        {"min", FERRO_REDUCE_MIN, "minimum over axes (NaN-propagating)"},
        {"mean", kMean, "arithmetic mean over axes"},
        {"any", FERRO_REDUCE_ANY, "any element non-zero, over axes"},
        {"all", FERRO_REDUCE_ALL, "every element non-zero, over axes"},
    };
    for (const auto& s : specs) {
        CoreOp op;
        op.name = s.name;
        op.doc = s.doc;
        op.code = s.code;
        op.attrs = {attr_optional("axes", FERRO_ATTR_I64_ARRAY, "axes to reduce (None: all)"),
                    attr_bool("keepdim", false, "keep reduced axes with size 1")};
        op.infer = reduce_infer;
        op.exec = reduce_exec;
        ops.push_back(std::move(op));
    }
}

}  // namespace ferro::host::ops
