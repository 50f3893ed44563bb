// concat and stack: every input is copied (cast to the promoted dtype) into its slice of the
// output.
#include "ops/core_family.hpp"
#include "ops/op_util.hpp"

namespace ferro::host::ops {
namespace {

ferro_dtype promoted(const ferro_infer_args& a) {
    ferro_dtype dt = a.inputs[0].dtype;
    for (uint32_t i = 1; i < a.n_inputs; ++i) dt = promote(dt, a.inputs[i].dtype);
    return dt;
}

void concat_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto& first = a.inputs[0];
    if (first.ndim == 0) invalid(op.qualified, "input 0 is 0-d; concat needs at least 1 dimension");
    const auto axis = normalise_axis(op.qualified, a.attrs[0].v.i64, first.ndim);
    Dims shape(first.shape, first.shape + first.ndim);
    for (uint32_t i = 1; i < a.n_inputs; ++i) {
        const auto& in = a.inputs[i];
        bool ok = in.ndim == first.ndim;
        for (int d = 0; ok && d < in.ndim; ++d) ok = d == axis || in.shape[d] == first.shape[d];
        if (!ok) {
            invalid(op.qualified, fmt::format("input {} has shape {}, expected {} except along axis {}", i,
                                              shape_str(dims_of(in)), shape_str(dims_of(first)), axis));
        }
        shape[static_cast<size_t>(axis)] += in.shape[axis];
    }
    set_output(a.outputs[0], promoted(a), shape);
    a.n_outputs = 1;
}

// Copies input i into `slice` (a view of the output with the input's shape).
void copy_into(const ferro_host_api* host, ferro_session session, const View& in, const View& slice) {
    const View x = cast_to(host, session, in, slice.v.dtype);
    ferro_copy_args c{sizeof c, 0, x.v, slice.v};
    check(trusted::run(session, c, &ferro_engine_iface::copy_strided));
}

void concat_exec(const CoreOp& op, const ferro_host_api* host, const ferro_exec_args& a) {
    const ferro_tensor_view& out = a.outputs[0];
    const auto axis = static_cast<size_t>(normalise_axis(op.qualified, a.attrs[0].v.i64, out.ndim));
    const int64_t item = itemsize(out.dtype);
    int64_t position = 0;
    for (uint32_t i = 0; i < a.n_inputs; ++i) {
        const View in(a.inputs[i]);
        View slice(out);
        slice.shape[axis] = in.shape[axis];
        shift(slice.v, position * out.strides[axis] * item);
        position += in.shape[axis];
        if (numel(in.dims()) > 0) copy_into(host, a.session, in, slice);
    }
}

void stack_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto& first = a.inputs[0];
    const auto axis = normalise_axis(op.qualified, a.attrs[0].v.i64, first.ndim + 1);
    for (uint32_t i = 1; i < a.n_inputs; ++i) {
        if (!std::equal(dims_of(a.inputs[i]).begin(), dims_of(a.inputs[i]).end(), dims_of(first).begin(), dims_of(first).end())) {
            invalid(op.qualified, fmt::format("input {} has shape {}, input 0 has {}; stack needs equal shapes", i,
                                              shape_str(dims_of(a.inputs[i])), shape_str(dims_of(first))));
        }
    }
    Dims shape(first.shape, first.shape + first.ndim);
    shape.insert(shape.begin() + axis, a.n_inputs);
    set_output(a.outputs[0], promoted(a), shape);
    a.n_outputs = 1;
}

void stack_exec(const CoreOp& op, const ferro_host_api* host, const ferro_exec_args& a) {
    const ferro_tensor_view& out = a.outputs[0];
    const auto axis = static_cast<size_t>(normalise_axis(op.qualified, a.attrs[0].v.i64, out.ndim));
    const int64_t item = itemsize(out.dtype);
    for (uint32_t i = 0; i < a.n_inputs; ++i) {
        const View in(a.inputs[i]);
        // The output without the stacked axis, at position i along it.
        View slice(out);
        Dims shape(out.shape, out.shape + out.ndim), strides(out.strides, out.strides + out.ndim);
        shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
        strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(axis));
        slice.set(shape, strides);
        shift(slice.v, static_cast<int64_t>(i) * out.strides[axis] * item);
        if (numel(in.dims()) > 0) copy_into(host, a.session, in, slice);
    }
}

}  // namespace

void add_join_ops(std::vector<CoreOp>& ops) {
    ops.push_back({"concat",
                   "",
                   "join tensors along an existing axis",
                   FERRO_VARIADIC,
                   1,
                   1,
                   {attr_i64("axis", 0, "axis to join along")},
                   concat_infer,
                   concat_exec});
    ops.push_back({"stack",
                   "",
                   "join equal-shaped tensors along a new axis",
                   FERRO_VARIADIC,
                   1,
                   1,
                   {attr_i64("axis", 0, "position of the new axis")},
                   stack_infer,
                   stack_exec});
}

}  // namespace ferro::host::ops
