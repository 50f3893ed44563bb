#include "host_api/host_api.hpp"

#include "autodiff/grad_mode.hpp"
#include "dispatch/session.hpp"
#include "runtime/runtime.hpp"
#include "support/status.hpp"

#include <fmt/format.h>

#include <cstring>
#include <string_view>

namespace ferro::host {
namespace {

ferro_status status_make(uint32_t code, const char* message) { return make_status(code, message != nullptr ? message : ""); }
void status_free(ferro_status status) { free_status(status); }
uint32_t status_code(ferro_status status) { return status != nullptr ? status->code : uint32_t{FERRO_OK}; }
const char* status_message(ferro_status status) { return status != nullptr ? status->message.c_str() : ""; }

void log(const ferro_host_api* host, uint32_t level, const char* source, const char* message) {
    runtime_of(host).logger().log(level, source != nullptr ? source : "plugin", message != nullptr ? message : "");
}
ferro_bool log_enabled(const ferro_host_api* host, uint32_t level) { return runtime_of(host).logger().enabled(level) ? 1 : 0; }

ferro_status tensor_view(ferro_tensor t, ferro_tensor_view* out) {
    return guard([&] {
        if (t == nullptr || out == nullptr) throw Error(FERRO_INVALID_ARGUMENT, "tensor_view: NULL argument");
        *out = view_of(*t);
    });
}

ferro_status tensor_signature(ferro_tensor t, ferro_signature* out) {
    return guard([&] {
        if (t == nullptr || out == nullptr) throw Error(FERRO_INVALID_ARGUMENT, "tensor_signature: NULL argument");
        fill_signature(*t, *out);
    });
}

const char* tensor_engine(ferro_tensor t) { return t != nullptr ? t->storage->engine().name().c_str() : ""; }

ferro_status tensor_empty(const ferro_host_api* host, const char* engine, ferro_dtype dtype, int32_t ndim, const int64_t* shape,
                          ferro_tensor* out) {
    return guard([&] {
        if (engine == nullptr || out == nullptr || (ndim > 0 && shape == nullptr) || ndim < 0) {
            throw Error(FERRO_INVALID_ARGUMENT, "tensor_empty: NULL argument or negative ndim");
        }
        if (!is_valid_dtype(dtype)) throw Error(FERRO_INVALID_ARGUMENT, "tensor_empty: invalid dtype " + dtype_name(dtype));
        const EnginePtr e = runtime_of(host).engine(engine);
        *out = make_tensor(e, dtype, {shape, static_cast<size_t>(ndim)}, "tensor_empty").release_ownership();
    });
}

ferro_status tensor_from_host(const ferro_host_api* host, const char* engine, ferro_dtype dtype, int32_t ndim,
                              const int64_t* shape, const void* data, ferro_tensor* out) {
    return guard([&] {
        ferro_tensor t = nullptr;
        throw_if_error(tensor_empty(host, engine, dtype, ndim, shape, &t));
        TensorPtr owned = TensorPtr::adopt(t);
        const auto bytes = static_cast<uint64_t>(numel(owned->shape) * itemsize(dtype));
        if (bytes > 0 && data == nullptr) throw Error(FERRO_INVALID_ARGUMENT, "tensor_from_host: data is NULL");
        if (bytes > 0) copy_from_host(*owned, data, bytes);
        *out = owned.release_ownership();
    });
}

ferro_status tensor_to_host(ferro_tensor t, void* dst, uint64_t bytes) {
    return guard([&] {
        if (t == nullptr || (dst == nullptr && bytes > 0)) throw Error(FERRO_INVALID_ARGUMENT, "tensor_to_host: NULL argument");
        note_work_outside_session();
        copy_to_host(*t, dst, bytes);
    });
}

// AD rules find their ops by name on every call (find_op); a per-thread cache keeps that off
// the runtime's locks. Entries key on the runtime's id (never reused) and the name (its address
// first, then its text); handles live as long as their runtime, so a hit is always valid.
struct OpFindCache {
    struct Entry {
        uint64_t runtime = 0;
        const char* key = nullptr;
        char name[48] = {};
        ferro_op op = nullptr;
    };
    Entry entries[64];
    Entry& slot(const char* name) { return entries[(reinterpret_cast<uintptr_t>(name) >> 3) % 64]; }
};

ferro_status op_find(const ferro_host_api* host, const char* name, ferro_op* out) {
    return guard([&] {
        if (name == nullptr || out == nullptr) throw Error(FERRO_INVALID_ARGUMENT, "op_find: NULL argument");
        *out = find_op(runtime_of(host), name, "op_find");
    });
}

ferro_status op_call(const ferro_host_api* host, ferro_op op, ferro_op_call_args* args) {
    return guard([&] {
        if (op == nullptr || args == nullptr) throw Error(FERRO_INVALID_ARGUMENT, "op_call: NULL argument");
        note_work_outside_session();
        call_op(runtime_of(host), *op, *args);
    });
}

ferro_status runtime_communicator(const ferro_host_api* host, ferro_communicator* out) {
    return guard([&] {
        if (out == nullptr) throw Error(FERRO_INVALID_ARGUMENT, "runtime_communicator: NULL argument");
        require_struct_size(out->struct_size, sizeof(ferro_communicator), "runtime_communicator", "ferro_communicator");
        const RuntimeOptions& o = runtime_of(host).options();
        out->kind = o.communicator_kind.empty() ? nullptr : o.communicator_kind.c_str();
        out->handle = o.communicator.empty() ? nullptr : o.communicator.data();
        out->bytes = o.communicator.size();
    });
}

}  // namespace

ferro_op find_op(Runtime& rt, const char* name, const char* context) {
    thread_local OpFindCache cache;
    OpFindCache::Entry& e = cache.slot(name);
    if (e.runtime == rt.id() && e.key == name && std::strcmp(e.name, name) == 0) return e.op;
    if (const SnapshotPtr snap = rt.snapshot(); snap->find_op(name) == nullptr) {
        throw Error(FERRO_NOT_FOUND, std::string(context) + ": " + snap->missing_op_message(name));
    }
    ferro_op op = &rt.op(name);
    if (std::strlen(name) < sizeof e.name) {
        e = {rt.id(), name, {}, op};
        std::strcpy(e.name, name);
    }
    return op;
}

void call_op(Runtime& runtime, ferro_op_impl& op, ferro_op_call_args& args) {
    require_struct_size(args.struct_size, kOpCallArgsMinSize, op.name, "ferro_op_call_args");
    check_op_runtime(op, runtime, op.name);
    if (args.n_inputs > 0 && args.inputs == nullptr) throw Error(FERRO_INVALID_ARGUMENT, op.name + ": inputs is NULL");
    const std::span<ferro_tensor_impl* const> inputs{args.inputs, args.n_inputs};
    if (const auto into = into_of(op.name, args); !into.empty()) {
        runtime.dispatcher().call(op, args.attrs, args.n_attrs, inputs, into);
        args.n_outputs = args.n_into;
        return;
    }
    Outputs outs = runtime.dispatcher().call(op, args.attrs, args.n_attrs, inputs);
    give_outputs(op.name, outs, args);
}

void give_outputs(const std::string& op, Outputs& outs, ferro_op_call_args& args) {
    if (outs.size() > args.outputs_capacity) {
        throw Error(FERRO_OUT_OF_RANGE, fmt::format("{}: {} outputs, capacity {}", op, outs.size(), args.outputs_capacity));
    }
    if (!outs.empty() && args.outputs == nullptr) throw Error(FERRO_INVALID_ARGUMENT, op + ": outputs is NULL");
    for (size_t i = 0; i < outs.size(); ++i) args.outputs[i] = outs[i].release_ownership();
    args.n_outputs = static_cast<uint32_t>(outs.size());
}

Runtime& runtime_of(const ferro_host_api* host) { return *static_cast<Runtime*>(host->host_data); }

ferro_host_api make_host_api(Runtime* runtime) {
    ferro_host_api api{};
    api.struct_size = sizeof api;
    api.abi_major = FERRO_ABI_MAJOR;
    api.abi_minor = FERRO_ABI_MINOR;
    api.host_data = runtime;
    api.status_make = status_make;
    api.status_free = status_free;
    api.status_code = status_code;
    api.status_message = status_message;
    api.log = log;
    api.log_enabled = log_enabled;
    api.tensor_retain = TensorPtr::retain;
    api.tensor_release = TensorPtr::release;
    api.tensor_view = tensor_view;
    api.tensor_signature = tensor_signature;
    api.tensor_engine = tensor_engine;
    api.tensor_empty = tensor_empty;
    api.tensor_from_host = tensor_from_host;
    api.tensor_to_host = tensor_to_host;
    api.op_find = op_find;
    api.op_call = op_call;
    api.grad_enabled = [](const ferro_host_api*) -> ferro_bool { return grad_enabled() ? 1 : 0; };
    api.session_fill = session_fill;
    api.session_cast = session_cast;
    api.session_unary = session_unary;
    api.session_binary = session_binary;
    api.session_where = session_where;
    api.session_reduce = session_reduce;
    api.session_copy_strided = session_copy_strided;
    api.session_gemm_batched = session_gemm_batched;
    api.session_scratch = session_scratch;
    api.session_native_context = session_native_context;
    api.session_use = session_use;
    api.runtime_communicator = runtime_communicator;
    api.session_parallel = session_parallel;
    return api;
}

}  // namespace ferro::host
