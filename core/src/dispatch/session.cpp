#include "dispatch/session.hpp"

#include "support/status.hpp"

#include <fmt/format.h>

#include <ferro/cpu_context.h>

#include <algorithm>
#include <mutex>

namespace ferro::host {

namespace {

[[noreturn]] void bad(const char* kernel, const std::string& message) {
    throw Error(FERRO_INVALID_ARGUMENT, fmt::format("session {}: {}", kernel, message));
}

const ferro_session_impl::KnownBuffer& known(const ferro_session_impl& s, ferro_buffer buffer, const char* kernel,
                                             const char* operand) {
    for (const auto& b : s.buffers) {
        if (b.buffer == buffer) return b;
    }
    bad(kernel, fmt::format("operand '{}' refers to a buffer this session does not own", operand));
}

// Checks that every element the strided range touches lies inside the buffer.
void check_range(const ferro_session_impl::KnownBuffer& b, uint64_t byte_offset, int64_t item, int ndim, const int64_t* shape,
                 const int64_t* strides, const char* kernel, const char* operand) {
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] < 0) bad(kernel, fmt::format("operand '{}' has a negative size", operand));
    }
    const StridedExtent e = strided_extent({shape, static_cast<size_t>(ndim)}, strides);
    if (e.empty) return;  // touches nothing
    const wide_int first = static_cast<wide_int>(byte_offset) + e.lo * item;
    const wide_int end = static_cast<wide_int>(byte_offset) + (e.hi + 1) * item;
    if (first < 0 || end > static_cast<wide_int>(b.bytes)) {
        bad(kernel, fmt::format("operand '{}' reaches outside its buffer ({} bytes)", operand, b.bytes));
    }
}

// Validates a view operand and rewrites its data pointer from the engine's own address, so
// the engine sees exactly the memory that was checked.
ferro_tensor_view checked(const ferro_session_impl& s, const ferro_tensor_view& v, const char* kernel, const char* operand) {
    if (v.struct_size < FERRO_STRUCT_SIZE_UP_TO(ferro_tensor_view, tensor)) {
        bad(kernel, fmt::format("operand '{}' has struct_size {}", operand, v.struct_size));
    }
    const int64_t item = FERRO_DTYPE_BITS(v.dtype) / 8;
    if (!is_valid_dtype(v.dtype)) bad(kernel, fmt::format("operand '{}' has an invalid dtype", operand));
    if (v.ndim < 0 || v.ndim > FERRO_MAX_NDIM || (v.ndim > 0 && (!v.shape || !v.strides))) {
        bad(kernel, fmt::format("operand '{}' has ndim {} or NULL shape/strides", operand, v.ndim));
    }
    const auto& b = known(s, v.buffer, kernel, operand);
    check_range(b, v.byte_offset, item, v.ndim, v.shape, v.strides, kernel, operand);
    ferro_tensor_view out = v;
    out.data = b.address != nullptr ? static_cast<char*>(b.address) + v.byte_offset : nullptr;
    return out;
}

void same_shape(const ferro_tensor_view& a, const ferro_tensor_view& out, const char* kernel, const char* operand) {
    if (a.ndim != out.ndim || !std::equal(a.shape, a.shape + a.ndim, out.shape)) {
        bad(kernel, fmt::format("operand '{}' does not have the output's shape", operand));
    }
}

template <class Args, class Check>
ferro_status forward(ferro_session s, const Args* args, const char* kernel, const char* type,
                     ferro_status (*const ferro_engine_iface::*entry)(void*, ferro_engine_session, const Args*), Check&& check) {
    return guard([&] {
        if (s == nullptr || args == nullptr) bad(kernel, "NULL session or arguments");
        require_struct_size(args->struct_size, sizeof(Args), kernel, type);
        Args copy = *args;
        check(*s, copy);
        throw_if_error((s->engine->iface().*entry)(s->engine->self(), s->engine_session, &copy));
    });
}

}  // namespace

ferro_status session_fill(ferro_session s, const ferro_fill_args* a) {
    return forward(s, a, "fill", "ferro_fill_args", &ferro_engine_iface::fill,
                   [](auto& ss, ferro_fill_args& c) { c.out = checked(ss, c.out, "fill", "out"); });
}

