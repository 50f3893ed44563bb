// The einsum family's schemas: einsum.einsum (the contraction) and einsum.path (the contraction
// path and its cost, computed without executing).
#include "einsum.hpp"

#include <ferro/plugin.hpp>
#include <ferro/rules.hpp>
#include <ferro/schema.hpp>

#include <string>

namespace ferro::einsum {
namespace {

[[noreturn]] void fail(const std::string& why) { throw plugin::Error(FERRO_INVALID_ARGUMENT, "einsum: " + why); }

constexpr ferro_dtype float_dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64, FERRO_DTYPE_C64, FERRO_DTYPE_C128};

const ferro_attr_spec attrs[kAttrCount] = {
    plugin::spec_str("subscripts", nullptr, "numpy notation: \"ij,jk->ik\", implicit output, ..., any Unicode label"),
    plugin::spec_optional("sublists", FERRO_ATTR_I64_ARRAY,
                          "integer labels instead of subscripts: each operand's (-1 for ...), -2 between "
                          "operands, -3 then the output's"),
    plugin::spec_str("optimize", "auto",
                     "contraction path: auto (optimal up to 8 operands, else greedy improved by subtree "
                     "reconfiguration, or the connected-subnetwork optimum up to 128 operands when it is cheaper "
                     "and found within its budget) | greedy | optimal (exact; beyond 16 operands over connected "
                     "subnetworks, up to 128) | random-greedy"),
    plugin::spec_optional("path", FERRO_ATTR_I64_ARRAY,
                          "an explicit path in opt_einsum's linear form, as pairs flattened: [i0, j0, i1, j1, ...]"),
    plugin::spec_str("minimize", "flops", "what optimal and random-greedy minimise: flops | size (largest intermediate)"),
    plugin::spec_i64("seed", 0, "random-greedy: seed of its trials (the same seed gives the same path)"),
    plugin::spec_i64("repeats", 32, "random-greedy: number of trials"),
    plugin::spec_f64("max_seconds", 0.0, "random-greedy: stop starting trials after this long (0: no limit)"),
    plugin::spec_str("order", nullptr, "an explicit path as a nested tree of operand positions: \"((0, 1), (2, 3))\""),
    plugin::spec_i64("memory_limit", 0,
                     "bytes of working memory (the plan's workspace: intermediates, packed operands and the slices' "
                     "accumulator; not the operands or the output) the contraction may take; labels are sliced to stay "
                     "under it (0: no limit)"),
    plugin::spec_i64("slices", 0, "contract in at least this many slices (0: as memory_limit needs)"),
    plugin::spec_bool("distribute", false,
                      "spread the slices over the ranks of the runtime's communicator (comm family; at least one slice "
                      "per rank) and allreduce the parts: every rank gets the whole result. The operands must be the same "
                      "on every rank; derivatives are distributed too")};

bool is_float(ferro_dtype d) {
    return d == FERRO_DTYPE_F32 || d == FERRO_DTYPE_F64 || d == FERRO_DTYPE_C64 || d == FERRO_DTYPE_C128;
}

// Output shape of the contraction; checks the operands and the expression.
std::vector<int64_t> output_shape(const Expression& e, std::span<const ferro_signature> inputs) {
    const std::vector<int64_t> sizes = label_sizes(e, shapes_of(inputs));
    std::vector<int64_t> shape;
    for (int l : e.output) shape.push_back(sizes[static_cast<size_t>(l)]);
    return shape;
}

ferro_status infer_einsum(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        const std::span<const ferro_signature> in(a->inputs, a->n_inputs);
        const Expression e = expression_of(a->attrs, in);
        const std::vector<int64_t> shape = output_shape(e, in);
        path_options_of(a->attrs, static_cast<int>(a->n_inputs));  // bad options fail here, before any work
        ferro_signature& out = a->outputs[0];
        out.struct_size = sizeof out;
        out.dtype = result_dtype(in);
        out.ndim = static_cast<int32_t>(shape.size());
        if (shape.size() > FERRO_MAX_NDIM) fail("the output would have " + std::to_string(shape.size()) + " dimensions");
        std::copy(shape.begin(), shape.end(), out.shape);
        a->n_outputs = 1;
    });
}

ferro_status infer_path(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        const std::span<const ferro_signature> in(a->inputs, a->n_inputs);
        output_shape(expression_of(a->attrs, in), in);
        path_options_of(a->attrs, static_cast<int>(a->n_inputs));
        slice_options_of(a->attrs);
        const int64_t steps = static_cast<int64_t>(a->n_inputs) - 1;
        ferro_signature* out = a->outputs;
        for (uint32_t i = 0; i < kPathOutputs; ++i) {
            out[i] = {};
            out[i].struct_size = sizeof out[i];
            out[i].dtype = FERRO_DTYPE_F64;
        }
        out[0].dtype = out[3].dtype = out[4].dtype = FERRO_DTYPE_I64;
        out[0].ndim = out[3].ndim = 2;
        out[0].shape[0] = steps;
        out[0].shape[1] = out[3].shape[1] = 2;
        out[3].shape[0] = expression_of(a->attrs, in).n_labels();
        a->n_outputs = kPathOutputs;
    });
}

}  // namespace

