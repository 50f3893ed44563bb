// The comm family's op schemas and infer: torch.distributed's collectives with MPI's argument
// names, checked against the runtime's communicator (its size shapes allgather and
// reduce_scatter, and bounds root).
#include "comm.hpp"

#include <ferro/dtype.hpp>
#include <ferro/schema.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ferro::comm {
namespace {

constexpr ferro_dtype data_dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64, FERRO_DTYPE_C64, FERRO_DTYPE_C128, FERRO_DTYPE_I64};
constexpr double kDefaultTimeout = 600;

constexpr const char* timeout_doc =
    "seconds to wait for every rank to join (0: FERRO_COMM_TIMEOUT, else 600); past it the call fails with "
    "DEADLINE_EXCEEDED and the communicator refuses further collectives";

const ferro_attr_spec allreduce_attrs[] = {
    plugin::spec_str("op", "sum", "the reduction: sum | max | min (max, min: real dtypes)"),
    plugin::spec_f64("timeout", 0, timeout_doc)};
const ferro_attr_spec timeout_attrs[] = {plugin::spec_f64("timeout", 0, timeout_doc)};
const ferro_attr_spec rooted_attrs[] = {plugin::spec_i64("root", 0, "the rank that sends (broadcast) or receives (reduce)"),
                                        plugin::spec_f64("timeout", 0, timeout_doc)};
const ferro_attr_spec barrier_attrs[] = {plugin::spec_str("engine", "cpu", "the engine whose module runs it"),
                                         plugin::spec_f64("timeout", 0, timeout_doc)};
const ferro_attr_spec info_attrs[] = {plugin::spec_str("engine", "cpu", "the engine whose module answers")};

struct OpInfo {
    const char* name;
    const char* doc;
    int32_t n_inputs, n_outputs;
    std::span<const ferro_attr_spec> attrs;
};

const OpInfo infos[] = {
    {"allreduce", "y = the reduction (sum, max, min) of x over every rank; every rank gets y", 1, 1, allreduce_attrs},
    {"allgather", "y[r] = x of rank r: every rank's x stacked on a new leading axis of length size", 1, 1, timeout_attrs},
    {"reduce_scatter", "y = sum over ranks r of x_r[rank]: x has a leading axis of length size", 1, 1, timeout_attrs},
    {"broadcast", "y = x of rank root, on every rank", 1, 1, rooted_attrs},
    {"reduce", "y = sum over ranks of x on rank root; zeros on the other ranks", 1, 1, rooted_attrs},
    {"barrier", "returns when every rank has called it", 0, 0, barrier_attrs},
    {"info", "this process's rank and the communicator's size: i64 [rank, size]", 0, 1, info_attrs},
};

double timeout_from_environment() {
    const char* text = std::getenv("FERRO_COMM_TIMEOUT");
    if (text == nullptr || *text == '\0') return kDefaultTimeout;
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (*end != '\0' || !(seconds > 0) || !std::isfinite(seconds)) {
        throw plugin::Error(FERRO_INVALID_ARGUMENT,
                            std::string("comm: FERRO_COMM_TIMEOUT must be a positive number of seconds; got \"") + text + "\"");
    }
    return seconds;
}

double resolve_timeout(Op op, double given) {
    if (!(given >= 0) || !std::isfinite(given)) {
        throw plugin::Error(FERRO_INVALID_ARGUMENT,
                            qualified(op) + ": timeout must be a finite number of seconds >= 0; got " + std::to_string(given));
    }
    return given > 0 ? given : timeout_from_environment();
}

Reduction parse_reduction(Op op, const char* text) {
    if (std::strcmp(text, "sum") == 0) return Reduction::sum;
    if (std::strcmp(text, "max") == 0) return Reduction::max;
    if (std::strcmp(text, "min") == 0) return Reduction::min;
    throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": op must be sum, max or min; got '" + text + "'");
}

std::shared_ptr<Communicator> require_communicator(const ferro_host_api* host, Op op) {
    std::shared_ptr<Communicator> c = existing_communicator(host);
    if (c == nullptr) {
        const std::string failure = communicator_failure(host);
        throw plugin::Error(
            FERRO_FAILED_PRECONDITION,
            qualified(op) + ": this runtime has no communicator" +
                (failure.empty() ? std::string(" (the comm family has no module on any of its engines)") : ": " + failure));
    }
    return c;
}

