// VJP rules of the elementwise core ops. For a holomorphic f the rule is g * conj(f'(x));
// real-valued functions of complex inputs (abs, angle, real, imag) follow PyTorch: the
// cotangent is dL/dRe + i dL/dIm. Cotangents come back in the output's broadcast shape and
// the host reduces them to each input's shape.
#include "ops/grad_rules.hpp"

#include <cmath>

namespace ferro::host::ops {
namespace {

using plugin::TensorRef;

constexpr uint64_t kIn0 = FERRO_MASK_BIT(0), kIn1 = FERRO_MASK_BIT(1), kIn2 = FERRO_MASK_BIT(2);
constexpr uint64_t kBoth = kIn0 | kIn1, kOut0 = FERRO_MASK_BIT(0);

// g * conj(d), the cotangent of a holomorphic function with derivative d.
TensorRef times_conj(const Vjp& v, const TensorRef& d) { return v.r.mul(v.g(), v.r.conj(d)); }

// Tables of rules, one op each: clang-format would break every call whose lambda is not last.
// clang-format off
void add_unary(std::vector<CoreOp>& ops) {
    set_rule(ops, "neg", [](const Vjp& v) { v.set(0, v.r.neg(v.g())); }, kIn0, 0, 0);
    set_rule(ops, "conj", [](const Vjp& v) { v.set(0, v.r.conj(v.g())); }, kIn0, 0, 0);
    set_rule(ops, "exp", [](const Vjp& v) { v.set(0, times_conj(v, v.r.borrow(v.y()))); }, kIn0, 0, kOut0);
    set_rule(ops, "expm1", [](const Vjp& v) { v.set(0, times_conj(v, v.r.add(v.y(), v.r.scalar(v.y(), 1)))); },
             kIn0, 0, kOut0);
    set_rule(ops, "log", [](const Vjp& v) { v.set(0, v.r.div(v.g(), v.r.conj(v.x(0)))); }, kIn0, kIn0, 0);
    set_rule(ops, "log1p", [](const Vjp& v) {
        v.set(0, v.r.div(v.g(), v.r.conj(v.r.add(v.x(0), v.r.scalar(v.x(0), 1)))));
    }, kIn0, kIn0, 0);
    set_rule(ops, "sin", [](const Vjp& v) { v.set(0, times_conj(v, v.r.unary(FERRO_CORE_OP_COS, v.x(0)))); }, kIn0, kIn0, 0);
    set_rule(ops, "cos", [](const Vjp& v) {
        v.set(0, v.r.neg(times_conj(v, v.r.unary(FERRO_CORE_OP_SIN, v.x(0)))));
    }, kIn0, kIn0, 0);
    set_rule(ops, "tan", [](const Vjp& v) {  // 1 + tan^2
        v.set(0, times_conj(v, v.r.add(v.r.scalar(v.y(), 1), v.r.mul(v.y(), v.y()))));
    }, kIn0, 0, kOut0);
    set_rule(ops, "tanh", [](const Vjp& v) {  // 1 - tanh^2
        v.set(0, times_conj(v, v.r.sub(v.r.scalar(v.y(), 1), v.r.mul(v.y(), v.y()))));
    }, kIn0, 0, kOut0);
    set_rule(ops, "sinh", [](const Vjp& v) { v.set(0, times_conj(v, v.r.unary(FERRO_CORE_OP_COSH, v.x(0)))); }, kIn0, kIn0, 0);
    set_rule(ops, "cosh", [](const Vjp& v) { v.set(0, times_conj(v, v.r.unary(FERRO_CORE_OP_SINH, v.x(0)))); }, kIn0, kIn0, 0);
    set_rule(ops, "sqrt", [](const Vjp& v) {  // 1 / (2 sqrt(x))
        v.set(0, v.r.div(v.g(), v.r.conj(v.r.mul(v.r.scalar(v.y(), 2), v.y()))));
    }, kIn0, 0, kOut0);
    set_rule(ops, "rsqrt", [](const Vjp& v) {  // -x^(-3/2) / 2 = -y^3 / 2
        const TensorRef y3 = v.r.mul(v.r.mul(v.y(), v.y()), v.y());
        v.set(0, times_conj(v, v.r.mul(v.r.scalar(v.y(), -0.5), y3)));
    }, kIn0, 0, kOut0);
    set_rule(ops, "reciprocal", [](const Vjp& v) {  // -1/x^2 = -y^2
        v.set(0, v.r.neg(times_conj(v, v.r.mul(v.y(), v.y()))));
    }, kIn0, 0, kOut0);
    set_rule(ops, "square", [](const Vjp& v) {
        v.set(0, times_conj(v, v.r.mul(v.r.scalar(v.x(0), 2), v.x(0))));
    }, kIn0, kIn0, 0);
    set_rule(ops, "sigmoid", [](const Vjp& v) {  // y (1 - y)
        v.set(0, times_conj(v, v.r.mul(v.y(), v.r.sub(v.r.scalar(v.y(), 1), v.y()))));
    }, kIn0, 0, kOut0);
    set_rule(ops, "arcsin", [](const Vjp& v) {  // 1 / sqrt(1 - x^2)
        const TensorRef s = v.r.unary(FERRO_CORE_OP_SQRT, v.r.sub(v.r.scalar(v.x(0), 1), v.r.mul(v.x(0), v.x(0))));
        v.set(0, v.r.div(v.g(), v.r.conj(s)));
    }, kIn0, kIn0, 0);
    set_rule(ops, "arccos", [](const Vjp& v) {
        const TensorRef s = v.r.unary(FERRO_CORE_OP_SQRT, v.r.sub(v.r.scalar(v.x(0), 1), v.r.mul(v.x(0), v.x(0))));
        v.set(0, v.r.neg(v.r.div(v.g(), v.r.conj(s))));
    }, kIn0, kIn0, 0);
    set_rule(ops, "arctan", [](const Vjp& v) {  // 1 / (1 + x^2)
        v.set(0, v.r.div(v.g(), v.r.conj(v.r.add(v.r.scalar(v.x(0), 1), v.r.mul(v.x(0), v.x(0))))));
    }, kIn0, kIn0, 0);
    set_rule(ops, "erf", [](const Vjp& v) {  // 2/sqrt(pi) exp(-x^2), real inputs only
        const TensorRef e = v.r.unary(FERRO_CORE_OP_EXP, v.r.neg(v.r.mul(v.x(0), v.x(0))));
        v.set(0, v.r.mul(v.g(), v.r.mul(v.r.scalar(v.x(0), 2 / std::sqrt(M_PI)), e)));
    }, kIn0, kIn0, 0);
    // |x|: x / |x| (the sign for real x, z / |z| for complex), 0 at 0.
    set_rule(ops, "abs", [](const Vjp& v) {
        const TensorRef zero = v.r.scalar(v.y(), 0);
        const TensorRef sgn = v.r.where(v.r.call(FERRO_CORE_OP_EQ, {v.y(), zero}), v.r.scalar(v.x(0), 0), v.r.div(v.x(0), v.y()));
        v.set(0, v.r.mul(v.g(), sgn));
    }, kIn0, kIn0, kOut0);
    // angle(z) = atan2(Im z, Re z): i z / |z|^2 for complex z, 0 for real inputs.
    set_rule(ops, "angle", [](const Vjp& v) {
        const ferro_tensor z = v.x(0);
        if (!plugin::is_complex(v.sig(0).dtype)) return;
        const TensorRef norm2 = v.r.real(v.r.mul(z, v.r.conj(z)));
        const TensorRef iz = v.r.mul(z, v.r.scalar(z, 0, 1));
        const TensorRef d = v.r.where(v.r.call(FERRO_CORE_OP_EQ, {norm2, v.r.scalar(norm2, 0)}), v.r.scalar(z, 0), v.r.div(iz, norm2));
        v.set(0, v.r.mul(v.g(), d));
    }, kIn0, kIn0, 0);
    set_rule(ops, "real", [](const Vjp& v) { v.set(0, v.r.borrow(v.g())); }, kIn0, 0, 0);
    // imag(z): i g for complex z; a real input's imaginary part is constant.
    set_rule(ops, "imag", [](const Vjp& v) {
        if (!plugin::is_complex(v.sig(0).dtype)) return;
        v.set(0, v.r.call(FERRO_CORE_OP_COMPLEX, {v.r.zeros_like(v.g()), v.g()}));
    }, kIn0, 0, 0);
    // sign: piecewise constant for real x (no gradient). For complex z, sgn(z) = z / |z| moves
    // with z's phase: g_z = (g - y Re(conj(y) g)) / |z| (y = sgn(z); 0 at 0), as PyTorch's sgn.
    set_rule(ops, "sign", [](const Vjp& v) {
        if (!plugin::is_complex(v.sig(0).dtype)) return;
        const ferro_tensor z = v.x(0), y = v.y();
        const TensorRef mag = v.r.call(FERRO_CORE_OP_ABS, {z});
        const TensorRef radial = v.r.mul(y, v.r.real(v.r.mul(v.r.conj(y), v.g())));
        const TensorRef is_zero = v.r.call(FERRO_CORE_OP_EQ, {mag, v.r.scalar(mag, 0)});
        const TensorRef safe = v.r.where(is_zero, v.r.scalar(mag, 1), mag);
        v.set(0, v.r.where(is_zero, v.r.scalar(z, 0), v.r.div(v.r.sub(v.g(), radial), safe)));
    }, kIn0, kIn0, kOut0);
    // Piecewise constant: the gradient is zero (NULL) almost everywhere, as in PyTorch.
    for (const char* name : {"floor", "ceil", "round"}) set_rule(ops, name, [](const Vjp&) {}, kIn0, 0, 0);
}

// maximum/minimum: the gradient goes to the winner, split evenly on ties (as PyTorch).
void extremum(const Vjp& v, ferro_core_op wins) {
    const TensorRef half = v.r.mul(v.g(), v.r.scalar(v.g(), 0.5));
    const TensorRef zero = v.r.scalar(v.g(), 0);
    const TensorRef tie = v.r.call(FERRO_CORE_OP_EQ, {v.x(0), v.x(1)});
    for (uint32_t i = 0; i < 2; ++i) {
        if (!v.needs(i)) continue;
        const TensorRef won = v.r.call(wins, {v.x(i), v.x(1 - i)});
        v.set(i, v.r.where(won, v.g(), v.r.where(tie, half, zero)));
    }
}

void add_binary(std::vector<CoreOp>& ops) {
    set_rule(ops, "add", [](const Vjp& v) {
        v.set(0, v.r.borrow(v.g()));
        v.set(1, v.r.borrow(v.g()));
    }, kBoth, 0, 0);
    set_rule(ops, "sub", [](const Vjp& v) {
        v.set(0, v.r.borrow(v.g()));
        v.set(1, v.r.neg(v.g()));
    }, kBoth, 0, 0);
    set_rule(ops, "mul", [](const Vjp& v) {
        if (v.needs(0)) v.set(0, v.r.mul(v.g(), v.r.conj(v.x(1))));
        if (v.needs(1)) v.set(1, v.r.mul(v.g(), v.r.conj(v.x(0))));
    }, kBoth, kBoth, 0);
    // a / b: g / conj(b) and -g conj(a / b) / conj(b).
    set_rule(ops, "div", [](const Vjp& v) {
        TensorRef ga = v.r.div(v.g(), v.r.conj(v.x(1)));
        if (v.needs(1)) v.set(1, v.r.neg(v.r.mul(ga, v.r.conj(v.y()))));
        v.set(0, std::move(ga));
    }, kBoth, kIn1, kOut0);
    // a^b: b a^(b-1) (0 where b = 0) and a^b log(a) (0 where a = 0 and b >= 0), as PyTorch.
    set_rule(ops, "pow", [](const Vjp& v) {
        const ferro_tensor a = v.x(0), b = v.x(1);
        if (v.needs(0)) {
            const TensorRef d = v.r.mul(b, v.r.call(FERRO_CORE_OP_POW, {a, v.r.sub(b, v.r.scalar(b, 1))}));
            const TensorRef b_zero = v.r.call(FERRO_CORE_OP_EQ, {b, v.r.scalar(b, 0)});
            v.set(0, v.r.where(b_zero, v.r.scalar(v.g(), 0), times_conj(v, d)));
        }
        if (v.needs(1)) {
            const TensorRef d = v.r.mul(v.y(), v.r.unary(FERRO_CORE_OP_LOG, a));
            const TensorRef masked = v.r.call(FERRO_CORE_OP_LOGICAL_AND, {v.r.call(FERRO_CORE_OP_EQ, {a, v.r.scalar(a, 0)}),
                                                                   v.r.call(FERRO_CORE_OP_GE, {v.r.real(b), v.r.scalar(v.r.real(b), 0)})});
            v.set(1, v.r.where(masked, v.r.scalar(v.g(), 0), times_conj(v, d)));
        }
    }, kBoth, kBoth, kOut0);
    set_rule(ops, "maximum", [](const Vjp& v) { extremum(v, FERRO_CORE_OP_GT); }, kBoth, kBoth, 0);
    set_rule(ops, "minimum", [](const Vjp& v) { extremum(v, FERRO_CORE_OP_LT); }, kBoth, kBoth, 0);
    // arctan2(y, x): (x, -y) / (x^2 + y^2), real inputs only.
    set_rule(ops, "arctan2", [](const Vjp& v) {
        const ferro_tensor y = v.x(0), x = v.x(1);
        const TensorRef gn = v.r.div(v.g(), v.r.add(v.r.mul(x, x), v.r.mul(y, y)));
        if (v.needs(0)) v.set(0, v.r.mul(gn, x));
        if (v.needs(1)) v.set(1, v.r.neg(v.r.mul(gn, y)));
    }, kBoth, kBoth, 0);
    // complex(re, im) = re + i im.
    set_rule(ops, "complex", [](const Vjp& v) {
        if (v.needs(0)) v.set(0, v.r.real(v.g()));
        if (v.needs(1)) v.set(1, v.r.imag(v.g()));
    }, kBoth, 0, 0);
}

void add_selection(std::vector<CoreOp>& ops) {
    set_rule(ops, "where", [](const Vjp& v) {
        const TensorRef zero = v.r.scalar(v.g(), 0);
        if (v.needs(1)) v.set(1, v.r.where(v.x(0), v.g(), zero));
        if (v.needs(2)) v.set(2, v.r.where(v.x(0), zero, v.g()));
    }, kIn1 | kIn2, kIn0, 0);
    // The host casts the cotangent back to the input's dtype (keeping the real part).
    for (const char* name : {"cast", "copy", "contiguous"}) {
        set_rule(ops, name, [](const Vjp& v) { v.set(0, v.r.borrow(v.g())); }, kIn0, 0, 0);
    }
}
// clang-format on

}  // namespace

void add_elementwise_rules(std::vector<CoreOp>& ops) {
    add_unary(ops);
    add_binary(ops);
    add_selection(ops);
}

void set_rule(std::vector<CoreOp>& ops, const char* name, VjpFn vjp, uint64_t diff_inputs, uint64_t save_inputs,
              uint64_t save_outputs) {
    for (CoreOp& op : ops) {
        if (op.name != name) continue;
        op.vjp = vjp;
        op.diff_inputs = diff_inputs;
        op.save_inputs = save_inputs;
        op.save_outputs = save_outputs;
        return;
    }
    std::abort();  // a rule for an op that does not exist: a build-time invariant
}

}  // namespace ferro::host::ops
