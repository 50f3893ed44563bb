// Tensors that cross the host boundary: borrowing application memory and moving between
// engines. Transfers are always explicit (DESIGN §3).
#pragma once

#include "tensor/tensor.hpp"

#include <cstddef>
#include <optional>
#include <span>

namespace ferro::host {

class Runtime;

// Memory someone else owns: element 0 at `data`, released with deleter(context); when `lent`
// is set, the bytes a view may reach.
struct ForeignMemory {
    void* data = nullptr;
    Storage::Deleter deleter = nullptr;
    void* context = nullptr;
    std::optional<std::span<const std::byte>> lent;
};

// A tensor over foreign memory, adopted by `engine` (import_memory); strides NULL = row-major.
// The memory region is derived from shape and strides (negative strides allowed) and must lie
// inside `memory.lent` when that is given. `what` names the caller in errors.
TensorPtr borrow_memory(Runtime& runtime, const std::string& engine, ferro_dtype dtype, std::span<const int64_t> shape,
                        const int64_t* strides, const ForeignMemory& memory, const char* what);

// `t` on `engine`: `t` itself when already there, else a row-major copy through host memory.
TensorPtr transfer(Runtime& runtime, ferro_tensor_impl& t, const std::string& engine);

}  // namespace ferro::host
