// Tensors that cross the host boundary: borrowing application memory and moving between
// engines. Transfers are always explicit (DESIGN §3).
#pragma once

#include "tensor/tensor.hpp"

namespace ferro {

class Runtime;

// A tensor over memory someone else owns, adopted by `engine` (import_memory); strides NULL =
// row-major. The memory region is derived from shape and strides (negative strides allowed:
// `data` is element 0). `what` names the caller in errors.
TensorPtr borrow_memory(Runtime& runtime, const std::string& engine, ferro_dtype dtype,
                        std::span<const int64_t> shape, const int64_t* strides, void* data,
                        Storage::Deleter deleter, void* context, const char* what);

// `t` on `engine`: `t` itself when already there, else a row-major copy through host memory.
TensorPtr transfer(Runtime& runtime, ferro_tensor_impl& t, const std::string& engine);

}  // namespace ferro