ferro_status session_cast(ferro_session s, const ferro_cast_args* a) {
    return forward(s, a, "cast", "ferro_cast_args", &ferro_engine_iface::cast, [](auto& ss, ferro_cast_args& c) {
        c.in = checked(ss, c.in, "cast", "in");
        c.out = checked(ss, c.out, "cast", "out");
        same_shape(c.in, c.out, "cast", "in");
    });
}

ferro_status session_unary(ferro_session s, const ferro_unary_args* a) {
    return forward(s, a, "unary", "ferro_unary_args", &ferro_engine_iface::unary, [](auto& ss, ferro_unary_args& c) {
        c.in = checked(ss, c.in, "unary", "in");
        c.out = checked(ss, c.out, "unary", "out");
        same_shape(c.in, c.out, "unary", "in");
    });
}

ferro_status session_binary(ferro_session s, const ferro_binary_args* a) {
    return forward(s, a, "binary", "ferro_binary_args", &ferro_engine_iface::binary, [](auto& ss, ferro_binary_args& c) {
        c.a = checked(ss, c.a, "binary", "a");
        c.b = checked(ss, c.b, "binary", "b");
        c.out = checked(ss, c.out, "binary", "out");
        same_shape(c.a, c.out, "binary", "a");
        same_shape(c.b, c.out, "binary", "b");
    });
}

ferro_status session_where(ferro_session s, const ferro_where_args* a) {
    return forward(s, a, "where", "ferro_where_args", &ferro_engine_iface::where, [](auto& ss, ferro_where_args& c) {
        c.cond = checked(ss, c.cond, "where", "cond");
        c.a = checked(ss, c.a, "where", "a");
        c.b = checked(ss, c.b, "where", "b");
        c.out = checked(ss, c.out, "where", "out");
        same_shape(c.cond, c.out, "where", "cond");
        same_shape(c.a, c.out, "where", "a");
        same_shape(c.b, c.out, "where", "b");
    });
}

ferro_status session_reduce(ferro_session s, const ferro_reduce_args* a) {
    return forward(s, a, "reduce", "ferro_reduce_args", &ferro_engine_iface::reduce, [](auto& ss, ferro_reduce_args& c) {
        c.in = checked(ss, c.in, "reduce", "in");
        c.out = checked(ss, c.out, "reduce", "out");
        if (c.in.ndim != c.out.ndim) bad("reduce", "in and out must have the same ndim (keepdim layout)");
    });
}

ferro_status session_copy_strided(ferro_session s, const ferro_copy_args* a) {
    return forward(s, a, "copy_strided", "ferro_copy_args", &ferro_engine_iface::copy_strided, [](auto& ss, ferro_copy_args& c) {
        c.in = checked(ss, c.in, "copy_strided", "in");
        c.out = checked(ss, c.out, "copy_strided", "out");
        same_shape(c.in, c.out, "copy_strided", "in");
    });
}

ferro_status session_gemm_batched(ferro_session s, const ferro_gemm_args* a) {
    return forward(s, a, "gemm_batched", "ferro_gemm_args", &ferro_engine_iface::gemm_batched, [](auto& ss, ferro_gemm_args& g) {
        if (!is_valid_dtype(g.dtype)) bad("gemm_batched", "invalid dtype");
        const int64_t item = itemsize(g.dtype);
        auto check = [&](ferro_gemm_operand& op, int64_t rows, int64_t cols, const char* name) {
            const int64_t shape[3] = {g.batch, rows, cols};
            const int64_t strides[3] = {op.batch_stride, op.row_stride, op.col_stride};
            const auto& b = known(ss, op.buffer, "gemm_batched", name);
            check_range(b, op.byte_offset, item, 3, shape, strides, "gemm_batched", name);
            op.data = b.address != nullptr ? static_cast<char*>(b.address) + op.byte_offset : nullptr;
        };
        check(g.a, g.m, g.k, "a");
        check(g.b, g.k, g.n, "b");
        check(g.c, g.m, g.n, "c");
    });
}

