#include "ops/core_family.hpp"

#include "ops/grad_rules.hpp"
#include "ops/op_util.hpp"

#include <ferro/schema.hpp>

#include <stdexcept>

namespace ferro::host {
namespace ops {

ferro_attr_spec attr_i64(const char* name, int64_t def, const char* doc) { return plugin::spec_i64(name, def, doc); }
ferro_attr_spec attr_f64(const char* name, double def, const char* doc) { return plugin::spec_f64(name, def, doc); }
ferro_attr_spec attr_bool(const char* name, bool def, const char* doc) { return plugin::spec_bool(name, def, doc); }
ferro_attr_spec attr_str(const char* name, const char* def, const char* doc) { return plugin::spec_str(name, def, doc); }
ferro_attr_spec attr_required(const char* name, uint32_t type, const char* doc) { return plugin::spec_required(name, type, doc); }
ferro_attr_spec attr_optional(const char* name, uint32_t type, const char* doc) { return plugin::spec_optional(name, type, doc); }

namespace {

// The op table and the ABI view of it, built once.
struct Family {
    std::vector<CoreOp> ops;
    std::vector<ferro_op_schema> schemas;
    std::vector<ferro_op_view> views;  // declared through the descriptor's extension chain
    ferro_op_views_ext views_ext{};
    ferro_family_desc family{};
    ferro_plugin_desc plugin{};
};
const Family& family();

// One infer, vjp and jvp for every op: the schema the host passes (ABI 1.9) is an element of
// the family's table, at the op's index.
const CoreOp& op_of(const ferro_op_schema* schema) {
    const Family& f = family();
    return f.ops[static_cast<size_t>(schema - f.schemas.data())];
}

ferro_status infer(const ferro_host_api*, ferro_infer_args* args) {
    return guard([&] {
        const CoreOp& op = op_of(args->schema);
        op.infer(op, *args);
    });
}
ferro_status vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return plugin::guard(host, [&] { op_of(args->schema).vjp(Vjp(plugin::Rules(host, *args), *args)); });
}
ferro_status jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return plugin::guard(host, [&] {
        const CoreOp& op = op_of(args->schema);
        op.jvp(Jvp(plugin::Rules(host, *args), op, *args));
    });
}

ferro_status execute(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    const auto& op = *static_cast<const CoreOp*>(self);
    return guard([&] { op.exec(op, host, *args); });
}
void destroy_plan(void*) {}
constexpr ferro_plan_iface kPlanIface{sizeof(ferro_plan_iface), 0, execute, nullptr, destroy_plan};

ferro_status execute_state(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return guard([&] { static_cast<const OpPlan*>(self)->run(host, *args); });
}
void destroy_state(void* self) { delete static_cast<OpPlan*>(self); }
constexpr ferro_plan_iface kStateIface{sizeof(ferro_plan_iface), 0, execute_state, nullptr, destroy_state};

}  // namespace

std::optional<ElementwiseKernel> elementwise_kernel(const CachedPlan& plan) {
    if (&plan.iface() != &kStateIface) return std::nullopt;
    return static_cast<const OpPlan*>(plan.self())->elementwise();
}

namespace {

// An op with a PlanFn gets its per-signature state; for the others the executor reads
// everything from the call, and the plan is the op itself.
ferro_status prepare(void*, const ferro_host_api*, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return guard([&] {
        const CoreOp& op = family().ops.at(args->op_index);
        if (op.exec == nullptr) {
            const std::string reason = op.qualified + " is implemented by the host, not by a plan";
            std::snprintf(args->decline_reason, args->decline_capacity, "%s", reason.c_str());
            return;
        }
        if (op.plan != nullptr) {
            out->self = op.plan(op, *args).release();
            out->iface = &kStateIface;
            return;
        }
        out->self = const_cast<CoreOp*>(&op);
        out->iface = &kPlanIface;
    });
}
void destroy_module(void*) {}
constexpr ferro_module_iface kModuleIface{sizeof(ferro_module_iface), 0, prepare, destroy_module};

// Engine-agnostic: every engine implements the primitive set the executors use.
ferro_status create_module(const ferro_host_api*, const ferro_module_create_args*, ferro_module_instance* out) {
    out->self = nullptr;
    out->iface = &kModuleIface;
    return nullptr;
}

// Every core op has a number in ferro/core_ops.h, which rules call it by.
ferro_core_op number_of(const std::string& qualified) {
    for (uint32_t i = 0; i < FERRO_CORE_OP_COUNT; ++i) {
        if (qualified == ferro_core_op_name(i)) return static_cast<ferro_core_op>(i);
    }
    throw std::logic_error(qualified + " has no number in ferro/core_ops.h");
}

const Family& family() {
    static const Family built = [] {
        Family f;
        add_elementwise_ops(f.ops);
        add_reduce_ops(f.ops);
        add_shape_ops(f.ops);
        add_join_ops(f.ops);
        add_matmul_op(f.ops);
        add_creation_ops(f.ops);
        add_elementwise_rules(f.ops);
        add_structural_rules(f.ops);
        add_jvp_rules(f.ops);
        for (size_t i = 0; i < f.ops.size(); ++i) {
            CoreOp& op = f.ops[i];
            op.qualified = "core." + op.name;
            op.number = number_of(op.qualified);
            ferro_op_schema s{};
            s.struct_size = sizeof s;
            s.name = op.name.c_str();
            s.doc = op.doc.c_str();
            s.n_inputs = op.n_inputs;
            s.min_inputs = op.n_inputs >= 0 ? op.n_inputs : op.min_inputs;
            s.n_outputs = op.n_outputs;
            s.n_attrs = static_cast<uint32_t>(op.attrs.size());
            s.attrs = op.attrs.data();
            s.infer = infer;
            if (op.vjp != nullptr) {
                s.vjp = vjp;
                s.diff_inputs = op.diff_inputs;
                s.diff_outputs = FERRO_MASK_ALL;
                s.save_inputs = op.save_inputs;
                s.save_outputs = op.save_outputs;
            }
            if (op.jvp != nullptr) s.jvp = jvp;
            f.schemas.push_back(s);
            if (op.view != 0) f.views.push_back({static_cast<uint32_t>(i), 0, 0, op.view & ~kIsView});
        }
        f.views_ext.base = {sizeof f.views_ext, FERRO_EXT_OP_VIEWS, nullptr};
        f.views_ext.family_id = "core";
        f.views_ext.n_views = static_cast<uint32_t>(f.views.size());
        f.views_ext.views = f.views.data();
        f.family = {sizeof(ferro_family_desc),
                    static_cast<uint32_t>(f.schemas.size()),
                    "core",
                    "0.1.0",
                    "the built-in op vocabulary",
                    f.schemas.data(),
                    create_module};
        f.plugin = {sizeof(ferro_plugin_desc),
                    FERRO_ABI_MAJOR,
                    FERRO_ABI_MINOR,
                    0,
                    "core",
                    "0.1.0",
                    "built-in core ops",
                    0,
                    1,
                    nullptr,
                    &f.family,
                    0,
                    0,
                    nullptr,
                    &f.views_ext.base};
        return f;
    }();
    return built;
}

}  // namespace
}  // namespace ops

const ferro_plugin_desc* core_plugin_desc() { return &ops::family().plugin; }

HostOpFn core_host_op_at(uint32_t index) { return ops::family().ops.at(index).host; }

}  // namespace ferro::host
