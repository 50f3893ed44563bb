// JVP (forward-mode) rules of the core ops: output tangent = the op's derivative applied to
// the input tangents. For a holomorphic f that is f'(x) t (no conjugate, unlike the VJP);
// real-valued functions of complex inputs use the real derivative (d|z| = Re(conj(z) dz)/|z|).
// Ops that are linear in their differentiable inputs apply themselves to the tangents.
#include "ops/grad_rules.hpp"

#include <cmath>
#include <cstdlib>

namespace ferro::host::ops {
namespace {

using plugin::TensorRef;

void set_jvp(std::vector<CoreOp>& ops, const char* name, JvpFn jvp) {
    for (CoreOp& op : ops) {
        if (op.name != name) continue;
        if (op.vjp == nullptr) std::abort();  // forward mode only where reverse mode exists
        op.jvp = jvp;
        return;
    }
    std::abort();  // a rule for an op that does not exist: a build-time invariant
}

// Op `name` (one of this op's kind, taking the same attributes) on `inputs`, with the call's
// attributes.
TensorRef with_attrs(const Jvp& j, ferro_core_op op, const std::vector<ferro_tensor>& inputs) {
    std::vector<ferro_named_attr> attrs(j.op.attrs.size());
    for (size_t k = 0; k < attrs.size(); ++k) attrs[k] = {j.op.attrs[k].name, j.attr(static_cast<uint32_t>(k))};
    return j.r.call(op, inputs, attrs);
}

// The op itself on the tangents (zeros for inputs without one), with the call's attributes.
void linear(const Jvp& j) {
    bool any = false;
    for (uint32_t i = 0; i < j.n_inputs(); ++i) any = any || j.t(i) != nullptr;
    if (!any) return;
    std::vector<TensorRef> tangents;
    std::vector<ferro_tensor> handles;
    for (uint32_t i = 0; i < j.n_inputs(); ++i) {
        tangents.push_back(j.t_or_zero(i));
        handles.push_back(tangents.back().get());
    }
    j.set(with_attrs(j, j.op.number, handles));
}

// t * d for the one input of a unary op (d: its derivative at x).
void scale(const Jvp& j, const TensorRef& d) { j.set(j.r.mul(j.t(0), d)); }

void add_unary(std::vector<CoreOp>& ops) {
    for (const char* name : {"neg", "conj", "real", "imag", "cast", "copy", "contiguous"}) set_jvp(ops, name, linear);
    set_jvp(ops, "exp", [](const Jvp& j) { scale(j, j.r.borrow(j.y())); });
    set_jvp(ops, "expm1", [](const Jvp& j) { scale(j, j.r.add(j.y(), j.r.scalar(j.y(), 1))); });
    set_jvp(ops, "log", [](const Jvp& j) { j.set(j.r.div(j.t(0), j.x(0))); });
    set_jvp(ops, "log1p", [](const Jvp& j) { j.set(j.r.div(j.t(0), j.r.add(j.x(0), j.r.scalar(j.x(0), 1)))); });
    set_jvp(ops, "sin", [](const Jvp& j) { scale(j, j.r.unary(FERRO_CORE_OP_COS, j.x(0))); });
    set_jvp(ops, "cos", [](const Jvp& j) { j.set(j.r.neg(j.r.mul(j.t(0), j.r.unary(FERRO_CORE_OP_SIN, j.x(0))))); });
    set_jvp(ops, "tan", [](const Jvp& j) { scale(j, j.r.add(j.r.scalar(j.y(), 1), j.r.mul(j.y(), j.y()))); });
    set_jvp(ops, "tanh", [](const Jvp& j) { scale(j, j.r.sub(j.r.scalar(j.y(), 1), j.r.mul(j.y(), j.y()))); });
    set_jvp(ops, "sinh", [](const Jvp& j) { scale(j, j.r.unary(FERRO_CORE_OP_COSH, j.x(0))); });
    set_jvp(ops, "cosh", [](const Jvp& j) { scale(j, j.r.unary(FERRO_CORE_OP_SINH, j.x(0))); });
    set_jvp(ops, "sqrt", [](const Jvp& j) { j.set(j.r.div(j.t(0), j.r.mul(j.r.scalar(j.y(), 2), j.y()))); });
    set_jvp(ops, "rsqrt",
            [](const Jvp& j) { scale(j, j.r.mul(j.r.scalar(j.y(), -0.5), j.r.mul(j.r.mul(j.y(), j.y()), j.y()))); });
    set_jvp(ops, "reciprocal", [](const Jvp& j) { j.set(j.r.neg(j.r.mul(j.t(0), j.r.mul(j.y(), j.y())))); });
    set_jvp(ops, "square", [](const Jvp& j) { scale(j, j.r.mul(j.r.scalar(j.x(0), 2), j.x(0))); });
    set_jvp(ops, "sigmoid", [](const Jvp& j) { scale(j, j.r.mul(j.y(), j.r.sub(j.r.scalar(j.y(), 1), j.y()))); });
    set_jvp(ops, "arcsin", [](const Jvp& j) {
        j.set(j.r.div(j.t(0), j.r.unary(FERRO_CORE_OP_SQRT, j.r.sub(j.r.scalar(j.x(0), 1), j.r.mul(j.x(0), j.x(0))))));
    });
    set_jvp(ops, "arccos", [](const Jvp& j) {
        j.set(j.r.neg(j.r.div(j.t(0), j.r.unary(FERRO_CORE_OP_SQRT, j.r.sub(j.r.scalar(j.x(0), 1), j.r.mul(j.x(0), j.x(0)))))));
    });
    set_jvp(ops, "arctan", [](const Jvp& j) { j.set(j.r.div(j.t(0), j.r.add(j.r.scalar(j.x(0), 1), j.r.mul(j.x(0), j.x(0))))); });
    set_jvp(ops, "erf", [](const Jvp& j) {
        const TensorRef e = j.r.unary(FERRO_CORE_OP_EXP, j.r.neg(j.r.mul(j.x(0), j.x(0))));
        scale(j, j.r.mul(j.r.scalar(j.x(0), 2 / std::sqrt(M_PI)), e));
    });
    // |z|: Re(conj(z) t) / |z| (sign(x) t for real x), 0 at 0.
    set_jvp(ops, "abs", [](const Jvp& j) {
        const ferro_tensor z = j.x(0), y = j.y();
        const TensorRef num = j.r.real(j.r.mul(j.r.conj(z), j.t(0)));
        const TensorRef zero = j.r.scalar(y, 0);
        j.set(j.r.where(j.r.call(FERRO_CORE_OP_EQ, {y, zero}), zero, j.r.div(num, y)));
    });
    // angle(z): Im(conj(z) t) / |z|^2 for complex z; constant for real inputs.
    set_jvp(ops, "angle", [](const Jvp& j) {
        const ferro_tensor z = j.x(0);
        if (!plugin::is_complex(j.r.signature(z).dtype)) return;
        const TensorRef norm2 = j.r.real(j.r.mul(z, j.r.conj(z)));
        const TensorRef num = j.r.imag(j.r.mul(j.r.conj(z), j.t(0)));
        const TensorRef zero = j.r.scalar(norm2, 0);
        j.set(j.r.where(j.r.call(FERRO_CORE_OP_EQ, {norm2, zero}), zero, j.r.div(num, norm2)));
    });
    // sign: zero for real x; for complex z, (t - y Re(conj(y) t)) / |z| (y = sgn(z); 0 at 0).
    set_jvp(ops, "sign", [](const Jvp& j) {
        const ferro_tensor z = j.x(0), y = j.y();
        if (!plugin::is_complex(j.r.signature(z).dtype)) return;
        const TensorRef mag = j.r.call(FERRO_CORE_OP_ABS, {z});
        const TensorRef radial = j.r.mul(y, j.r.real(j.r.mul(j.r.conj(y), j.t(0))));
        const TensorRef is_zero = j.r.call(FERRO_CORE_OP_EQ, {mag, j.r.scalar(mag, 0)});
        const TensorRef safe = j.r.where(is_zero, j.r.scalar(mag, 1), mag);
        j.set(j.r.where(is_zero, j.r.scalar(z, 0), j.r.div(j.r.sub(j.t(0), radial), safe)));
    });
    for (const char* name : {"floor", "ceil", "round"}) set_jvp(ops, name, [](const Jvp&) {});
}

// maximum/minimum: the winner's tangent, the mean of both on ties (matching the VJP).
void extremum(const Jvp& j, ferro_core_op wins) {
    const TensorRef ta = j.t_or_zero(0), tb = j.t_or_zero(1);
    const TensorRef half = j.r.mul(j.r.add(ta, tb), j.r.scalar(ta, 0.5));
    const TensorRef tie = j.r.call(FERRO_CORE_OP_EQ, {j.x(0), j.x(1)});
    j.set(j.r.where(j.r.call(wins, {j.x(0), j.x(1)}), ta, j.r.where(tie, half, tb)));
}

void add_binary(std::vector<CoreOp>& ops) {
    for (const char* name : {"add", "sub", "complex"}) set_jvp(ops, name, linear);
    set_jvp(ops, "mul", [](const Jvp& j) {  // ta b + a tb
        TensorRef out;
        if (j.t(0)) out = j.r.mul(j.t(0), j.x(1));
        if (j.t(1)) out = out ? j.r.add(out, j.r.mul(j.x(0), j.t(1))) : j.r.mul(j.x(0), j.t(1));
        j.set(std::move(out));
    });
    set_jvp(ops, "div", [](const Jvp& j) {  // (ta - y tb) / b
        const TensorRef num = j.t(1) ? j.r.sub(j.t_or_zero(0), j.r.mul(j.y(), j.t(1))) : j.r.borrow(j.t(0));
        j.set(j.r.div(num, j.x(1)));
    });
    set_jvp(ops, "pow", [](const Jvp& j) {  // b a^(b-1) ta + a^b log(a) tb, masked as the VJP
        const ferro_tensor a = j.x(0), b = j.x(1);
        TensorRef out;
        if (j.t(0)) {
            const TensorRef d = j.r.mul(b, j.r.call(FERRO_CORE_OP_POW, {a, j.r.sub(b, j.r.scalar(b, 1))}));
            const TensorRef term = j.r.mul(d, j.t(0));
            out = j.r.where(j.r.call(FERRO_CORE_OP_EQ, {b, j.r.scalar(b, 0)}), j.r.scalar(term, 0), term);
        }
        if (j.t(1)) {
            const TensorRef term = j.r.mul(j.r.mul(j.y(), j.r.unary(FERRO_CORE_OP_LOG, a)), j.t(1));
            const TensorRef masked =
                j.r.call(FERRO_CORE_OP_LOGICAL_AND, {j.r.call(FERRO_CORE_OP_EQ, {a, j.r.scalar(a, 0)}),
                                                     j.r.call(FERRO_CORE_OP_GE, {j.r.real(b), j.r.scalar(j.r.real(b), 0)})});
            const TensorRef safe = j.r.where(masked, j.r.scalar(term, 0), term);
            out = out ? j.r.add(out, safe) : j.r.borrow(safe.get());
        }
        j.set(std::move(out));
    });
    set_jvp(ops, "maximum", [](const Jvp& j) { extremum(j, FERRO_CORE_OP_GT); });
    set_jvp(ops, "minimum", [](const Jvp& j) { extremum(j, FERRO_CORE_OP_LT); });
    set_jvp(ops, "arctan2", [](const Jvp& j) {  // (x ty - y tx) / (x^2 + y^2)
        const ferro_tensor y = j.x(0), x = j.x(1);
        const TensorRef num = j.r.sub(j.r.mul(x, j.t_or_zero(0)), j.r.mul(y, j.t_or_zero(1)));
        j.set(j.r.div(num, j.r.add(j.r.mul(x, x), j.r.mul(y, y))));
    });
    set_jvp(ops, "where", [](const Jvp& j) {
        if (!j.t(1) && !j.t(2)) return;
        j.set(j.r.where(j.x(0), j.t_or_zero(1), j.t_or_zero(2)));
    });
}

void add_structural(std::vector<CoreOp>& ops) {
    for (const char* name : {"sum", "mean", "reshape", "permute", "transpose", "slice", "expand", "squeeze", "unsqueeze",
                             "diagonal", "concat", "stack"}) {
        set_jvp(ops, name, linear);
    }
    // prod: sum over each group of t times the product of the group's other elements.
    set_jvp(ops, "prod", [](const Jvp& j) {
        const ferro_signature s = j.r.signature(j.x(0));
        const TensorRef others = prod_of_others(j.r, j.x(0), plugin::shape_of(s), j.attr(0));
        j.set(with_attrs(j, FERRO_CORE_OP_SUM, {j.r.mul(j.t(0), others).get()}));
    });
    // max/min: the mean of the tangents at the elements equal to the result (as the VJP).
    auto extremum_reduce = [](const Jvp& j) {
        const ferro_signature s = j.r.signature(j.x(0));
        const auto in = plugin::shape_of(s);
        const std::vector<int64_t> keep = kept_shape(in, j.attr(0));
        const TensorRef hit = j.r.call(FERRO_CORE_OP_EQ, {j.x(0), j.r.expand(j.r.reshape(j.y(), keep), in)});
        const TensorRef picked = j.r.where(hit, j.t(0), j.r.scalar(j.t(0), 0));
        j.set(j.r.div(with_attrs(j, FERRO_CORE_OP_SUM, {picked.get()}), with_attrs(j, FERRO_CORE_OP_SUM, {hit.get()})));
    };
    set_jvp(ops, "max", extremum_reduce);
    set_jvp(ops, "min", extremum_reduce);
    set_jvp(ops, "matmul", [](const Jvp& j) {  // ta b + a tb
        TensorRef out;
        if (j.t(0)) out = j.r.matmul(j.t(0), j.x(1));
        if (j.t(1)) out = out ? j.r.add(out, j.r.matmul(j.x(0), j.t(1))) : j.r.matmul(j.x(0), j.t(1));
        j.set(std::move(out));
    });
}

}  // namespace

void add_jvp_rules(std::vector<CoreOp>& ops) {
    add_unary(ops);
    add_binary(ops);
    add_structural(ops);
}

}  // namespace ferro::host::ops
