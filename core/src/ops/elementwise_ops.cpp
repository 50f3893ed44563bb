// Elementwise core ops: every engine unary and binary op under its numpy name, where, cast and
// copy. Inputs broadcast (numpy rules) and promote (tensor/dtype.hpp) before the engine runs.
#include "ops/core_family.hpp"
#include "ops/op_util.hpp"

#include <array>

namespace ferro::host::ops {
namespace {

// How a unary op maps its input dtype to the dtype it computes in and the dtype it returns.
enum class UnaryKind { float_fn, real_float_fn, same, magnitude, real_part, imag_part, angle, predicate };

struct UnarySpec {
    const char* name;
    uint32_t code;
    UnaryKind kind;
    const char* doc;
};

constexpr UnarySpec kUnary[] = {
    {"neg", FERRO_UNARY_NEG, UnaryKind::same, "-x"},
    {"conj", FERRO_UNARY_CONJ, UnaryKind::same, "complex conjugate (identity for real inputs)"},
    {"abs", FERRO_UNARY_ABS, UnaryKind::magnitude, "|x| (complex -> real)"},
    {"exp", FERRO_UNARY_EXP, UnaryKind::float_fn, "e^x"},
    {"log", FERRO_UNARY_LOG, UnaryKind::float_fn, "natural logarithm"},
    {"sin", FERRO_UNARY_SIN, UnaryKind::float_fn, "sine"},
    {"cos", FERRO_UNARY_COS, UnaryKind::float_fn, "cosine"},
    {"tan", FERRO_UNARY_TAN, UnaryKind::float_fn, "tangent"},
    {"tanh", FERRO_UNARY_TANH, UnaryKind::float_fn, "hyperbolic tangent"},
    {"sqrt", FERRO_UNARY_SQRT, UnaryKind::float_fn, "square root"},
    {"rsqrt", FERRO_UNARY_RSQRT, UnaryKind::float_fn, "1 / sqrt(x)"},
    {"sign", FERRO_UNARY_SIGN, UnaryKind::same, "sign (complex: x/|x|, as torch.sgn)"},
    {"real", FERRO_UNARY_REAL, UnaryKind::real_part, "real part"},
    {"imag", FERRO_UNARY_IMAG, UnaryKind::imag_part, "imaginary part (0 for real inputs)"},
    {"reciprocal", FERRO_UNARY_RECIPROCAL, UnaryKind::float_fn, "1 / x"},
    {"square", FERRO_UNARY_SQUARE, UnaryKind::same, "x * x"},
    {"expm1", FERRO_UNARY_EXPM1, UnaryKind::float_fn, "e^x - 1"},
    {"log1p", FERRO_UNARY_LOG1P, UnaryKind::float_fn, "log(1 + x)"},
    {"sinh", FERRO_UNARY_SINH, UnaryKind::float_fn, "hyperbolic sine"},
    {"cosh", FERRO_UNARY_COSH, UnaryKind::float_fn, "hyperbolic cosine"},
    {"arcsin", FERRO_UNARY_ASIN, UnaryKind::float_fn, "inverse sine"},
    {"arccos", FERRO_UNARY_ACOS, UnaryKind::float_fn, "inverse cosine"},
    {"arctan", FERRO_UNARY_ATAN, UnaryKind::float_fn, "inverse tangent"},
    {"sigmoid", FERRO_UNARY_SIGMOID, UnaryKind::float_fn, "1 / (1 + e^-x)"},
    {"erf", FERRO_UNARY_ERF, UnaryKind::real_float_fn, "error function (real only)"},
    {"floor", FERRO_UNARY_FLOOR, UnaryKind::real_float_fn, "round down (real only)"},
    {"ceil", FERRO_UNARY_CEIL, UnaryKind::real_float_fn, "round up (real only)"},
    {"round", FERRO_UNARY_ROUND, UnaryKind::real_float_fn, "round half to even (real only)"},
    {"angle", FERRO_UNARY_ANGLE, UnaryKind::angle, "complex argument (0 or pi for reals)"},
    {"logical_not", FERRO_UNARY_LOGICAL_NOT, UnaryKind::predicate, "x == 0"},
    {"isnan", FERRO_UNARY_ISNAN, UnaryKind::predicate, "x is NaN"},
    {"isinf", FERRO_UNARY_ISINF, UnaryKind::predicate, "x is infinite"},
    {"isfinite", FERRO_UNARY_ISFINITE, UnaryKind::predicate, "x is neither NaN nor infinite"},
};

// A spec table by op code: executors look their op's spec up on every call.
template <size_t Count, class Spec, size_t N> constexpr std::array<const Spec*, Count> by_code(const Spec (&specs)[N]) {
    std::array<const Spec*, Count> table{};
    for (const Spec& s : specs) table.at(s.code) = &s;
    return table;
}

constexpr auto kUnaryByCode = by_code<FERRO_UNARY_COUNT_>(kUnary);

const UnarySpec& unary_spec(const CoreOp& op) {
    if (op.code < kUnaryByCode.size() && kUnaryByCode[op.code] != nullptr) return *kUnaryByCode[op.code];
    throw Error(FERRO_INTERNAL, op.qualified + ": not a unary op");
}

// {compute dtype, output dtype} of a unary op for input dtype `in`.
std::pair<ferro_dtype, ferro_dtype> unary_types(const CoreOp& op, ferro_dtype in) {
    switch (unary_spec(op).kind) {
        case UnaryKind::float_fn: return {to_inexact(in), to_inexact(in)};
        case UnaryKind::real_float_fn:
            if (is_complex(in)) invalid(op.qualified, "complex input is not supported (real inputs only)");
            return {to_inexact(in), to_inexact(in)};
        case UnaryKind::same:
            if (in == FERRO_DTYPE_BOOL) {
                if (op.code == FERRO_UNARY_NEG) invalid(op.qualified, "bool input is not supported (use logical_not)");
                return {FERRO_DTYPE_I64, FERRO_DTYPE_I64};
            }
            return {in, in};
        case UnaryKind::magnitude: {
            const ferro_dtype c = in == FERRO_DTYPE_BOOL ? FERRO_DTYPE_I64 : in;
            return {c, real_dtype(c)};
        }
        case UnaryKind::real_part:
        case UnaryKind::imag_part: return {in, real_dtype(in)};
        case UnaryKind::angle: return {to_inexact(in), real_dtype(to_inexact(in))};
        case UnaryKind::predicate: return {in, FERRO_DTYPE_BOOL};
    }
    return {in, in};
}

void unary_infer(const CoreOp& op, ferro_infer_args& a) {
    set_output(a.outputs[0], unary_types(op, a.inputs[0].dtype).second, dims_of(a.inputs[0]));
    a.n_outputs = 1;
}

void unary_exec(const CoreOp& op, const ferro_host_api* host, const ferro_exec_args& a) {
    const ferro_tensor_view& in = a.inputs[0];
    const auto kind = unary_spec(op).kind;
    if (!is_complex(in.dtype) && (kind == UnaryKind::real_part || kind == UnaryKind::imag_part)) {
        if (kind == UnaryKind::real_part) {
            ferro_copy_args c{sizeof c, 0, in, a.outputs[0]};
            return check(trusted::run(a.session, c, &ferro_engine_iface::copy_strided));
        }
        ferro_fill_args f{sizeof f, 0, a.outputs[0], {0, 0, 0}};
        return check(trusted::run(a.session, f, &ferro_engine_iface::fill));
    }
    View keep;
    const auto& x = operand_for(host, a.session, in, in, unary_types(op, in.dtype).first, keep);
    ferro_unary_args u{sizeof u, op.code, x, a.outputs[0]};
    check(trusted::run(a.session, u, &ferro_engine_iface::unary));
}

// A unary op's plan: an input already in the dtype the op computes in (the usual case) goes to
// the engine as it is, without looking the op's kind up again.
class UnaryPlan final : public OpPlan {
public:
    UnaryPlan(const CoreOp& op, const ferro_prepare_args& p) : op_(op), dtype_(p.inputs[0].dtype) {
        const UnaryKind kind = unary_spec(op).kind;
        const bool part_of_real = !is_complex(dtype_) && (kind == UnaryKind::real_part || kind == UnaryKind::imag_part);
        const auto [compute, result] = unary_types(op, dtype_);
        direct_ = !part_of_real && compute == dtype_;
        same_dtype_ = direct_ && result == dtype_;
    }

