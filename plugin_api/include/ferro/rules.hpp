// ferro plugin ABI — header-only C++ toolkit for writing VJP and JVP rules.
//
// Rules compute with tensors only through host->op_call, so they run on whatever engine the
// tensors live on and, when backward records (create_graph), are differentiated themselves:
// second derivatives need nothing more. The built-in core family writes its rules with this
// header too. Every function throws ferro::plugin::StatusError when the host reports an
// error; run rules inside ferro::plugin::guard.
//
// Ops are called through handles the host resolved once per runtime (ABI 1.12): core ops by
// number (ferro/core_ops.h), the family's own by their place in the list it declared
// (FERRO_EXT_RULE_CALLS, see declared_op below). Constructed from a rule's arguments, Rules
// takes them from there; from a host before 1.12, or constructed from the host alone, it
// finds them by name.
//
// What the host does for every rule (so rules need not): a returned input cotangent may have
// the broadcast shape of the op's output (the host sums it to the input's shape) and the
// computation's dtype (the host casts it to the input's, keeping the real part for a real
// input). Cotangents follow PyTorch's convention for complex numbers (docs/autodiff.md): for
// a holomorphic f, the rule returns g * conj(f'(x)).
//
// Since: 1.0 (header-only; no ABI change).
#pragma once

#include "ferro/dtype.hpp"
#include "ferro/plugin.hpp"

#include <array>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferro::plugin {

// Named attribute values for op calls (the pointed-to data must outlive the call).
inline ferro_named_attr attr_i64(const char* name, int64_t v) {
    ferro_named_attr a{};
    a.name = name;
    a.value.type = FERRO_ATTR_I64;
    a.value.v.i64 = v;
    return a;
}
inline ferro_named_attr attr_f64(const char* name, double v) {
    ferro_named_attr a{};
    a.name = name;
    a.value.type = FERRO_ATTR_F64;
    a.value.v.f64 = v;
    return a;
}
inline ferro_named_attr attr_bool(const char* name, bool v) {
    ferro_named_attr a{};
    a.name = name;
    a.value.type = FERRO_ATTR_BOOL;
    a.value.v.boolean = v ? 1 : 0;
    return a;
}
inline ferro_named_attr attr_str(const char* name, const char* v) {
    ferro_named_attr a{};
    a.name = name;
    a.value.type = FERRO_ATTR_STR;
    a.value.v.str = v;
    return a;
}
inline ferro_named_attr attr_i64s(const char* name, std::span<const int64_t> v) {
    ferro_named_attr a{};
    a.name = name;
    a.value.type = FERRO_ATTR_I64_ARRAY;
    a.value.count = static_cast<uint32_t>(v.size());
    a.value.v.i64_array = v.data();
    return a;
}

inline bool is_complex(ferro_dtype dtype) { return dtype == FERRO_DTYPE_C64 || dtype == FERRO_DTYPE_C128; }
// The real dtype of a complex one (c64 -> f32, c128 -> f64), and back; others unchanged.
inline ferro_dtype real_dtype(ferro_dtype dtype) {
    return dtype == FERRO_DTYPE_C64 ? FERRO_DTYPE_F32 : dtype == FERRO_DTYPE_C128 ? FERRO_DTYPE_F64 : dtype;
}
inline ferro_dtype complex_dtype(ferro_dtype dtype) {
    return dtype == FERRO_DTYPE_F32 ? FERRO_DTYPE_C64 : dtype == FERRO_DTYPE_F64 ? FERRO_DTYPE_C128 : dtype;
}

// A tensor argument: a borrowed handle or a TensorRef (temporaries live to the end of the
// full expression, so calls nest: r.mul(g, r.conj(b))).
class Arg {
public:
    Arg(ferro_tensor t) : t_(t) {}            // NOLINT(google-explicit-constructor): intended
    Arg(const TensorRef& t) : t_(t.get()) {}  // NOLINT(google-explicit-constructor)
    ferro_tensor get() const noexcept { return t_; }

private:
    ferro_tensor t_;
};

// An op of the list a family declared for its rules (FERRO_EXT_RULE_CALLS), by its place.
struct DeclaredOp {
    uint32_t index;
};

// The place of `name` in a family's declared list, at compile time: a name the list lacks does
// not compile. Families wrap it: `consteval DeclaredOp linalg_op(std::string_view name) {
// return declared_op(kRuleCalls, name); }`, then `r.call(linalg_op("linalg.solve"), ...)`.
template <size_t N> consteval DeclaredOp declared_op(const std::array<const char*, N>& declared, std::string_view name) {
    for (uint32_t i = 0; i < N; ++i) {
        if (name == declared[i]) return {i};
    }
    throw "declared_op: the op is not in the family's declared rule calls";
}

