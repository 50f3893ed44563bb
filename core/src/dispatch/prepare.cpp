// Dispatcher::prepare: a miss's plan. Infer the outputs, then ask the family's modules for the
// engine in order; the first that accepts prepares the plan. What a plugin hands back (output
// signatures and strides, residuals) is checked before the host relies on it.
#include "dispatch/dispatcher.hpp"

#include "dispatch/plugin_call.hpp"
#include "host_api/host_api.hpp"
#include "runtime/runtime.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace ferro::host {

[[noreturn]] void rethrow(ferro_status st, const std::string& op, const char* stage, const ferro_host_api* host) {
    const uint32_t code = st->code;
    std::string message = st->message;
    free_status(st);
    runtime_of(host).logger().logf(FERRO_LOG_DEBUG, "dispatch", "{}: {} failed: {}", op, stage, message);
    const auto dot = op.find('.');
    for (const std::string& prefix : {op, op.substr(0, dot), op.substr(dot + 1)}) {
        if (message.rfind(prefix + ": ", 0) == 0) {
            message.erase(0, prefix.size() + 2);
            break;
        }
    }
    throw Error(code, op + ": " + message);
}

namespace {

// A signature a plugin produced (an output from infer, a residual from prepare), checked.
OutputSig checked_signature(const ferro_signature& o, const std::string& op, const char* phase, const char* what, size_t i) {
    if (!is_valid_dtype(o.dtype) || o.ndim < 0 || o.ndim > FERRO_MAX_NDIM) {
        throw Error(FERRO_INTERNAL, fmt::format("{}: {} produced an invalid signature for {} {}", op, phase, what, i));
    }
    Dims shape(o.shape, o.shape + o.ndim);
    const uint64_t bytes = checked_bytes(o.dtype, span_of(shape), op.c_str());
    return {o.dtype, shape, contiguous_strides(shape), bytes};
}

std::vector<OutputSig> infer(const ferro_host_api* host, const ferro_op_schema& s, const std::string& op, const AttrValues& attrs,
                             const std::vector<ferro_signature>& in) {
    const uint32_t capacity = s.n_outputs >= 0 ? static_cast<uint32_t>(s.n_outputs) : 64;
    std::vector<ferro_signature> out(capacity);
    for (auto& sig : out) sig.struct_size = sizeof sig;
    ferro_infer_args args{sizeof args, static_cast<uint32_t>(in.size()), attrs.data(), in.data(), out.data(), capacity, 0, &s};
    if (ferro_status st = call_plugin(op, "infer", [&] { return s.infer(host, &args); })) rethrow(st, op, "infer", host);
    if (args.n_outputs > capacity || (s.n_outputs >= 0 && args.n_outputs != capacity)) {
        throw Error(FERRO_INTERNAL,
                    fmt::format("{}: infer reported {} outputs, the schema declares {}", op, args.n_outputs, s.n_outputs));
    }
    std::vector<OutputSig> result;
    for (uint32_t i = 0; i < args.n_outputs; ++i) result.push_back(checked_signature(out[i], op, "infer", "output", i));
    return result;
}

// Whether `strides` lay out `shape` densely: the axes longer than 1, from the largest stride
// down, nest exactly with the innermost at stride 1 (size-1 axes may have any stride).
bool dense_layout(const Dims& shape, std::span<const int64_t> strides) {
    std::vector<size_t> axes;
    for (size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] > 1) axes.push_back(a);
    }
    std::sort(axes.begin(), axes.end(), [&](size_t x, size_t y) { return strides[x] > strides[y]; });
    int64_t expected = 1;
    for (size_t i = axes.size(); i-- > 0;) {
        if (strides[axes[i]] != expected) return false;
        expected *= shape[axes[i]];
    }
    return true;
}

// The strides prepare chose for each output (ABI 1.1), checked; row-major when unchanged or empty.
void take_output_strides(std::vector<OutputSig>& outputs, const std::vector<int64_t>& chosen, const std::string& op,
                         const std::string& plugin) {
    for (size_t i = 0; i < outputs.size(); ++i) {
        OutputSig& o = outputs[i];
        const std::span<const int64_t> s(chosen.data() + i * FERRO_MAX_NDIM, o.shape.size());
        if (std::equal(s.begin(), s.end(), o.strides.begin(), o.strides.end())) continue;
        int64_t numel = 1;
        for (int64_t d : o.shape) numel *= d;
        if (numel == 0) continue;
        if (!dense_layout(o.shape, s)) {
            throw Error(FERRO_INTERNAL, fmt::format("{}: module of plugin '{}' chose strides [{}] for output {} of shape "
                                                    "[{}], which are not a dense layout",
                                                    op, plugin, fmt::join(s, ", "), i, fmt::join(o.shape, ", ")));
        }
        o.strides.assign(s.begin(), s.end());
    }
}

