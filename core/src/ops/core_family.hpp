// The built-in "core" family: the op vocabulary every engine runs (elementwise, reductions,
// views, joins, matmul, creation). Its module works on any engine: executors compose engine
// primitives through the host's session services, exactly as a plugin's would. Views and
// random numbers are host ops (they create tensors directly instead of running a plan).
#pragma once

#include "dispatch/dispatcher.hpp"

#include <ferro/plugin.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferro::host {

// The descriptor of the built-in plugin "core" (family "core").
const ferro_plugin_desc* core_plugin_desc();

// The host implementation of core op `index` (its position in the family), or nullptr for a
// plan op. Registration stores it in the op's entry (registry/registration.cpp).
HostOpFn core_host_op_at(uint32_t index);

namespace ops {

struct ElementwiseKernel;
// The kernel a plan of the core module runs as one elementwise kernel, if it does.
std::optional<ElementwiseKernel> elementwise_kernel(const CachedPlan& plan);

struct CoreOp;
using InferFn = void (*)(const CoreOp& op, ferro_infer_args& args);
using ExecFn = void (*)(const CoreOp& op, const ferro_host_api* host, const ferro_exec_args& args);

// One engine unary or binary kernel whose operands and result are all of `dtype`: what a fused
// elementwise program (capture/fusion.hpp) can run in a plan's place.
struct ElementwiseKernel {
    uint16_t kind;  // ferro_fused_kind
    uint16_t op;    // ferro_unary_op or ferro_binary_op
    ferro_dtype dtype;
};

// What an op works out once per call signature (plans are cached per signature): the hot ops
// precompute their operand layouts so that a call only fills in addresses.
class OpPlan {
public:
    virtual ~OpPlan() = default;
    virtual void run(const ferro_host_api* host, const ferro_exec_args& args) const = 0;
    // The one kernel run() calls, when that is all it does (no conversion, no copy).
    virtual std::optional<ElementwiseKernel> elementwise() const { return std::nullopt; }
};
using PlanFn = std::unique_ptr<OpPlan> (*)(const CoreOp& op, const ferro_prepare_args& args);

class Vjp;  // grad_rules.hpp
class Jvp;
using VjpFn = void (*)(const Vjp& v);
using JvpFn = void (*)(const Jvp& j);

// CoreOp.view: the op returns a view of input 0 (with FERRO_OP_VIEW_MAY_COPY when it may copy).
inline constexpr uint32_t kIsView = 0x100u;

struct CoreOp {
    std::string name;       // "add"
    std::string qualified;  // "core.add", for messages
    std::string doc;
    int32_t n_inputs = 1;
    int32_t min_inputs = 0;
    int32_t n_outputs = 1;
    std::vector<ferro_attr_spec> attrs;
    InferFn infer = nullptr;
    ExecFn exec = nullptr;    // plan ops
    HostOpFn host = nullptr;  // host ops
    uint32_t code = 0;        // engine op code (unary/binary/reduce)
    PlanFn plan = nullptr;    // plan ops with per-signature state (exec stays the general path)
    // Differentiation (grad_rules.hpp): the VJP rule and the schema's masks. Outputs are
    // differentiable when the rule exists.
    VjpFn vjp = nullptr;
    JvpFn jvp = nullptr;
    uint64_t diff_inputs = 0, save_inputs = 0, save_outputs = 0;
    // Host ops whose output 0 shares input 0's storage: kIsView, with FERRO_OP_VIEW_* flags.
    uint32_t view = 0;
    ferro_core_op number = FERRO_CORE_OP_COUNT;  // its number in ferro/core_ops.h (set with qualified)
};

// Attribute spec builders.
ferro_attr_spec attr_i64(const char* name, int64_t def, const char* doc);
ferro_attr_spec attr_f64(const char* name, double def, const char* doc);
ferro_attr_spec attr_bool(const char* name, bool def, const char* doc);
ferro_attr_spec attr_str(const char* name, const char* def, const char* doc);  // def NULL: None
ferro_attr_spec attr_required(const char* name, uint32_t type, const char* doc);
ferro_attr_spec attr_optional(const char* name, uint32_t type, const char* doc);  // default None

// Each file adds its ops.
void add_elementwise_ops(std::vector<CoreOp>& ops);
void add_reduce_ops(std::vector<CoreOp>& ops);
void add_shape_ops(std::vector<CoreOp>& ops);
void add_join_ops(std::vector<CoreOp>& ops);
void add_matmul_op(std::vector<CoreOp>& ops);
void add_creation_ops(std::vector<CoreOp>& ops);

}  // namespace ops
}  // namespace ferro::host
