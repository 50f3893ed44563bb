// libferro_comm.so: the comm family and its modules. The runtime's communicator decides which
// module serves: "self" (one process) on every engine, through engine primitives; "mpi" on the
// cpu engine, through MPI on host memory (other engines decline: move tensors to cpu).
#include "comm.hpp"

#include <ferro/cpu_context.h>
#include <ferro/schema.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ferro::comm {
namespace {

struct Module {
    std::shared_ptr<Communicator> comm;
    bool self;
};

struct Plan {
    Call call;
    std::shared_ptr<Communicator> comm;
    bool self;
    std::vector<int64_t> signature;  // what every rank must agree on
};

// Op, dtype, shape (rank, elements and a digest) and the attributes that matter across ranks.
std::vector<int64_t> signature_of(const Call& call, const ferro_prepare_args& a) {
    std::vector<int64_t> s = {static_cast<int64_t>(call.op), static_cast<int64_t>(call.reduction), call.root, 0, 0, 0, 0};
    if (a.n_inputs > 0) {
        const ferro_signature& x = a.inputs[0];
        int64_t elements = 1;
        uint64_t digest = 1469598103934665603ull;
        for (int32_t i = 0; i < x.ndim; ++i) {
            elements *= x.shape[i];
            digest = (digest ^ static_cast<uint64_t>(x.shape[i])) * 1099511628211ull;
        }
        s[3] = x.dtype;
        s[4] = x.ndim;
        s[5] = elements;
        s[6] = static_cast<int64_t>(digest >> 1);
    }
    return s;
}

int64_t elements_of(const ferro_tensor_view& v) {
    int64_t n = 1;
    for (int32_t i = 0; i < v.ndim; ++i) n *= v.shape[i];
    return n;
}

// Copies a strided host view into packed row-major memory.
void pack(const ferro_tensor_view& v, std::byte* out) {
    const size_t item = FERRO_DTYPE_BITS(v.dtype) / 8;
    const int64_t n = elements_of(v);
    if (n == 0) return;
    std::vector<int64_t> index(static_cast<size_t>(v.ndim), 0);
    const auto* base = static_cast<const std::byte*>(v.data);
    const int32_t last = v.ndim - 1;
    const int64_t inner = v.ndim > 0 ? v.shape[last] : 1, inner_stride = v.ndim > 0 ? v.strides[last] : 1;
    for (int64_t done = 0; done < n; done += inner) {
        int64_t offset = 0;
        for (int32_t i = 0; i < last; ++i) offset += index[static_cast<size_t>(i)] * v.strides[i];
        const std::byte* row = base + offset * static_cast<int64_t>(item);
        if (inner_stride == 1) {
            std::memcpy(out, row, static_cast<size_t>(inner) * item);
        } else {
            for (int64_t j = 0; j < inner; ++j)
                std::memcpy(out + static_cast<size_t>(j) * item, row + j * inner_stride * static_cast<int64_t>(item), item);
        }
        out += static_cast<size_t>(inner) * item;
        for (int32_t i = last - 1; i >= 0; --i) {
            if (++index[static_cast<size_t>(i)] < v.shape[i]) break;
            index[static_cast<size_t>(i)] = 0;
        }
    }
}

// A view of `v` without its leading axis of length 1.
ferro_tensor_view drop_leading(const ferro_tensor_view& v) {
    ferro_tensor_view d = v;
    d.ndim = v.ndim - 1;
    d.shape = v.shape + 1;
    d.strides = v.strides + 1;
    d.tensor = nullptr;
    return d;
}

// One process: every collective is a copy (or nothing), on any engine.
void execute_self(const Plan& plan, const ferro_host_api* host, const ferro_exec_args& a) {
    switch (plan.call.op) {
        case Op::barrier: return;
        case Op::info: {
            for (int64_t i = 0; i < 2; ++i) {
                ferro_fill_args fill{};
                fill.struct_size = sizeof fill;
                fill.out = a.outputs[0];
                fill.out.ndim = 0;
                fill.out.tensor = nullptr;
                fill.out.byte_offset += static_cast<uint64_t>(i) * sizeof(int64_t);
                if (fill.out.data != nullptr) fill.out.data = static_cast<std::byte*>(fill.out.data) + i * 8;
                fill.value.integer = i;  // rank 0, size 1
                fill.value.real = static_cast<double>(i);
                plugin::check(host, host->session_fill(a.session, &fill));
            }
            return;
        }
        default: break;
    }
    ferro_copy_args copy{};
    copy.struct_size = sizeof copy;
    copy.in = plan.call.op == Op::reduce_scatter ? drop_leading(a.inputs[0]) : a.inputs[0];
    copy.out = plan.call.op == Op::allgather ? drop_leading(a.outputs[0]) : a.outputs[0];
    plugin::check(host, host->session_copy_strided(a.session, &copy));
}

// Several processes through the communicator, on host memory.
void execute_host(const Plan& plan, const ferro_host_api* host, const ferro_exec_args& a) {
    const void* context = nullptr;  // orders this call after the session's earlier work
    plugin::check(host, host->session_native_context(a.session, &context));
    Communicator& comm = *plan.comm;
    const Call& call = plan.call;
    if (call.op == Op::info) {
        const int64_t rank_size[2] = {comm.rank(), comm.size()};
        std::memcpy(a.outputs[0].data, rank_size, sizeof rank_size);
        return;
    }
    if (call.op == Op::barrier) {
        comm.run(call, plan.signature, {nullptr, 0, FERRO_DTYPE_INVALID});
        return;
    }
    const ferro_tensor_view& x = a.inputs[0];
    const ferro_tensor_view& y = a.outputs[0];
    const size_t item = FERRO_DTYPE_BITS(x.dtype) / 8;
    auto* out = static_cast<std::byte*>(y.data);
    switch (call.op) {
        case Op::allgather: {
            const int64_t n = elements_of(x);
            pack(x, out + static_cast<size_t>(comm.rank() * n) * item);
            comm.run(call, plan.signature, {out, n * comm.size(), x.dtype});
            return;
        }
        case Op::reduce_scatter: {
            const int64_t n = elements_of(x);
            std::vector<std::byte> all(static_cast<size_t>(n) * item);
            pack(x, all.data());
            comm.run(call, plan.signature, {all.data(), n, x.dtype});
            std::memcpy(out, all.data(), static_cast<size_t>(elements_of(y)) * item);
            return;
        }
        default: {
            const int64_t n = elements_of(x);
            pack(x, out);
            comm.run(call, plan.signature, {out, n, x.dtype});
            if (call.op == Op::reduce && comm.rank() != call.root) std::memset(out, 0, static_cast<size_t>(n) * item);
        }
    }
}

ferro_status execute_in_session(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] {
        const Plan& plan = *static_cast<const Plan*>(self);
        if (plan.self) {
            execute_self(plan, host, *args);
        } else {
            execute_host(plan, host, *args);
        }
    });
}