// The residuals a plan keeps (ABI 1.8), checked: only a recorded call's plan may keep some.
std::vector<OutputSig> take_residuals(const ferro_plan_instance& plan, uint64_t recorded_inputs, const std::string& op,
                                      const std::string& plugin) {
    std::vector<OutputSig> residuals;
    if (plan.n_residuals == 0) return residuals;
    if (recorded_inputs == 0 || plan.residuals == nullptr) {
        throw Error(FERRO_INTERNAL,
                    fmt::format("{}: module of plugin '{}' returned a plan with {} residuals {}", op, plugin, plan.n_residuals,
                                plan.residuals == nullptr ? "and no signatures" : "for a call the tape does not record"));
    }
    for (uint32_t i = 0; i < plan.n_residuals; ++i)
        residuals.push_back(checked_signature(plan.residuals[i], op, "prepare", "residual", i));
    return residuals;
}

}  // namespace

PlanPtr Dispatcher::prepare(const OpEntry& entry, const FamilySlot& family, const EnginePtr& engine, const AttrValues& attrs,
                            std::span<ferro_tensor_impl* const> inputs, uint64_t recorded_inputs) {
    const std::string& op = entry.qualified_name;
    const ferro_host_api* host = runtime_.host_api();
    std::vector<ferro_signature> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) fill_signature(*inputs[i], in[i]);
    std::vector<OutputSig> outputs = infer(host, *entry.schema, op, attrs, in);
    std::vector<ferro_signature> out(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
        out[i].struct_size = sizeof out[i];
        out[i].dtype = outputs[i].dtype;
        out[i].ndim = static_cast<int32_t>(outputs[i].shape.size());
        std::copy(outputs[i].shape.begin(), outputs[i].shape.end(), out[i].shape);
        std::copy(outputs[i].strides.begin(), outputs[i].strides.end(), out[i].strides);
    }
    std::string reasons;
    auto slots = family.modules.find(engine->name());
    if (slots != family.modules.end()) {
        for (const ModuleSlot& slot : slots->second) {
            if (!slot.module) {
                reasons += fmt::format("; {}: {}", slot.plugin, slot.decline_reason);
                continue;
            }
            char reason[512] = {};
            std::vector<int64_t> strides(outputs.size() * FERRO_MAX_NDIM, 0);
            for (size_t i = 0; i < outputs.size(); ++i) {
                std::copy(outputs[i].strides.begin(), outputs[i].strides.end(),
                          strides.begin() + static_cast<std::ptrdiff_t>(i * FERRO_MAX_NDIM));
            }
            ferro_prepare_args args{sizeof args,
                                    entry.index,
                                    attrs.data(),
                                    static_cast<uint32_t>(in.size()),
                                    static_cast<uint32_t>(out.size()),
                                    in.data(),
                                    out.data(),
                                    reason,
                                    sizeof reason,
                                    0,
                                    strides.data(),
                                    recorded_inputs};
            ferro_plan_instance inst{};
            inst.struct_size = sizeof inst;
            const Module& m = *slot.module;
            if (ferro_status st = call_plugin(op, "prepare", [&] { return m.iface().prepare(m.self(), host, &args, &inst); })) {
                rethrow(st, op, "prepare", host);
            }
            if (inst.iface == nullptr) {
                reasons += fmt::format("; {}: {}", slot.plugin, reason[0] ? reason : "declined");
                continue;
            }
            if (inst.iface->struct_size < FERRO_STRUCT_SIZE_UP_TO(ferro_plan_iface, destroy) || inst.iface->destroy == nullptr ||
                (inst.iface->execute_in_session == nullptr && inst.iface->execute_in_context == nullptr)) {
                throw Error(FERRO_INTERNAL, fmt::format("{}: module of plugin '{}' returned a plan "
                                                        "without an executor or destroy",
                                                        op, slot.plugin));
            }
            runtime_.logger().logf(FERRO_LOG_DEBUG, "dispatch", "{}: prepared by '{}' on '{}'", op, slot.plugin, engine->name());
            std::vector<OutputSig> residuals;
            try {
                take_output_strides(outputs, strides, op, slot.plugin);
                residuals = take_residuals(inst, recorded_inputs, op, slot.plugin);
            } catch (...) {
                CachedPlan discard(inst, slot.module, {});  // destroys the refused plan
                throw;
            }
            return std::make_shared<CachedPlan>(inst, slot.module, std::move(outputs), std::move(residuals));
        }
    }
    throw Error(FERRO_UNIMPLEMENTED,
                fmt::format("{}: no module can run it on engine '{}'{}", op, engine->name(),
                            reasons.empty() ? std::string(" (no module of family '") + family.id + "' for this engine)"
                                            : " —" + reasons.substr(1)));
}

}  // namespace ferro::host