Expression expression_of(const ferro_attr_value* a, std::span<const ferro_signature> inputs) {
    std::vector<int> ranks;
    for (size_t k = 0; k < inputs.size(); ++k) {
        if (!is_float(inputs[k].dtype)) {
            fail("operand " + std::to_string(k) + " has dtype " + plugin::dtype_attr_name(inputs[k].dtype) +
                 "; einsum takes f32, f64, c64 or c128");
        }
        ranks.push_back(inputs[k].ndim);
    }
    const bool has_subscripts = a[kSubscripts].type == FERRO_ATTR_STR;
    const bool has_sublists = a[kSublists].type == FERRO_ATTR_I64_ARRAY;
    if (has_subscripts == has_sublists) {
        fail(has_subscripts ? "give subscripts or sublists, not both" : "subscripts (or sublists) are required");
    }
    if (has_subscripts) return parse_subscripts(a[kSubscripts].v.str, ranks);
    return parse_sublists({a[kSublists].v.i64_array, a[kSublists].count}, ranks);
}

PathOptions path_options_of(const ferro_attr_value* a, int n_operands) {
    PathOptions o;
    o.optimize = a[kOptimize].v.str;
    if (o.optimize != "auto" && o.optimize != "greedy" && o.optimize != "optimal" && o.optimize != "random-greedy") {
        fail("optimize must be auto, greedy, optimal or random-greedy, got \"" + o.optimize + "\"");
    }
    if (a[kPath].type == FERRO_ATTR_I64_ARRAY) {
        const uint32_t n = a[kPath].count;
        if (n % 2 != 0) fail("path has " + std::to_string(n) + " entries; it lists pairs (i, j), flattened");
        for (uint32_t i = 0; i < n; i += 2) {
            o.explicit_path.emplace_back(static_cast<int>(a[kPath].v.i64_array[i]),
                                         static_cast<int>(a[kPath].v.i64_array[i + 1]));
        }
        o.has_explicit_path = true;
    }
    if (a[kOrder].type == FERRO_ATTR_STR) {
        if (o.has_explicit_path) fail("give path or order, not both");
        o.explicit_path = parse_order(a[kOrder].v.str, n_operands);
        o.has_explicit_path = true;
    }
    const std::string minimize = a[kMinimize].v.str;
    if (minimize != "flops" && minimize != "size") fail("minimize must be flops or size, got \"" + minimize + "\"");
    o.objective = minimize == "size" ? Objective::size : Objective::flops;
    o.random.objective = o.objective;
    o.random.seed = static_cast<uint64_t>(a[kSeed].v.i64);
    o.random.repeats = a[kRepeats].v.i64;
    if (o.random.repeats < 1) fail("repeats must be >= 1, got " + std::to_string(o.random.repeats));
    o.random.max_seconds = a[kMaxSeconds].v.f64;
    return o;
}

SliceOptions slice_options_of(const ferro_attr_value* a) {
    SliceOptions o;
    if (a[kMemoryLimit].v.i64 < 0) fail("memory_limit must be >= 0 bytes, got " + std::to_string(a[kMemoryLimit].v.i64));
    if (a[kSlices].v.i64 < 0) fail("slices must be >= 0, got " + std::to_string(a[kSlices].v.i64));
    o.memory_limit = static_cast<uint64_t>(a[kMemoryLimit].v.i64);
    o.min_slices = a[kSlices].v.i64;
    o.distribute = a[kDistribute].v.boolean != 0;
    return o;
}

std::vector<ferro_named_attr> named_attrs(const ferro_attr_value* values) {
    std::vector<ferro_named_attr> named;
    for (size_t k = 0; k < kAttrCount; ++k) {
        if (values[k].type != FERRO_ATTR_NONE) named.push_back({attrs[k].name, values[k]});
    }
    return named;
}

const ferro_op_schema* schemas() {
    static const ferro_op_schema ops[] = {
        {sizeof(ferro_op_schema), 0, "einsum",
         "Einstein summation over any number of operands (numpy.einsum / torch.einsum notation), contracted "
         "pairwise along an optimised path",
         FERRO_VARIADIC, 1, 1, kAttrCount, attrs, 4, 0, float_dtypes, infer_einsum, FERRO_MASK_ALL, 1, FERRO_MASK_ALL, 0,
         einsum_vjp, einsum_jvp},
        {sizeof(ferro_op_schema), 0, "path",
         "the contraction path einsum would take (opt_einsum linear form), its flop count and largest "
         "intermediate, every label's key and whether it is sliced, the number of slices, their flops and the "
         "working memory, without contracting",
         FERRO_VARIADIC, 1, kPathOutputs, kAttrCount, attrs, 4, 0, float_dtypes, infer_path, 0, 0, 0, 0, nullptr, nullptr},
    };
    return ops;
}

}  // namespace ferro::einsum