class Rules {
public:
    explicit Rules(const ferro_host_api* host) : host_(host) {}
    // For a rule: the handles its arguments carry. `declared` is the list the family declared
    // in its FERRO_EXT_RULE_CALLS link (the same array), by whose names the ops are found on a
    // host that hands no handles.
    Rules(const ferro_host_api* host, const ferro_vjp_args& a, std::span<const char* const> declared = {})
        : host_(host), declared_(declared) {
        if (FERRO_HAS_FIELD(&a, ferro_vjp_args, family_ops)) take(a.n_core_ops, a.core_ops, a.n_family_ops, a.family_ops);
    }
    Rules(const ferro_host_api* host, const ferro_jvp_args& a, std::span<const char* const> declared = {})
        : host_(host), declared_(declared) {
        if (FERRO_HAS_FIELD(&a, ferro_jvp_args, family_ops)) take(a.n_core_ops, a.core_ops, a.n_family_ops, a.family_ops);
    }
    const ferro_host_api* host() const noexcept { return host_; }

    TensorRef borrow(ferro_tensor t) const { return TensorRef::borrow(host_, t); }

    // Handles: of a core op, of a declared op, of any op by its qualified name.
    ferro_op op(ferro_core_op id) const {
        const auto i = static_cast<uint32_t>(id);
        if (i < n_core_) return core_[i];
        const char* name = ferro_core_op_name(i);
        if (name == nullptr) throw Error(FERRO_INVALID_ARGUMENT, "Rules::op: no core op numbered " + std::to_string(i));
        return find(name);
    }
    ferro_op op(DeclaredOp id) const {
        if (id.index < n_family_) return family_[id.index];
        if (id.index < declared_.size()) return find(declared_[id.index]);
        throw Error(FERRO_INVALID_ARGUMENT, "Rules::op: no declared op at " + std::to_string(id.index) +
                                                " (the family declared " + std::to_string(declared_.size()) +
                                                "; pass its list to Rules)");
    }
    ferro_op find(const char* name) const {
        ferro_op op = nullptr;
        check(host_, host_->op_find(host_, name, &op));
        return op;
    }

    // Calls `op` and returns its outputs.
    std::vector<TensorRef> call_all(ferro_op op, std::span<const ferro_tensor> inputs, std::span<const ferro_named_attr> attrs,
                                    uint32_t max_outputs = 8) const {
        std::vector<ferro_tensor> out(max_outputs, nullptr);
        ferro_op_call_args args = call_args(attrs, inputs, out.data(), max_outputs);
        check(host_, host_->op_call(host_, op, &args));
        std::vector<TensorRef> result;
        result.reserve(args.n_outputs);
        for (uint32_t i = 0; i < args.n_outputs; ++i) result.emplace_back(host_, out[i]);
        return result;
    }
    template <class Op>
    std::vector<TensorRef> call_all(Op op, std::span<const ferro_tensor> inputs, std::span<const ferro_named_attr> attrs,
                                    uint32_t max_outputs = 8) const {
        return call_all(handle(op), inputs, attrs, max_outputs);
    }
    template <class Op>
    std::vector<TensorRef> call_all(Op op, std::initializer_list<Arg> inputs, std::initializer_list<ferro_named_attr> attrs = {},
                                    uint32_t max_outputs = 8) const {
        std::vector<ferro_tensor> in;
        in.reserve(inputs.size());
        for (const Arg& a : inputs) in.push_back(a.get());
        return call_all(handle(op), in, std::span<const ferro_named_attr>(attrs.begin(), attrs.size()), max_outputs);
    }
    // `op` with one output, on handles and attributes held elsewhere.
    TensorRef call(ferro_op op, std::span<const ferro_tensor> inputs, std::span<const ferro_named_attr> attrs) const {
        ferro_tensor out = nullptr;
        ferro_op_call_args args = call_args(attrs, inputs, &out, 1);
        check(host_, host_->op_call(host_, op, &args));
        return TensorRef(host_, out);
    }
    // `op`: a ferro_op, a ferro_core_op, a DeclaredOp, or a qualified name ("core.mul").
    template <class Op>
    TensorRef call(Op op, std::span<const ferro_tensor> inputs, std::span<const ferro_named_attr> attrs) const {
        return call(handle(op), inputs, attrs);
    }
    template <class Op>
    TensorRef call(Op op, std::initializer_list<Arg> inputs, std::initializer_list<ferro_named_attr> attrs = {}) const {
        ferro_tensor in[8] = {};
        if (inputs.size() > 8) throw Error(FERRO_INVALID_ARGUMENT, "Rules::call: use call_all for > 8 inputs");
        size_t n = 0;
        for (const Arg& a : inputs) in[n++] = a.get();
        return call(handle(op), std::span<const ferro_tensor>(in, n),
                    std::span<const ferro_named_attr>(attrs.begin(), attrs.size()));
    }