void destroy_plan(void* self) { delete static_cast<Plan*>(self); }

constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, execute_in_session, nullptr, destroy_plan};

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        if (args->op_index >= static_cast<uint32_t>(Op::count)) {
            throw plugin::Error(FERRO_INTERNAL, "comm: prepare for an unknown op index " + std::to_string(args->op_index));
        }
        const Module& m = *static_cast<const Module*>(self);
        const Call call = describe(static_cast<Op>(args->op_index), args->attrs);
        out->self = new Plan{call, m.comm, m.self, signature_of(call, *args)};
        out->iface = &plan_iface;
        out->workspace_bytes = 0;
        out->retained_bytes = sizeof(Plan);
    });
}

void destroy_module(void* self) { delete static_cast<Module*>(self); }

// One sample call per collective (ferro-inspect check): a 3 x 4 batch, reduce_scatter's with
// the communicator's size leading; seeded alike on every rank. barrier and info take no input.
ferro_status examples(void* self, const ferro_host_api* host, ferro_examples_args* args) {
    return plugin::guard(host, [&] {
        const auto op = static_cast<Op>(args->op_index);
        if (op == Op::barrier || op == Op::info || args->dtype == FERRO_DTYPE_I64 || args->capacity == 0) return;
        const int64_t size = static_cast<const Module*>(self)->comm->size();
        const int64_t batch[] = {3, 4}, scattered[] = {size, 4};
        const plugin::Rules r(host);
        ferro_example& e = args->examples[0];
        e = {};
        e.inputs[0] = r.rand(op == Op::reduce_scatter ? std::span<const int64_t>(scattered) : std::span<const int64_t>(batch),
                             args->dtype, 71, args->engine)
                          .release();
        e.n_inputs = 1;
        if (op == Op::allreduce) e.attrs[e.n_attrs++] = plugin::attr_str("op", "sum");
        e.what = op == Op::reduce_scatter ? "size x 4" : "3 x 4";
        args->n_examples = 1;
    });
}

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, examples, 0, 0};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        std::shared_ptr<Communicator> comm = communicator_for(host);
        const bool self = std::strcmp(comm->kind(), "self") == 0;
        if (!self && !plugin::accepts_cpu_context(args, "the mpi module")) return;
        out->self = new Module{std::move(comm), self};
        out->iface = &module_iface;
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
#ifdef FERRO_COMM_MPI
    constexpr const char* modules = "comm family: self module (one process, every engine), mpi module (Open MPI, cpu engine)";
#else
    constexpr const char* modules = "comm family: self module (one process, every engine); built without MPI";
#endif
    static const plugin::OneFamilyPlugin desc(
        "comm", "0.1.0", modules,
        "collectives across processes: allreduce (sum, max, min), allgather, reduce_scatter, broadcast, reduce, barrier, "
        "and the runtime's rank and size (info)",
        static_cast<uint32_t>(Op::count), schemas(), create_module, nullptr, rule_calls());
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::comm

FERRO_PLUGIN_EXPORT(ferro::comm::query)
