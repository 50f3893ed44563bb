// VJP rules of the core ops, written with ferro/rules.hpp against the host's op-call service,
// exactly as a plugin writes its rules (so they run on any engine and are differentiable
// themselves). Complex numbers follow PyTorch's convention (docs/autodiff.md).
#pragma once

#include "ops/core_family.hpp"

#include <ferro/rules.hpp>

#include <span>
#include <vector>

namespace ferro::host::ops {

// What a rule sees: its call's saved tensors, cotangents and input shapes, and where its
// results go.
class Vjp {
public:
    Vjp(const plugin::Rules& rules, const ferro_vjp_args& args) : r(rules), a_(args) {}

    const plugin::Rules& r;
    ferro_tensor g(uint32_t k = 0) const { return a_.cotangents[k]; }  // NULL = zero
    ferro_tensor x(uint32_t i) const { return a_.inputs[i]; }          // saved inputs only
    ferro_tensor y(uint32_t k = 0) const { return a_.outputs[k]; }     // saved outputs only
    uint32_t n_inputs() const { return a_.n_inputs; }
    const ferro_signature& sig(uint32_t i) const { return a_.input_sigs[i]; }
    std::span<const int64_t> shape(uint32_t i) const { return plugin::shape_of(a_.input_sigs[i]); }
    const ferro_attr_value& attr(uint32_t k) const { return a_.attrs[k]; }
    bool needs(uint32_t i) const { return a_.needs_input_grad[i] != 0; }
    // The cotangent of input i (dropped when the host did not ask for it).
    void set(uint32_t i, plugin::TensorRef t) const {
        if (needs(i)) a_.input_cotangents[i] = t.release();
    }

private:
    const ferro_vjp_args& a_;
};

// What a JVP rule sees: the call's primal inputs and outputs, the input tangents (NULL =
// zero) and where the output tangents go.
class Jvp {
public:
    Jvp(const plugin::Rules& rules, const CoreOp& core_op, const ferro_jvp_args& args) : r(rules), op(core_op), a_(args) {}

    const plugin::Rules& r;
    const CoreOp& op;
    ferro_tensor x(uint32_t i) const { return a_.inputs[i]; }
    ferro_tensor y(uint32_t k = 0) const { return a_.outputs[k]; }
    ferro_tensor t(uint32_t i) const { return a_.input_tangents[i]; }  // NULL = zero
    uint32_t n_inputs() const { return a_.n_inputs; }
    const ferro_attr_value& attr(uint32_t k) const { return a_.attrs[k]; }
    const ferro_attr_value* attrs() const { return a_.attrs; }
    // Input i's tangent, or zeros shaped like the input.
    plugin::TensorRef t_or_zero(uint32_t i) const { return t(i) ? r.borrow(t(i)) : r.zeros_like(x(i)); }
    void set(plugin::TensorRef tangent, uint32_t k = 0) const { a_.output_tangents[k] = tangent.release(); }

private:
    const ferro_jvp_args& a_;
};

// Attaches the rules and differentiability masks to the op table (by op name).
void add_elementwise_rules(std::vector<CoreOp>& ops);
void add_structural_rules(std::vector<CoreOp>& ops);
void add_jvp_rules(std::vector<CoreOp>& ops);

// Reductions: `shape` with the reduced axes (attribute value `axes`, None = all) set to 1.
std::vector<int64_t> kept_shape(std::span<const int64_t> shape, const ferro_attr_value& axes);
// prod's derivative: per element of x (of `shape`), the product of the other elements of its
// reduced group, without dividing by zero.
plugin::TensorRef prod_of_others(const plugin::Rules& r, ferro_tensor x, std::span<const int64_t> shape,
                                 const ferro_attr_value& axes);

// Sets `name`'s rule and masks; the op must exist.
void set_rule(std::vector<CoreOp>& ops, const char* name, VjpFn vjp, uint64_t diff_inputs, uint64_t save_inputs,
              uint64_t save_outputs);

}  // namespace ferro::host::ops
