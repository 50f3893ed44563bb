#include "capture/describe.hpp"

#include "capture/program_grad.hpp"
#include "registry/module.hpp"
#include "tensor/dtype.hpp"

#include <nlohmann/json.hpp>

namespace ferro::host {
namespace {

using nlohmann::json;

json signature_json(const InputSignature& s) {
    return {{"dtype", dtype_name(s.dtype)},
            {"shape", std::vector<int64_t>(s.shape.begin(), s.shape.end())},
            {"strides", std::vector<int64_t>(s.strides.begin(), s.strides.end())},
            {"engine", s.engine->name()}};
}

std::string ref_json(const ValueRef& v) {
    switch (v.kind) {
        case ValueRef::Kind::input: return "input " + std::to_string(v.index);
        case ValueRef::Kind::constant: return "constant " + std::to_string(v.index);
        case ValueRef::Kind::step: return "step " + std::to_string(v.index) + " output " + std::to_string(v.output);
    }
    return "";
}

json slot_json(const Slot& slot, const MemoryPlan& m) {
    switch (slot.kind) {
        case Slot::Kind::arena:
            return {{"place", "arena"}, {"engine", m.arenas[slot.arena].engine->name()}, {"offset", slot.offset}};
        case Slot::Kind::owned: return {{"place", "owned"}};
        case Slot::Kind::fresh: return {{"place", "fresh"}};
    }
    return {};
}

json step_json(const PreparedProgram& prepared, size_t s) {
    const ProgramStep& step = prepared.replayed->steps[s];
    const PlanEntry& e = *prepared.replay_entries[s];
    const std::string op = step.fused.empty() ? step.call->op.name : "fused";
    json j = {{"op", op}, {"engine", e.engine->name()}, {"inputs", json::array()}, {"outputs", json::array()}};
    if (!step.fused.empty()) j["ops"] = step.fused;
    for (const ValueRef& v : step.inputs) j["inputs"].push_back(ref_json(v));
    if (!e.plan) {
        j["runs"] = "host op";
        for (uint32_t k = 0; k < step.n_outputs; ++k) j["outputs"].push_back(json::object());
        return j;
    }
    j["runs"] = "plan";
    j["module"] = e.plan->built_in() ? std::string("built-in") : e.plan->module()->provider();
    j["workspace_bytes"] = e.plan->workspace_bytes();
    const StepMemory& memory = prepared.memory.steps[s];
    for (size_t k = 0; k < e.plan->outputs().size(); ++k) {
        const OutputSig& o = e.plan->outputs()[k];
        json out = slot_json(memory.outputs[k], prepared.memory);
        out["dtype"] = dtype_name(o.dtype);
        out["shape"] = std::vector<int64_t>(o.shape.begin(), o.shape.end());
        out["bytes"] = o.bytes;
        j["outputs"].push_back(std::move(out));
    }
    return j;
}

}  // namespace

std::string describe_prepared(const PreparedProgram& prepared) {
    const Program& p = *prepared.replayed;  // the steps a run executes
    json doc = {{"schema", 1},
                {"inputs", json::array()},
                {"constants", json::array()},
                {"steps", json::array()},
                {"outputs", json::array()}};
    for (size_t i = 0; i < prepared.inputs.size(); ++i) {
        json in = signature_json(prepared.inputs[i]);
        if (!prepared.bounds.empty()) in["bounds"] = std::vector<int64_t>(prepared.bounds[i].begin(), prepared.bounds[i].end());
        doc["inputs"].push_back(std::move(in));
    }
    for (const TensorPtr& c : p.constants) {
        doc["constants"].push_back(
            {{"dtype", dtype_name(c->dtype)}, {"shape", std::vector<int64_t>(c->shape.begin(), c->shape.end())}});
    }
    for (size_t s = 0; s < p.steps.size(); ++s) doc["steps"].push_back(step_json(prepared, s));
    for (const ValueRef& v : p.outputs) doc["outputs"].push_back(ref_json(v));
    json arenas = json::array();
    for (const MemoryPlan::Arena& a : prepared.memory.arenas)
        arenas.push_back({{"engine", a.engine->name()}, {"bytes", a.bytes}});
    doc["memory"] = {{"intermediate_bytes", prepared.memory.intermediate_bytes},
                     {"run_bytes", prepared.memory.run_bytes},
                     {"arenas", std::move(arenas)}};
    json grads = json::array();
    for (const GradientSummary& g : gradient_summaries(prepared)) {
        grads.push_back({{"wrt", g.wrt},
                         {"forward_steps", g.forward_steps},
                         {"backward_steps", g.backward_steps},
                         {"residuals", g.residuals}});
    }
    doc["gradients"] = std::move(grads);
    const RecordingStats recorded = recording_stats(prepared);
    doc["recorded_sessions"] = {
        {"recordings", recorded.recordings}, {"resubmissions", recorded.resubmissions}, {"refused", recorded.refused}};
    return doc.dump();
}

}  // namespace ferro::host