ferro_status session_scratch(ferro_session s, uint64_t bytes, ferro_buffer_view* out) {
    return guard([&] {
        if (s == nullptr || out == nullptr) bad("scratch", "NULL session or out");
        StoragePtr storage = Storage::allocate(*s->engine_ptr, bytes);
        s->allow(*storage);
        *out = {sizeof *out, 0, storage->buffer(), 0, bytes, storage->address()};
        s->scratch.push_back(std::move(storage));
    });
}

ferro_status session_native_context(ferro_session s, const void** out) {
    return guard([&] {
        if (s == nullptr || out == nullptr) bad("native_context", "NULL session or out");
        const ferro_engine_iface& engine = s->engine->iface();
        if (engine.native_context == nullptr) {
            throw Error(FERRO_UNIMPLEMENTED,
                        fmt::format("session native_context: engine '{}' offers no native context", s->engine->name()));
        }
        throw_if_error(engine.native_context(s->engine->self(), s->engine_session, out));
    });
}

ferro_status session_use(ferro_session s, ferro_tensor tensor) {
    return guard([&] {
        if (s == nullptr || tensor == nullptr) bad("use", "NULL session or tensor");
        const StoragePtr& storage = tensor->storage;
        if (&storage->engine() != s->engine) {
            bad("use",
                fmt::format("the tensor is on engine '{}', the session on '{}'", storage->engine().name(), s->engine->name()));
        }
        s->allow(*storage);
        s->scratch.push_back(storage);  // alive until the session's work has completed
    });
}

}  // namespace ferro::host

namespace ferro::host {
namespace {

// What the pool's threads share while session_parallel runs.
struct ParallelTasks {
    ferro_session parent;
    ferro_status (*task)(void*, uint32_t, ferro_session);
    void* user;
    std::mutex mutex;
    ferro_status first = nullptr;  // the first failure; the others are freed

    void fail(ferro_status status) {
        const std::lock_guard lock(mutex);
        if (first == nullptr) {
            first = status;
        } else {
            free_status(status);
        }
    }
    // Runs task i in a child session of its own on this thread.
    void run(uint32_t i) noexcept {
        ferro_status status = guard([&] {
            Session child(*parent->engine_ptr);
            child.get()->buffers = parent->buffers;
            throw_if_error(task(user, i, child.get()));
            child.end();
        });
        if (status != nullptr) fail(status);
    }
};

void run_tasks(void* user, int64_t begin, int64_t end) {
    auto& tasks = *static_cast<ParallelTasks*>(user);
    for (int64_t i = begin; i < end; ++i) tasks.run(static_cast<uint32_t>(i));
}

}  // namespace

ferro_status session_parallel(ferro_session s, uint32_t n, ferro_status (*task)(void*, uint32_t, ferro_session), void* user) {
    return guard([&] {
        if (s == nullptr || task == nullptr) bad("parallel", "NULL session or task");
        const ferro_engine_iface& engine = s->engine->iface();
        const ferro_cpu_context* pool = nullptr;
        if (n > 1 && engine.native_context != nullptr && s->engine->context_abi() == FERRO_CPU_CONTEXT_ABI) {
            const void* context = nullptr;
            throw_if_error(engine.native_context(s->engine->self(), s->engine_session, &context));
            pool = static_cast<const ferro_cpu_context*>(context);
            if (pool->num_threads < 2) pool = nullptr;
        }
        if (pool == nullptr) {
            for (uint32_t i = 0; i < n; ++i) throw_if_error(task(user, i, s));
            return;
        }
        ParallelTasks tasks{s, task, user, {}, nullptr};
        const bool hold = FERRO_HAS_FIELD(pool, ferro_cpu_context, blas_one_thread) && pool->blas_one_thread != nullptr;
        if (hold) pool->blas_one_thread(pool, 1);
        pool->parallel_for(pool, n, 1, run_tasks, &tasks);
        if (hold) pool->blas_one_thread(pool, 0);
        throw_if_error(tasks.first);
    });
}

}  // namespace ferro::host
