#include "autodiff/host_ops.hpp"

#include "runtime/runtime.hpp"
#include "support/status.hpp"
#include "tensor/dtype.hpp"

#include <ferro/rules.hpp>

namespace ferro::host {

TensorPtr call_one(Runtime& rt, const char* op, std::initializer_list<ferro_tensor_impl*> inputs,
                   std::initializer_list<ferro_named_attr> attrs) {
    Outputs out = rt.call(op, {attrs.begin(), attrs.size()}, {inputs.begin(), inputs.size()});
    return std::move(out.at(0));
}

TensorPtr to_dtype(Runtime& rt, TensorPtr t, ferro_dtype dtype) {
    if (!is_complex(dtype) && is_complex(t->dtype)) t = call_one(rt, "core.real", {t.get()});
    if (t->dtype != dtype) {
        const std::string name = dtype_name(dtype);
        t = call_one(rt, "core.cast", {t.get()}, {plugin::attr_str("dtype", name.c_str())});
    }
    return t;
}

void throw_rule_status(ferro_status status, const std::string& context) {
    const uint32_t code = status->code;
    const std::string message = status->message;
    free_status(status);
    throw Error(code, context + ": " + message);
}

}  // namespace ferro::host
