// libferro_comm.so: the comm family and its modules. The runtime's communicator decides which
// module serves: "self" (one process) on every engine, through engine primitives; "mpi" on the
// cpu engine, through MPI on host memory (other engines decline: move tensors to cpu).
#include "comm.hpp"

#include <ferro/schema.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ferro::comm {
namespace {

struct Module {
    std::shared_ptr<Communicator> comm;
};

struct Plan {
    Call call;
    std::shared_ptr<Communicator> comm;
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

// A view of `v` without its leading axis, moved on to its `index`th entry along it.
ferro_tensor_view entry(const ferro_tensor_view& v, int64_t index) {
    ferro_tensor_view d = v;
    d.ndim = v.ndim - 1;
    d.shape = v.shape + 1;
    d.strides = v.strides + 1;
    d.tensor = nullptr;
    const int64_t bytes = index * v.strides[0] * (FERRO_DTYPE_BITS(v.dtype) / 8);
    d.byte_offset = static_cast<uint64_t>(static_cast<int64_t>(v.byte_offset) + bytes);
    if (d.data != nullptr) d.data = static_cast<std::byte*>(d.data) + bytes;
    return d;
}

void copy(const ferro_host_api* host, ferro_session session, const ferro_tensor_view& from, const ferro_tensor_view& to) {
    const ferro_copy_args c{sizeof c, 0, from, to};
    plugin::check(host, host->session_copy_strided(session, &c));
}

void fill(const ferro_host_api* host, ferro_session session, ferro_tensor_view out, int64_t element, int64_t value) {
    out.ndim = 0;
    out.tensor = nullptr;
    out.byte_offset += static_cast<uint64_t>(element) * (FERRO_DTYPE_BITS(out.dtype) / 8);
    if (out.data != nullptr) out.data = static_cast<std::byte*>(out.data) + element * (FERRO_DTYPE_BITS(out.dtype) / 8);
    const ferro_fill_args f{sizeof f, 0, out, {static_cast<double>(value), 0, value}};
    plugin::check(host, host->session_fill(session, &f));
}

// Each collective copies its input where the communicator works on it in place, with the
// engine's strided copy (on any engine: one process's collectives are these copies alone),
// then runs the communicator on that memory. The mpi module is only made for the cpu engine,
// whose primitives have run by the time they are enqueued, so the memory is complete then.
void execute(const Plan& plan, const ferro_host_api* host, const ferro_exec_args& a) {
    Communicator& comm = *plan.comm;
    const Call& call = plan.call;
    if (call.op == Op::info) {
        fill(host, a.session, a.outputs[0], 0, comm.rank());
        fill(host, a.session, a.outputs[0], 1, comm.size());
        return;
    }
    if (call.op == Op::barrier) {
        comm.run(call, plan.signature, {nullptr, 0, FERRO_DTYPE_INVALID});
        return;
    }
    const ferro_tensor_view& x = a.inputs[0];
    const ferro_tensor_view& y = a.outputs[0];
    const int64_t n = elements_of(x);
    switch (call.op) {
        case Op::allgather:
            copy(host, a.session, x, entry(y, comm.rank()));
            comm.run(call, plan.signature, {y.data, n * comm.size(), x.dtype});
            return;
        case Op::reduce_scatter: {
            if (comm.size() == 1) {
                copy(host, a.session, entry(x, 0), y);
                return;
            }
            // x packed into scratch, reduced there in place; this rank's block is its first.
            ferro_buffer_view scratch{};
            plugin::check(host,
                          host->session_scratch(a.session, static_cast<uint64_t>(n) * (FERRO_DTYPE_BITS(x.dtype) / 8), &scratch));
            std::vector<int64_t> strides(static_cast<size_t>(x.ndim), 1);
            for (int32_t d = x.ndim - 1; d > 0; --d)
                strides[static_cast<size_t>(d - 1)] = strides[static_cast<size_t>(d)] * x.shape[d];
            const ferro_tensor_view packed{sizeof packed,       x.dtype,      x.ndim, 0, x.shape, strides.data(), scratch.buffer,
                                           scratch.byte_offset, scratch.data, nullptr};
            copy(host, a.session, x, packed);
            comm.run(call, plan.signature, {scratch.data, n, x.dtype});
            copy(host, a.session, entry(packed, 0), y);
            return;
        }
        default:
            copy(host, a.session, x, y);
            comm.run(call, plan.signature, {y.data, n, x.dtype});
            if (call.op == Op::reduce && comm.rank() != call.root) {
                const ferro_fill_args zero{sizeof zero, 0, y, {}};
                plugin::check(host, host->session_fill(a.session, &zero));
            }
    }
}

ferro_status execute_in_session(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] { execute(*static_cast<const Plan*>(self), host, *args); });
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
        out->self = new Plan{call, m.comm, signature_of(call, *args)};
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
        if (std::strcmp(comm->kind(), "self") != 0 && !plugin::accepts_cpu_context(args, "the mpi module")) return;
        out->self = new Module{std::move(comm)};
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