    std::optional<ElementwiseKernel> elementwise() const override {
        if (!same_dtype_) return std::nullopt;
        return ElementwiseKernel{FERRO_FUSED_UNARY, static_cast<uint16_t>(op_.code), dtype_};
    }

    void run(const ferro_host_api* host, const ferro_exec_args& a) const override {
        if (!direct_) return unary_exec(op_, host, a);
        const ferro_unary_args u{sizeof u, op_.code, a.inputs[0], a.outputs[0]};
        check(trusted::run(a.session, u, &ferro_engine_iface::unary));
    }

private:
    const CoreOp& op_;
    ferro_dtype dtype_;
    bool direct_ = false;
    bool same_dtype_ = false;  // direct, and the result is of the input's dtype
};

std::unique_ptr<OpPlan> unary_plan(const CoreOp& op, const ferro_prepare_args& p) { return std::make_unique<UnaryPlan>(op, p); }

// How a binary op promotes.
enum class BinaryKind { arith, ordered_arith, true_div, real_float_fn, compare, ordered_compare, logical, make_complex };

struct BinarySpec {
    const char* name;
    uint32_t code;
    BinaryKind kind;
    const char* doc;
};

constexpr BinarySpec kBinary[] = {
    {"add", FERRO_BINARY_ADD, BinaryKind::arith, "a + b"},
    {"sub", FERRO_BINARY_SUB, BinaryKind::arith, "a - b"},
    {"mul", FERRO_BINARY_MUL, BinaryKind::arith, "a * b"},
    {"div", FERRO_BINARY_DIV, BinaryKind::true_div, "a / b (true division: integers give f64)"},
    {"pow", FERRO_BINARY_POW, BinaryKind::arith, "a ** b"},
    {"maximum", FERRO_BINARY_MAXIMUM, BinaryKind::ordered_arith, "elementwise maximum, NaN-propagating"},
    {"minimum", FERRO_BINARY_MINIMUM, BinaryKind::ordered_arith, "elementwise minimum, NaN-propagating"},
    {"arctan2", FERRO_BINARY_ATAN2, BinaryKind::real_float_fn, "atan2(a, b) (real only)"},
    {"eq", FERRO_BINARY_EQ, BinaryKind::compare, "a == b"},
    {"ne", FERRO_BINARY_NE, BinaryKind::compare, "a != b"},
    {"lt", FERRO_BINARY_LT, BinaryKind::ordered_compare, "a < b"},
    {"le", FERRO_BINARY_LE, BinaryKind::ordered_compare, "a <= b"},
    {"gt", FERRO_BINARY_GT, BinaryKind::ordered_compare, "a > b"},
    {"ge", FERRO_BINARY_GE, BinaryKind::ordered_compare, "a >= b"},
    {"logical_and", FERRO_BINARY_LOGICAL_AND, BinaryKind::logical, "a != 0 and b != 0"},
    {"logical_or", FERRO_BINARY_LOGICAL_OR, BinaryKind::logical, "a != 0 or b != 0"},
    {"complex", FERRO_BINARY_COMPLEX, BinaryKind::make_complex, "a + i*b from two real tensors"},
};

constexpr auto kBinaryByCode = by_code<FERRO_BINARY_COUNT_>(kBinary);

BinaryKind binary_kind(const CoreOp& op) {
    if (op.code < kBinaryByCode.size() && kBinaryByCode[op.code] != nullptr) return kBinaryByCode[op.code]->kind;
    throw Error(FERRO_INTERNAL, op.qualified + ": not a binary op");
}

std::pair<ferro_dtype, ferro_dtype> binary_types(const CoreOp& op, ferro_dtype a, ferro_dtype b) {
    const ferro_dtype common = promote(a, b);
    const bool complex = is_complex(common);
    switch (binary_kind(op)) {
        case BinaryKind::ordered_arith:
            if (complex) invalid(op.qualified, "complex inputs have no order");
            [[fallthrough]];
        case BinaryKind::arith: {
            // Arithmetic on two bools computes in i64 (numpy would give bool for add and mul).
            const ferro_dtype c = common == FERRO_DTYPE_BOOL ? FERRO_DTYPE_I64 : common;
            return {c, c};
        }
        case BinaryKind::true_div: return {to_inexact(common), to_inexact(common)};
        case BinaryKind::real_float_fn:
            if (complex) invalid(op.qualified, "complex inputs are not supported (real only)");
            return {to_inexact(common), to_inexact(common)};
        case BinaryKind::ordered_compare:
            if (complex) invalid(op.qualified, "complex inputs have no order");
            return {common, FERRO_DTYPE_BOOL};
        case BinaryKind::compare:
        case BinaryKind::logical: return {common, FERRO_DTYPE_BOOL};
        case BinaryKind::make_complex:
            if (complex) invalid(op.qualified, "inputs must be real (they become the real and imaginary parts)");
            return {to_inexact(common), complex_dtype(to_inexact(common))};
    }
    return {common, common};
}

void binary_infer(const CoreOp& op, ferro_infer_args& a) {
    const Dims shape = broadcast_shapes(op.qualified, dims_of(a.inputs[0]), dims_of(a.inputs[1]));
    set_output(a.outputs[0], binary_types(op, a.inputs[0].dtype, a.inputs[1].dtype).second, shape);
    a.n_outputs = 1;
}

void binary_exec(const CoreOp& op, const ferro_host_api* host, const ferro_exec_args& a) {
    const ferro_tensor_view& out = a.outputs[0];
    const ferro_dtype compute = binary_types(op, a.inputs[0].dtype, a.inputs[1].dtype).first;
    View keep_x, keep_y;
    const auto& x = operand_for(host, a.session, a.inputs[0], out, compute, keep_x);
    const auto& y = operand_for(host, a.session, a.inputs[1], out, compute, keep_y);
    ferro_binary_args b{sizeof b, op.code, x, y, out};
    check(trusted::run(a.session, b, &ferro_engine_iface::binary));
}

// A binary op for one call signature. Inputs already in the compute dtype reach the kernel as
// they are, or with broadcast strides worked out here once; anything else (a dtype
// conversion) takes binary_exec.
class BinaryPlan final : public OpPlan {
public:
    BinaryPlan(const CoreOp& op, const ferro_prepare_args& p) : op_(op) {
        const ferro_signature& out = p.outputs[0];
        const auto [compute, result] = binary_types(op, p.inputs[0].dtype, p.inputs[1].dtype);
        compute_ = compute;
        same_dtype_ = result == compute;
        for (int i = 0; i < 2; ++i) {
            const ferro_signature& in = p.inputs[i];
            convert_ = convert_ || in.dtype != compute;
            broadcast_[i] = in.ndim != out.ndim || !std::equal(in.shape, in.shape + in.ndim, out.shape);
            if (broadcast_[i]) strides_[i] = broadcast_strides(dims_of(in), in.strides, dims_of(out));
        }
    }