    ferro_signature signature(Arg t) const {
        ferro_signature s{};
        s.struct_size = sizeof s;
        check(host_, host_->tensor_signature(t.get(), &s));
        return s;
    }

    // ---- arithmetic (numpy broadcasting and promotion) ----
    TensorRef add(Arg a, Arg b) const { return call(FERRO_CORE_OP_ADD, {a, b}); }
    TensorRef sub(Arg a, Arg b) const { return call(FERRO_CORE_OP_SUB, {a, b}); }
    TensorRef mul(Arg a, Arg b) const { return call(FERRO_CORE_OP_MUL, {a, b}); }
    TensorRef div(Arg a, Arg b) const { return call(FERRO_CORE_OP_DIV, {a, b}); }
    TensorRef neg(Arg a) const { return call(FERRO_CORE_OP_NEG, {a}); }
    // conj of a real tensor is the tensor itself (no copy: rules conjugate everything).
    TensorRef conj(Arg a) const {
        if (!is_complex(signature(a).dtype)) return borrow(a.get());
        return call(FERRO_CORE_OP_CONJ, {a});
    }
    TensorRef real(Arg a) const { return call(FERRO_CORE_OP_REAL, {a}); }
    TensorRef imag(Arg a) const { return call(FERRO_CORE_OP_IMAG, {a}); }
    TensorRef matmul(Arg a, Arg b) const { return call(FERRO_CORE_OP_MATMUL, {a, b}); }
    TensorRef where(Arg c, Arg a, Arg b) const { return call(FERRO_CORE_OP_WHERE, {c, a, b}); }
    template <class Op> TensorRef unary(Op op, Arg a) const { return call(op, {a}); }
    // A cast to the dtype `a` already has is `a` itself (no op call).
    TensorRef cast(Arg a, ferro_dtype dtype) const {
        if (signature(a).dtype == dtype) return borrow(a.get());
        return call(FERRO_CORE_OP_CAST, {a}, {attr_str("dtype", dtype_attr_name(dtype))});
    }

    // A 0-d tensor holding re + i*im, with `like`'s dtype and engine (broadcasts anywhere).
    TensorRef scalar(Arg like, double re, double im = 0) const {
        const ferro_signature s = signature(like);
        const float f[2] = {static_cast<float>(re), static_cast<float>(im)};
        const double d[2] = {re, im};
        const int64_t i = static_cast<int64_t>(re);
        const unsigned char b = re != 0 ? 1 : 0;
        const void* data = nullptr;
        switch (s.dtype) {
            case FERRO_DTYPE_F32:
            case FERRO_DTYPE_C64: data = f; break;
            case FERRO_DTYPE_F64:
            case FERRO_DTYPE_C128: data = d; break;
            case FERRO_DTYPE_I64: data = &i; break;
            case FERRO_DTYPE_BOOL: data = &b; break;
            default: throw Error(FERRO_INVALID_ARGUMENT, "Rules::scalar: unsupported dtype of the reference tensor");
        }
        ferro_tensor out = nullptr;
        check(host_, host_->tensor_from_host(host_, host_->tensor_engine(like.get()), s.dtype, 0, nullptr, data, &out));
        return TensorRef(host_, out);
    }
    TensorRef zeros(std::span<const int64_t> shape, ferro_dtype dtype, const char* engine) const {
        return call(FERRO_CORE_OP_ZEROS, {},
                    {attr_i64s("shape", shape), attr_str("dtype", dtype_attr_name(dtype)), attr_str("engine", engine)});
    }
    // Uniform samples in [lo, hi) (real and imaginary parts alike) from core.rand's seeded
    // generator, on `engine`: the same seed gives the same values on every engine.
    TensorRef rand(std::span<const int64_t> shape, ferro_dtype dtype, int64_t seed, const char* engine, double lo = -1,
                   double hi = 1) const {
        const TensorRef u = call(FERRO_CORE_OP_RAND, {},
                                 {attr_i64s("shape", shape), attr_str("dtype", dtype_attr_name(dtype)), attr_i64("seed", seed),
                                  attr_str("engine", engine)});
        const double width = hi - lo;
        const TensorRef scaled = mul(u, scalar(u, width));
        return add(scaled, scalar(u, lo, is_complex(dtype) ? lo : 0));
    }
    TensorRef zeros_like(Arg like) const {
        const ferro_signature s = signature(like);
        return zeros({s.shape, static_cast<size_t>(s.ndim)}, s.dtype, host_->tensor_engine(like.get()));
    }

