// extern "C" shims: autodiff (DESIGN §8) — requires_grad, .grad, detach, backward, the
// functional vjp and the grad-mode scope.
#include "autodiff/backward.hpp"
#include "autodiff/grad_mode.hpp"
#include "autodiff/node.hpp"
#include "c_api/handles.hpp"

#include <ferro/ferro.h>

#include <vector>

using ferro::host::c_api::require;

FERRO_API ferro_status ferro_tensor_set_requires_grad(ferro_tensor tensor, ferro_bool requires_grad) {
    return ferro::host::guard([&] {
        require(tensor, "ferro_tensor_set_requires_grad", "tensor");
        ferro::host::set_requires_grad(*tensor, requires_grad != 0);
    });
}

FERRO_API ferro_bool ferro_tensor_requires_grad(ferro_tensor tensor) {
    return tensor != nullptr && ferro::host::requires_grad(*tensor) ? 1 : 0;
}

FERRO_API const char* ferro_tensor_grad_fn(ferro_tensor tensor) {
    if (tensor == nullptr || !tensor->autograd || !tensor->autograd->grad_fn) return nullptr;
    return tensor->autograd->grad_fn->op().c_str();
}

FERRO_API ferro_status ferro_tensor_grad(ferro_tensor tensor, ferro_tensor* out_grad) {
    return ferro::host::guard([&] {
        require(tensor, "ferro_tensor_grad", "tensor");
        require(out_grad, "ferro_tensor_grad", "out_grad");
        *out_grad = ferro::host::grad_of(*tensor).release_ownership();
    });
}

FERRO_API ferro_status ferro_tensor_clear_grad(ferro_tensor tensor) {
    return ferro::host::guard([&] {
        require(tensor, "ferro_tensor_clear_grad", "tensor");
        if (!tensor->autograd || !tensor->autograd->leaf) return;
        std::lock_guard lock(tensor->autograd->leaf->mutex);
        tensor->autograd->leaf->grad = ferro::host::TensorPtr();
    });
}

FERRO_API ferro_status ferro_tensor_detach(ferro_tensor tensor, ferro_tensor* out) {
    return ferro::host::guard([&] {
        require(tensor, "ferro_tensor_detach", "tensor");
        require(out, "ferro_tensor_detach", "out");
        *out = ferro::host::detach(*tensor).release_ownership();
    });
}

FERRO_API ferro_status ferro_backward(ferro_runtime* runtime, ferro_tensor root, ferro_tensor seed, ferro_bool retain_graph,
                                      ferro_bool create_graph) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_backward", "runtime");
        require(root, "ferro_backward", "root");
        ferro_tensor_impl* roots[1] = {root};
        ferro_tensor_impl* seeds[1] = {seed};
        ferro::host::BackwardArgs args;
        args.roots = roots;
        args.seeds = seeds;
        // The recorded pass refers to this graph's saved tensors, so create_graph keeps them
        // (PyTorch's default too).
        args.retain_graph = retain_graph != 0 || create_graph != 0;
        args.create_graph = create_graph != 0;
        args.what = "backward";
        ferro::host::run_backward(runtime->runtime, args);
    });
}

FERRO_API ferro_status ferro_vjp(ferro_runtime* runtime, const ferro_tensor* outputs, const ferro_tensor* cotangents,
                                 uint32_t n_outputs, const ferro_tensor* inputs, uint32_t n_inputs, ferro_bool create_graph,
                                 ferro_tensor* out_input_cotangents) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_vjp", "runtime");
        if (n_outputs == 0) throw ferro::host::Error(FERRO_INVALID_ARGUMENT, "ferro_vjp: no outputs");
        if (n_inputs == 0) throw ferro::host::Error(FERRO_INVALID_ARGUMENT, "ferro_vjp: no inputs");
        require(outputs, "ferro_vjp", "outputs");
        require(inputs, "ferro_vjp", "inputs");
        require(out_input_cotangents, "ferro_vjp", "out_input_cotangents");
        for (uint32_t i = 0; i < n_outputs; ++i) {
            if (outputs[i] == nullptr)
                throw ferro::host::Error(FERRO_INVALID_ARGUMENT, "ferro_vjp: output " + std::to_string(i) + " is NULL");
        }
        for (uint32_t i = 0; i < n_inputs; ++i) {
            if (inputs[i] == nullptr)
                throw ferro::host::Error(FERRO_INVALID_ARGUMENT, "ferro_vjp: input " + std::to_string(i) + " is NULL");
        }
        std::vector<ferro_tensor_impl*> seeds(n_outputs, nullptr);
        if (cotangents != nullptr) seeds.assign(cotangents, cotangents + n_outputs);
        ferro::host::BackwardArgs args;
        args.roots = {outputs, n_outputs};
        args.seeds = seeds;
        args.inputs = {inputs, n_inputs};
        args.retain_graph = true;  // the functional form never frees what the caller may reuse
        args.create_graph = create_graph != 0;
        args.what = "vjp";
        std::vector<ferro::host::TensorPtr> result = ferro::host::run_backward(runtime->runtime, args);
        for (uint32_t i = 0; i < n_inputs; ++i) out_input_cotangents[i] = result[i].release_ownership();
    });
}

FERRO_API ferro_status ferro_tensor_make_dual(ferro_runtime* runtime, ferro_tensor primal, ferro_tensor tangent,
                                              ferro_tensor* out) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_tensor_make_dual", "runtime");
        require(primal, "ferro_tensor_make_dual", "primal");
        require(tangent, "ferro_tensor_make_dual", "tangent");
        require(out, "ferro_tensor_make_dual", "out");
        *out = ferro::host::make_dual(runtime->runtime, *primal, *tangent).release_ownership();
    });
}

FERRO_API ferro_status ferro_tensor_tangent(ferro_tensor tensor, ferro_tensor* out_tangent) {
    return ferro::host::guard([&] {
        require(tensor, "ferro_tensor_tangent", "tensor");
        require(out_tangent, "ferro_tensor_tangent", "out_tangent");
        *out_tangent = ferro::host::tangent_of(*tensor).release_ownership();
    });
}

FERRO_API ferro_bool ferro_grad_enabled(void) { return ferro::host::grad_enabled() ? 1 : 0; }
FERRO_API void ferro_no_grad_push(void) { ferro::host::push_no_grad(); }
FERRO_API void ferro_no_grad_pop(void) { ferro::host::pop_no_grad(); }
