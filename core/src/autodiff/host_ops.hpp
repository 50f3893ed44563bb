// Tensor arithmetic the autodiff machinery does itself (seeds, summing cotangents, fitting
// cotangents and tangents to their tensors), through the dispatcher like any op call, so a
// pass that records (create_graph) records it too.
#pragma once

#include "tensor/tensor.hpp"

#include <ferro/types.h>

#include <initializer_list>
#include <string>

namespace ferro::host {

class Runtime;

// Op `op` with one output.
TensorPtr call_one(Runtime& rt, const char* op, std::initializer_list<ferro_tensor_impl*> inputs,
                   std::initializer_list<ferro_named_attr> attrs = {});

// `t` in `dtype`: the real part first when `dtype` is real and `t` complex, then a cast.
TensorPtr to_dtype(Runtime& rt, TensorPtr t, ferro_dtype dtype);

// Throws a rule's failure status as an Error: the same code, "<context>: <message>".
[[noreturn]] void throw_rule_status(ferro_status status, const std::string& context);

}  // namespace ferro::host