    // ---- shapes ----
    std::vector<int64_t> shape(Arg a) const {
        const ferro_signature s = signature(a);
        return {s.shape, s.shape + s.ndim};
    }
    // a[start:stop] along `axis`.
    TensorRef slice(Arg a, int64_t axis, int64_t start, int64_t stop) const {
        return call(FERRO_CORE_OP_SLICE, {a}, {attr_i64("axis", axis), attr_i64("start", start), attr_i64("stop", stop)});
    }
    TensorRef concat(Arg a, Arg b, int64_t axis) const { return call(FERRO_CORE_OP_CONCAT, {a, b}, {attr_i64("axis", axis)}); }
    TensorRef sum(Arg a, std::span<const int64_t> axes, bool keepdim) const {
        return call(FERRO_CORE_OP_SUM, {a}, {attr_i64s("axes", axes), attr_bool("keepdim", keepdim)});
    }
    TensorRef reshape(Arg a, std::span<const int64_t> shape) const {
        return call(FERRO_CORE_OP_RESHAPE, {a}, {attr_i64s("shape", shape)});
    }
    TensorRef expand(Arg a, std::span<const int64_t> shape) const {
        return call(FERRO_CORE_OP_EXPAND, {a}, {attr_i64s("shape", shape)});
    }
    TensorRef permute(Arg a, std::span<const int64_t> axes) const {
        return call(FERRO_CORE_OP_PERMUTE, {a}, {attr_i64s("axes", axes)});
    }
    TensorRef transpose(Arg a, int64_t d0 = -2, int64_t d1 = -1) const {
        return call(FERRO_CORE_OP_TRANSPOSE, {a}, {attr_i64("dim0", d0), attr_i64("dim1", d1)});
    }
    TensorRef unsqueeze(Arg a, int64_t axis) const { return call(FERRO_CORE_OP_UNSQUEEZE, {a}, {attr_i64("axis", axis)}); }
    TensorRef squeeze(Arg a, int64_t axis) const {
        const int64_t axes[1] = {axis};
        return call(FERRO_CORE_OP_SQUEEZE, {a}, {attr_i64s("axes", axes)});
    }

private:
    void take(uint32_t n_core, const ferro_op* core, uint32_t n_family, const ferro_op* family) noexcept {
        if (core != nullptr) n_core_ = n_core, core_ = core;
        if (family != nullptr) n_family_ = n_family, family_ = family;
    }
    ferro_op handle(ferro_op op) const noexcept { return op; }
    ferro_op handle(ferro_core_op id) const { return op(id); }
    ferro_op handle(DeclaredOp id) const { return op(id); }
    ferro_op handle(const char* name) const { return find(name); }

    // Every field set by name: plugins build without -Wmissing-field-initializers firing here.
    static ferro_op_call_args call_args(std::span<const ferro_named_attr> attrs, std::span<const ferro_tensor> inputs,
                                        ferro_tensor* outputs, uint32_t capacity) {
        ferro_op_call_args a{};
        a.struct_size = sizeof a;
        a.n_attrs = static_cast<uint32_t>(attrs.size());
        a.attrs = attrs.data();
        a.n_inputs = static_cast<uint32_t>(inputs.size());
        a.outputs_capacity = capacity;
        a.inputs = inputs.data();
        a.outputs = outputs;
        return a;
    }
    const ferro_host_api* host_;
    std::span<const char* const> declared_;
    uint32_t n_core_ = 0, n_family_ = 0;
    const ferro_op* core_ = nullptr;
    const ferro_op* family_ = nullptr;
};

// The shape of a signature, as a span.
inline std::span<const int64_t> shape_of(const ferro_signature& s) { return {s.shape, static_cast<size_t>(s.ndim)}; }

}  // namespace ferro::plugin
