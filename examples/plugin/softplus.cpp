// An example op family: example.softplus(x) = log(1 + e^x), computed stably as
// max(x, 0) + log1p(e^-|x|) from engine primitives through the host, so it runs on every
// engine. Shows what a plugin provides: a schema with infer, a module factory, a prepared
// plan with a session executor, and the single exported entry.
#include <ferro/plugin.hpp>

#include <string>

namespace {

using ferro::plugin::check;

bool is_float(ferro_dtype d) {
    return d == FERRO_DTYPE_F32 || d == FERRO_DTYPE_F64;
}

// Output: same shape and dtype as the input, which must be real floating point.
ferro_status infer(const ferro_host_api* host, ferro_infer_args* args) {
    return ferro::plugin::guard(host, [&] {
        const ferro_signature& x = args->inputs[0];
        if (!is_float(x.dtype)) {
            throw ferro::plugin::Error(FERRO_INVALID_ARGUMENT,
                                       "example.softplus: input 0 must be f32 or f64");
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
            ferro_unary_args u{sizeof u, op, in, out};
            check(host, host->session_unary(s, &u));
        };
        unary(FERRO_UNARY_ABS, x, t.view);         // t = |x|
        unary(FERRO_UNARY_NEG, t.view, t.view);    // t = -|x|
        unary(FERRO_UNARY_EXP, t.view, t.view);    // t = e^-|x|
        unary(FERRO_UNARY_LOG1P, t.view, t.view);  // t = log1p(e^-|x|)
        ferro_fill_args zero{sizeof zero, 0, y, {0, 0, 0}};
        check(host, host->session_fill(s, &zero));  // y = 0
        ferro_binary_args relu{sizeof relu, FERRO_BINARY_MAXIMUM, x, y, y};
        check(host, host->session_binary(s, &relu));  // y = max(x, 0)
        ferro_binary_args add{sizeof add, FERRO_BINARY_ADD, y, t.view, y};
        check(host, host->session_binary(s, &add));   // y += t
    });
}

void destroy_plan(void*) {}
constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, execute, nullptr, destroy_plan};

ferro_status prepare(void*, const ferro_host_api*, const ferro_prepare_args*, ferro_plan_instance* out) {
    out->iface = &plan_iface;  // stateless: one plan serves every signature
    return nullptr;
}
void destroy_module(void*) {}
constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module};

// Engine-agnostic: accept every engine.
ferro_status create_module(const ferro_host_api*, const ferro_module_create_args*, ferro_module_instance* out) {
    out->iface = &module_iface;
    return nullptr;
}

constexpr ferro_dtype dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64};
constexpr ferro_op_schema ops[] = {{sizeof(ferro_op_schema), 0, "softplus", "log(1 + e^x), computed stably",
                                    1, 1, 1, 0, nullptr, 2, 0, dtypes, infer, 0, 0, 0, 0, nullptr, nullptr}};
constexpr ferro_family_desc families[] = {{sizeof(ferro_family_desc), 1, "example", "1.0.0",
                                           "example family from examples/plugin", ops, create_module}};
constexpr ferro_plugin_desc desc = {sizeof(ferro_plugin_desc), FERRO_ABI_MAJOR, FERRO_ABI_MINOR, 0,
                                    "example", "1.0.0", "an out-of-tree example plugin", 0, 1,
                                    nullptr, families, 0, 0, nullptr};

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    *out = &desc;
    return nullptr;
}

}  // namespace

FERRO_PLUGIN_EXPORT(query)