    void run(const ferro_host_api* host, const ferro_exec_args& a) const override {
        if (convert_) return binary_exec(op_, host, a);
        ferro_binary_args b{sizeof b, op_.code, a.inputs[0], a.inputs[1], a.outputs[0]};
        ferro_tensor_view* operands[2] = {&b.a, &b.b};
        for (int i = 0; i < 2; ++i) {
            if (!broadcast_[i]) continue;
            operands[i]->ndim = b.out.ndim;
            operands[i]->shape = b.out.shape;
            operands[i]->strides = strides_[i].data();
        }
        check(trusted::run(a.session, b, &ferro_engine_iface::binary));
    }

    std::optional<ElementwiseKernel> elementwise() const override {
        if (convert_ || !same_dtype_) return std::nullopt;
        return ElementwiseKernel{FERRO_FUSED_BINARY, static_cast<uint16_t>(op_.code), compute_};
    }

private:
    const CoreOp& op_;
    ferro_dtype compute_;
    bool same_dtype_ = false;  // the result is of the dtype computed in (not a comparison)
    bool convert_ = false;
    bool broadcast_[2] = {false, false};
    Dims strides_[2];
};

std::unique_ptr<OpPlan> binary_plan(const CoreOp& op, const ferro_prepare_args& p) { return std::make_unique<BinaryPlan>(op, p); }

void where_infer(const CoreOp& op, ferro_infer_args& a) {
    if (a.inputs[0].dtype != FERRO_DTYPE_BOOL) {
        invalid(op.qualified, "input 0 (cond) must be bool, got " + dtype_name(a.inputs[0].dtype));
    }
    Dims shape = broadcast_shapes(op.qualified, dims_of(a.inputs[0]), dims_of(a.inputs[1]), 0, 1);
    shape = broadcast_shapes(op.qualified, shape, dims_of(a.inputs[2]), 0, 2);
    set_output(a.outputs[0], promote(a.inputs[1].dtype, a.inputs[2].dtype), shape);
    a.n_outputs = 1;
}

void where_exec(const CoreOp&, const ferro_host_api* host, const ferro_exec_args& a) {
    const ferro_tensor_view& out = a.outputs[0];
    View keep_c, keep_x, keep_y;
    const auto& c = operand_for(host, a.session, a.inputs[0], out, FERRO_DTYPE_BOOL, keep_c);
    const auto& x = operand_for(host, a.session, a.inputs[1], out, out.dtype, keep_x);
    const auto& y = operand_for(host, a.session, a.inputs[2], out, out.dtype, keep_y);
    ferro_where_args w{sizeof w, 0, c, x, y, out};
    check(trusted::run(a.session, w, &ferro_engine_iface::where));
}

void cast_infer(const CoreOp& op, ferro_infer_args& a) {
    set_output(a.outputs[0], attr_dtype(op.qualified, a.attrs, 0), dims_of(a.inputs[0]));
    a.n_outputs = 1;
}

void cast_exec(const CoreOp&, const ferro_host_api*, const ferro_exec_args& a) {
    ferro_cast_args c{sizeof c, 0, a.inputs[0], a.outputs[0]};
    check(trusted::run(a.session, c, &ferro_engine_iface::cast));
}

void copy_infer(const CoreOp&, ferro_infer_args& a) {
    set_output(a.outputs[0], a.inputs[0].dtype, dims_of(a.inputs[0]));
    a.n_outputs = 1;
}

void copy_exec(const CoreOp&, const ferro_host_api*, const ferro_exec_args& a) {
    ferro_copy_args c{sizeof c, 0, a.inputs[0], a.outputs[0]};
    check(trusted::run(a.session, c, &ferro_engine_iface::copy_strided));
}

}  // namespace

void add_elementwise_ops(std::vector<CoreOp>& ops) {
    for (const auto& s : kUnary) {
        CoreOp op;
        op.name = s.name;
        op.doc = s.doc;
        op.n_inputs = 1;
        op.code = s.code;
        op.infer = unary_infer;
        op.exec = unary_exec;
        op.plan = unary_plan;
        ops.push_back(std::move(op));
    }
    for (const auto& s : kBinary) {
        CoreOp op;
        op.name = s.name;
        op.doc = std::string(s.doc) + " (numpy broadcasting and promotion)";
        op.n_inputs = 2;
        op.code = s.code;
        op.infer = binary_infer;
        op.exec = binary_exec;
        op.plan = binary_plan;
        ops.push_back(std::move(op));
    }
    ops.push_back({"where", "", "cond ? a : b elementwise, broadcast", 3, 0, 1, {}, where_infer, where_exec});
    ops.push_back({"cast",
                   "",
                   "convert to another dtype (complex -> real keeps the real part)",
                   1,
                   0,
                   1,
                   {attr_required("dtype", FERRO_ATTR_STR, "target dtype: f32 f64 c64 c128 i64 bool")},
                   cast_infer,
                   cast_exec});
    ops.push_back({"copy", "", "a new contiguous tensor with the same values", 1, 0, 1, {}, copy_infer, copy_exec});
}

}  // namespace ferro::host::ops