template <Op op> ferro_status infer(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        const Call call = describe(op, a->attrs);
        const std::shared_ptr<Communicator> comm = require_communicator(host, op);
        a->n_outputs = infos[static_cast<size_t>(op)].n_outputs;
        if (op == Op::barrier) return;  // no outputs (and outputs may be NULL)
        ferro_signature& out = a->outputs[0];
        out = {};
        out.struct_size = sizeof out;
        if (op == Op::info) {
            out.dtype = FERRO_DTYPE_I64;
            out.ndim = 1;
            out.shape[0] = 2;
            return;
        }
        const ferro_signature& x = a->inputs[0];
        if (std::find(std::begin(data_dtypes), std::end(data_dtypes), x.dtype) == std::end(data_dtypes)) {
            throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": input x must be f32, f64, c64, c128 or i64; got " +
                                                            plugin::dtype_name(x.dtype));
        }
        if (call.reduction != Reduction::sum && plugin::is_complex(x.dtype)) {
            throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": op " +
                                                            (call.reduction == Reduction::max ? "max" : "min") +
                                                            " needs a real dtype; x is " + plugin::dtype_name(x.dtype));
        }
        if ((op == Op::broadcast || op == Op::reduce) && (call.root < 0 || call.root >= comm->size())) {
            throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": root " + std::to_string(call.root) +
                                                            " is not a rank of this communicator (size " +
                                                            std::to_string(comm->size()) + ")");
        }
        out.dtype = x.dtype;
        if (op == Op::allgather) {
            if (x.ndim + 1 > FERRO_MAX_NDIM) {
                throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": x has " + std::to_string(x.ndim) +
                                                                " axes; the result would exceed FERRO_MAX_NDIM");
            }
            out.ndim = x.ndim + 1;
            out.shape[0] = comm->size();
            std::copy(x.shape, x.shape + x.ndim, out.shape + 1);
        } else if (op == Op::reduce_scatter) {
            if (x.ndim < 1 || x.shape[0] != comm->size()) {
                throw plugin::Error(FERRO_INVALID_ARGUMENT,
                                    qualified(op) + ": input x must have a leading axis of length " +
                                        std::to_string(comm->size()) + " (the communicator's size); got " +
                                        (x.ndim < 1 ? std::string("a scalar") : "length " + std::to_string(x.shape[0])));
            }
            out.ndim = x.ndim - 1;
            std::copy(x.shape + 1, x.shape + x.ndim, out.shape);
        } else {
            out.ndim = x.ndim;
            std::copy(x.shape, x.shape + x.ndim, out.shape);
        }
    });
}

template <Op op> ferro_status vjp_of(const ferro_host_api* host, const ferro_vjp_args* a) { return vjp(op, host, a); }
template <Op op> ferro_status jvp_of(const ferro_host_api* host, const ferro_jvp_args* a) { return jvp(op, host, a); }

template <Op op> ferro_op_schema schema() {
    const OpInfo& info = infos[static_cast<size_t>(op)];
    ferro_op_schema s = plugin::op_schema(info.name, info.doc, info.n_inputs, info.n_outputs, infer<op>);
    s.n_attrs = static_cast<uint32_t>(info.attrs.size());
    s.attrs = info.attrs.data();
    if (info.n_inputs > 0) {
        s.n_dtypes = std::size(data_dtypes);
        s.dtypes = data_dtypes;
        s.diff_inputs = 1;
        s.diff_outputs = 1;
        s.vjp = vjp_of<op>;
        s.jvp = jvp_of<op>;
        // max and min route the cotangent to the ranks that hold the extreme value.
        if (op == Op::allreduce) s.save_inputs = s.save_outputs = 1;
    }
    return s;
}

template <size_t... I> const ferro_op_schema* table(std::index_sequence<I...>) {
    static const ferro_op_schema all[] = {schema<static_cast<Op>(I)>()...};
    return all;
}

}  // namespace

const char* op_name(Op op) { return infos[static_cast<size_t>(op)].name; }
std::string qualified(Op op) { return std::string("comm.") + op_name(op); }

Call describe(Op op, const ferro_attr_value* attrs) {
    Call c;
    c.op = op;
    switch (op) {
        case Op::allreduce:
            c.reduction = parse_reduction(op, attrs[0].v.str);
            c.timeout_s = resolve_timeout(op, attrs[1].v.f64);
            break;
        case Op::allgather:
        case Op::reduce_scatter: c.timeout_s = resolve_timeout(op, attrs[0].v.f64); break;
        case Op::broadcast:
        case Op::reduce:
            c.root = attrs[0].v.i64;
            c.timeout_s = resolve_timeout(op, attrs[1].v.f64);
            break;
        case Op::barrier: c.timeout_s = resolve_timeout(op, attrs[1].v.f64); break;
        case Op::info:
        case Op::count: break;
    }
    return c;
}

const ferro_op_schema* schemas() { return table(std::make_index_sequence<static_cast<size_t>(Op::count)>{}); }

std::span<const char* const> rule_calls() {
    static const char* const names[] = {"comm.allreduce", "comm.allgather", "comm.reduce_scatter", "comm.broadcast",
                                        "comm.reduce"};
    return names;
}

}  // namespace ferro::comm
