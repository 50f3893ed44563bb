// An example op family: example.softplus(x) = log(1 + e^x), computed stably as
// max(x, 0) + log1p(e^-|x|) from engine primitives through the host, so it runs on every
// engine, and differentiable: its VJP and JVP multiply by sigmoid(x) through host op calls
// (ferro/rules.hpp), so they run on every engine and differentiate again (higher order).
// Shows what a plugin provides: a schema with infer and rules, a module factory, a prepared
// plan with a session executor, and the single exported entry, built with the header-only
// helpers (ferro/schema.hpp, ferro/rules.hpp).
#include <ferro/rules.hpp>
#include <ferro/schema.hpp>

namespace {

using ferro::plugin::check;

bool is_float(ferro_dtype d) { return d == FERRO_DTYPE_F32 || d == FERRO_DTYPE_F64; }

// Output: same shape and dtype as the input, which must be real floating point.
ferro_status infer(const ferro_host_api* host, ferro_infer_args* args) {
    return ferro::plugin::guard(host, [&] {
        const ferro_signature& x = args->inputs[0];
        if (!is_float(x.dtype)) {
            throw ferro::plugin::Error(FERRO_INVALID_ARGUMENT,
                                       "example.softplus: input 0 must be f32 or f64, got " + ferro::plugin::dtype_name(x.dtype));
        }
        args->outputs[0] = x;
        args->n_outputs = 1;
    });
}

// Contiguous scratch of x's shape and dtype, as a view.
struct Scratch {
    ferro_tensor_view view;
    int64_t strides[FERRO_MAX_NDIM];
};

Scratch make_scratch(const ferro_host_api* host, ferro_session s, const ferro_tensor_view& like) {
    Scratch t{like, {}};
    int64_t n = 1;
    for (int d = like.ndim - 1; d >= 0; --d) {
        t.strides[d] = n;
        n *= like.shape[d];
    }
    ferro_buffer_view b{};
    check(host, host->session_scratch(s, static_cast<uint64_t>(n) * (like.dtype == FERRO_DTYPE_F32 ? 4 : 8), &b));
    t.view.buffer = b.buffer;
    t.view.byte_offset = b.byte_offset;
    t.view.data = b.data;
    t.view.strides = t.strides;
    t.view.tensor = nullptr;
    return t;
}

ferro_status execute(void*, const ferro_host_api* host, const ferro_exec_args* args) {
    return ferro::plugin::guard(host, [&] {
        const ferro_tensor_view& x = args->inputs[0];
        const ferro_tensor_view& y = args->outputs[0];
        ferro_session s = args->session;
        Scratch t = make_scratch(host, s, x);
        auto unary = [&](uint32_t op, const ferro_tensor_view& in, const ferro_tensor_view& out) {
            ferro_unary_args u{};
            u.struct_size = sizeof u;
            u.op = op;
            u.in = in;
            u.out = out;
            check(host, host->session_unary(s, &u));
        };
        auto binary = [&](uint32_t op, const ferro_tensor_view& a, const ferro_tensor_view& b) {
            ferro_binary_args bin{};
            bin.struct_size = sizeof bin;
            bin.op = op;
            bin.a = a;
            bin.b = b;
            bin.out = y;
            check(host, host->session_binary(s, &bin));
        };
        unary(FERRO_UNARY_ABS, x, t.view);         // t = |x|
        unary(FERRO_UNARY_NEG, t.view, t.view);    // t = -|x|
        unary(FERRO_UNARY_EXP, t.view, t.view);    // t = e^-|x|
        unary(FERRO_UNARY_LOG1P, t.view, t.view);  // t = log1p(e^-|x|)
        ferro_fill_args zero{};
        zero.struct_size = sizeof zero;
        zero.out = y;
        check(host, host->session_fill(s, &zero));  // y = 0
        binary(FERRO_BINARY_MAXIMUM, x, y);         // y = max(x, 0)
        binary(FERRO_BINARY_ADD, y, t.view);        // y += t
    });
}

// d softplus(x) / dx = sigmoid(x): the cotangent g gives g sigmoid(x), the tangent t gives t sigmoid(x).
ferro_status vjp(const ferro_host_api* host, const ferro_vjp_args* a) {
    return ferro::plugin::guard(host, [&] {
        const ferro::plugin::Rules r(host, *a);
        if (a->needs_input_grad[0] && a->cotangents[0] != nullptr) {
            a->input_cotangents[0] = r.mul(a->cotangents[0], r.unary(FERRO_CORE_OP_SIGMOID, a->inputs[0])).release();
        }
    });
}
ferro_status jvp(const ferro_host_api* host, const ferro_jvp_args* a) {
    return ferro::plugin::guard(host, [&] {
        const ferro::plugin::Rules r(host, *a);
        if (a->input_tangents[0] != nullptr) {
            a->output_tangents[0] = r.mul(a->input_tangents[0], r.unary(FERRO_CORE_OP_SIGMOID, a->inputs[0])).release();
        }
    });
}

void destroy_plan(void*) {}
const ferro_plan_iface plan_iface = [] {
    ferro_plan_iface p{};
    p.struct_size = sizeof p;
    p.execute_in_session = execute;
    p.destroy = destroy_plan;
    return p;
}();

ferro_status prepare(void*, const ferro_host_api*, const ferro_prepare_args*, ferro_plan_instance* out) {
    out->iface = &plan_iface;  // stateless: one plan serves every signature
    return nullptr;
}
void destroy_module(void*) {}
const ferro_module_iface module_iface = [] {
    ferro_module_iface m{};
    m.struct_size = sizeof m;
    m.prepare = prepare;
    m.destroy = destroy_module;
    return m;
}();

// Engine-agnostic: accept every engine.
ferro_status create_module(const ferro_host_api*, const ferro_module_create_args*, ferro_module_instance* out) {
    out->iface = &module_iface;
    return nullptr;
}

constexpr ferro_dtype dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64};

ferro_op_schema softplus() {
    ferro_op_schema s = ferro::plugin::op_schema("softplus", "log(1 + e^x), computed stably", 1, 1, infer);
    s.n_dtypes = 2;
    s.dtypes = dtypes;
    s.diff_inputs = FERRO_MASK_BIT(0);
    s.diff_outputs = FERRO_MASK_BIT(0);
    s.save_inputs = FERRO_MASK_BIT(0);  // the rules read x
    s.vjp = vjp;
    s.jvp = jvp;
    return s;
}
const ferro_op_schema ops[] = {softplus()};

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    static const ferro::plugin::OneFamilyPlugin desc("example", "1.0.0", "an out-of-tree example plugin",
                                                     "example family from examples/plugin", 1, ops, create_module);
    *out = desc.get();
    return nullptr;
}

}  // namespace

FERRO_PLUGIN_EXPORT(query)
