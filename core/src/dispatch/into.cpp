#include "dispatch/into.hpp"

#include "autodiff/grad_mode.hpp"
#include "autodiff/node.hpp"
#include "dispatch/session.hpp"
#include "support/status.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

namespace ferro::host::into {
namespace {

[[noreturn]] void invalid(const std::string& op, const std::string& why) {
    throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: {}", op, why));
}

// Sufficient for holding each element once: from the smallest stride up, each axis's stride
// steps over everything the smaller ones reach. Refuses broadcast views (stride 0).
bool holds_each_element_once(const ferro_tensor_impl& t) {
    boost::container::small_vector<std::pair<int64_t, int64_t>, 8> axes;  // (|stride|, size)
    for (size_t a = 0; a < t.shape.size(); ++a) {
        if (t.shape[a] == 0) return true;
        if (t.shape[a] > 1) axes.emplace_back(std::abs(t.strides[a]), t.shape[a]);
    }
    std::sort(axes.begin(), axes.end());
    wide_int reach = 1;  // elements spanned by the axes so far
    for (const auto& [stride, size] : axes) {
        if (stride < reach) return false;
        reach += static_cast<wide_int>(size - 1) * stride;
    }
    return true;
}

// Whether two tensors may share memory: the same storage, or overlapping host address ranges
// (two borrows of one application buffer are two storages).
bool may_share_memory(const ferro_tensor_impl& a, const ferro_tensor_impl& b) {
    const Storage& x = *a.storage;
    const Storage& y = *b.storage;
    if (&x == &y) return true;
    if (x.address() == nullptr || y.address() == nullptr) return x.buffer() == y.buffer();
    const auto xa = reinterpret_cast<uintptr_t>(x.address()), ya = reinterpret_cast<uintptr_t>(y.address());
    return xa < ya + y.bytes() && ya < xa + x.bytes();
}

void check_one(const std::string& op, size_t i, const Engine& engine, ferro_dtype dtype, std::span<const int64_t> shape,
               const ferro_tensor_impl& t) {
    if (&t.storage->engine() != &engine) {
        invalid(op, fmt::format("out tensor {} is on engine '{}' but the call runs on '{}'", i, t.storage->engine().name(),
                                engine.name()));
    }
    if (t.dtype != dtype) {
        invalid(op, fmt::format("out tensor {} is {}, the output is {}", i, dtype_name(t.dtype), dtype_name(dtype)));
    }
    if (!std::equal(shape.begin(), shape.end(), t.shape.begin(), t.shape.end())) {
        invalid(op, fmt::format("out tensor {} has shape [{}], the output has shape [{}]", i, fmt::join(t.shape, ", "),
                                fmt::join(shape, ", ")));
    }
}

void check_holds_once(const std::string& op, size_t i, const ferro_tensor_impl& t) {
    if (!holds_each_element_once(t)) {
        invalid(op, fmt::format("out tensor {} (strides [{}]) holds some elements more than once, as a "
                                "broadcast view does; give one that holds each element once",
                                i, fmt::join(t.strides, ", ")));
    }
}

void check_count(const std::string& op, size_t outputs, size_t into) {
    if (outputs != into) invalid(op, fmt::format("{} out tensor(s) given, the op has {} output(s)", into, outputs));
}

}  // namespace

void check_autograd(const std::string& op, Tensors inputs, Tensors into) {
    for (size_t i = 0; i < into.size(); ++i) {
        if (into[i] == nullptr) invalid(op, fmt::format("out tensor {} is NULL", i));
        const AutogradMeta* meta = into[i]->autograd.get();
        if (meta != nullptr && (meta->requires_grad || meta->grad_fn || meta->tangent)) {
            invalid(op, fmt::format("out tensor {} requires grad, was computed by a recorded op or carries a "
                                    "tangent, which writing into it would corrupt; give a plain tensor",
                                    i));
        }
        if (into[i]->storage->saved_by_a_node()) {
            invalid(op, fmt::format("out tensor {} (or a tensor sharing its memory) is saved by a grad node for a backward "
                                    "pass not run yet, which would read the new values and give a wrong gradient; write "
                                    "into another tensor, or run or drop that backward first",
                                    i));
        }
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        const AutogradMeta* meta = inputs[i]->autograd.get();  // inputs were checked non-NULL
        if (meta == nullptr) continue;
        if (meta->tangent) {
            invalid(op, fmt::format("input {} carries a tangent, which a call with out tensors does not "
                                    "propagate; call it without them",
                                    i));
        }
        if ((meta->requires_grad || meta->grad_fn) && grad_enabled()) {
            invalid(op, fmt::format("input {} requires grad, and a call with out tensors records no "
                                    "gradient; call it without them, or under NoGrad",
                                    i));
        }
    }
}

bool check_plan_outputs(const std::string& op, const Engine& engine, std::span<const OutputSig> outputs, Tensors inputs,
                        Tensors into) {
    check_count(op, outputs.size(), into.size());
    bool direct = true;
    for (size_t i = 0; i < outputs.size(); ++i) {
        const ferro_tensor_impl& t = *into[i];
        check_one(op, i, engine, outputs[i].dtype, span_of(outputs[i].shape), t);
        // Laid out as the plan's output (dense, so each element once), at the start of its
        // storage and aligned as engines align fresh outputs (a borrowed host buffer may not be).
        const auto address = reinterpret_cast<uintptr_t>(t.storage->address());
        const bool as_planned =
            std::equal(t.strides.begin(), t.strides.end(), outputs[i].strides.begin(), outputs[i].strides.end());
        if (!as_planned) check_holds_once(op, i, t);
        if (!as_planned || t.byte_offset != 0 || address % 64 != 0) direct = false;
        for (size_t k = 0; direct && k < inputs.size(); ++k) direct = !may_share_memory(t, *inputs[k]);
        for (size_t j = 0; direct && j < i; ++j) direct = !may_share_memory(t, *into[j]);
    }
    return direct;
}

void check_host_outputs(const std::string& op, const Engine& engine, const Outputs& outputs, Tensors into) {
    check_count(op, outputs.size(), into.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
        check_one(op, i, engine, outputs[i]->dtype, span_of(outputs[i]->shape), *into[i]);
        check_holds_once(op, i, *into[i]);
    }
}

void copy_outputs(const EnginePtr& engine, const Outputs& fresh, Tensors into) {
    Session session(engine);
    const auto copy = [&](const ferro_tensor_impl& from, const ferro_tensor_impl& to) {
        const ferro_copy_args c{sizeof c, 0, view_of(from), view_of(to)};
        throw_if_error(trusted::run(session.get(), c, &ferro_engine_iface::copy_strided));
    };
    // A host op's output may be a view of an input that is also a destination (a transpose
    // into itself): such outputs are copied aside before any destination is written.
    boost::container::small_vector<TensorPtr, 2> sources(fresh.begin(), fresh.end());
    for (TensorPtr& source : sources) {
        const bool shared =
            std::any_of(into.begin(), into.end(), [&](const ferro_tensor_impl* t) { return may_share_memory(*source, *t); });
        if (!shared) continue;
        TensorPtr aside = make_tensor(engine, source->dtype, source->shape);
        copy(*source, *aside);
        source = std::move(aside);
    }
    for (size_t i = 0; i < sources.size(); ++i) copy(*sources[i], *into[i]);
    session.end();
}

}  // namespace ferro::host::into
