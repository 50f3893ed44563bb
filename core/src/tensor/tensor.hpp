// Tensors: refcounted storage (an engine buffer plus a reference on its engine) and
// metadata — dtype, shape, strides in elements, byte offset. Views share storage and change
// metadata only. ferro_tensor_impl is the object behind the ABI's ferro_tensor handle.
#pragma once

#include "registry/engine.hpp"
#include "tensor/dtype.hpp"

#include <ferro/types.h>

#include <boost/container/small_vector.hpp>

#include <atomic>
#include <memory>
#include <span>
#include <utility>

namespace ferro::host {

using Dims = boost::container::small_vector<int64_t, 6>;

// Drops one reference of an intrusive count; true when it was the last. The last reference
// is seen with a plain load and not decremented: there are no weak references, so no other
// thread can take a new one, and the acquire orders the destruction after the releases of the
// other owners (their decrements release). An op's fresh output dies this way, without a
// locked instruction (~20 cycles each).
inline bool last_reference(std::atomic<uint32_t>& refs) noexcept {
    return refs.load(std::memory_order_acquire) == 1 || refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

class Storage;
struct AutogradMeta;  // autodiff/node.hpp
struct AutogradMetaDeleter {
    void operator()(AutogradMeta* meta) const noexcept;
};

// An owning reference to a Storage (intrusive count: a storage is shared by the tensors that
// view it and by nothing else, so it needs no weak count or separate control block).
class StoragePtr {
public:
    StoragePtr() = default;
    static StoragePtr adopt(Storage* s) noexcept { return StoragePtr(s); }
    StoragePtr(const StoragePtr& o) noexcept;
    StoragePtr(StoragePtr&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    StoragePtr& operator=(StoragePtr o) noexcept {
        std::swap(s_, o.s_);
        return *this;
    }
    ~StoragePtr();

    Storage* get() const noexcept { return s_; }
    Storage* operator->() const noexcept { return s_; }
    Storage& operator*() const noexcept { return *s_; }
    explicit operator bool() const noexcept { return s_ != nullptr; }

private:
    explicit StoragePtr(Storage* s) noexcept : s_(s) {}
    Storage* s_ = nullptr;
};

// One engine allocation. Counts as a user object of the engine's plugin while alive, so the
// plugin cannot be unloaded under it.
class Storage {
public:
    // Called when borrowed memory is no longer used by any tensor.
    using Deleter = void (*)(void* context);

    // `bytes` of fresh engine memory.
    static StoragePtr allocate(const EnginePtr& engine, uint64_t bytes);
    // Borrows memory the application owns (engine import_memory); `deleter(context)` runs
    // when the last tensor using it goes away.
    static StoragePtr borrow(const EnginePtr& engine, void* address, uint64_t bytes, Deleter deleter, void* context);
    // `bytes` of `whole` from `offset` on, as a storage of its own (its own bounds in sessions),
    // keeping `whole` alive; on an engine whose buffer handles are addresses.
    static StoragePtr place(const StoragePtr& whole, uint64_t offset, uint64_t bytes);

    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    const Engine& engine() const noexcept { return *engine_; }
    const EnginePtr& engine_ptr() const noexcept { return engine_; }
    ferro_buffer buffer() const noexcept { return buffer_; }
    void* address() const noexcept { return address_; }  // NULL when not host addressable
    uint64_t bytes() const noexcept { return bytes_; }

    void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (last_reference(refs_)) destroy();
    }

    // Grad nodes that keep a tensor on this storage for their backward: a write into it
    // (into, out=) would change what that backward reads, so it is refused while any does.
    void add_saving_node() noexcept { saving_nodes_.fetch_add(1, std::memory_order_relaxed); }
    void remove_saving_node() noexcept { saving_nodes_.fetch_sub(1, std::memory_order_relaxed); }
    bool saved_by_a_node() const noexcept { return saving_nodes_.load(std::memory_order_relaxed) != 0; }

private:
    friend struct TensorBlock;
    enum class Kind : uint8_t {
        allocated,  // by the engine's alloc
        borrowed,   // the application's memory, through the engine's import_memory
        placed,     // inside a TensorBlock on the built-in cpu engine (tensor.cpp), or inside another storage
    };
    Storage(const EnginePtr& engine, uint64_t bytes);                                                 // allocated
    Storage(const EnginePtr& engine, void* address, uint64_t bytes, Deleter deleter, void* context);  // borrowed
    Storage(const EnginePtr& engine, void* address, uint64_t bytes);                                  // placed
    ~Storage();
    void destroy() noexcept;  // runs the destructor and frees this object's memory

    std::atomic<uint32_t> refs_{1};
    std::atomic<uint32_t> saving_nodes_{0};
    Kind kind_ = Kind::allocated;
    bool in_block_ = false;  // lives in a TensorBlock (tensor.cpp), which it frees
    EnginePtr engine_;
    ferro_buffer buffer_ = nullptr;
    void* address_ = nullptr;
    uint64_t bytes_;
    Deleter deleter_ = nullptr;
    void* deleter_context_ = nullptr;
};

inline StoragePtr::StoragePtr(const StoragePtr& o) noexcept : s_(o.s_) {
    if (s_ != nullptr) s_->retain();
}
inline StoragePtr::~StoragePtr() {
    if (s_ != nullptr) s_->release();
}

}  // namespace ferro::host

struct ferro_tensor_impl {
    std::atomic<uint32_t> refs{1};
    bool in_block = false;  // allocated with its storage in one TensorBlock (tensor.cpp)
    ferro::host::StoragePtr storage;
    ferro_dtype dtype = FERRO_DTYPE_INVALID;
    ferro::host::Dims shape, strides;  // strides in elements
    uint64_t byte_offset = 0;
    std::unique_ptr<ferro::host::AutogradMeta, ferro::host::AutogradMetaDeleter> autograd;  // null: plain tensor
};

namespace ferro::host {

// An owning reference to a tensor (intrusive refcount shared with the ABI's retain/release).
class TensorPtr {
public:
    TensorPtr() = default;
    // Adopts a reference the caller owns.
    static TensorPtr adopt(ferro_tensor_impl* t) noexcept { return TensorPtr(t); }
    static TensorPtr share(ferro_tensor_impl* t) noexcept {
        retain(t);
        return TensorPtr(t);
    }
    TensorPtr(const TensorPtr& o) noexcept : t_(o.t_) { retain(t_); }
    TensorPtr(TensorPtr&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
    TensorPtr& operator=(TensorPtr o) noexcept {
        std::swap(t_, o.t_);
        return *this;
    }
    ~TensorPtr() { release(t_); }

    ferro_tensor_impl* get() const noexcept { return t_; }
    ferro_tensor_impl* operator->() const noexcept { return t_; }
    ferro_tensor_impl& operator*() const noexcept { return *t_; }
    explicit operator bool() const noexcept { return t_ != nullptr; }
    ferro_tensor_impl* release_ownership() noexcept { return std::exchange(t_, nullptr); }

    // The ABI's retain/release (ferro_tensor_retain, host->tensor_retain) are these.
    static void retain(ferro_tensor_impl* t) noexcept {
        if (t != nullptr) t->refs.fetch_add(1, std::memory_order_relaxed);
    }
    static void release(ferro_tensor_impl* t) noexcept {
        if (t != nullptr && last_reference(t->refs)) destroy(t);
    }

private:
    explicit TensorPtr(ferro_tensor_impl* t) noexcept : t_(t) {}
    static void destroy(ferro_tensor_impl* t) noexcept;
    ferro_tensor_impl* t_ = nullptr;
};

// small_vector's iterators are not C++20 contiguous iterators, so Dims needs an explicit span.
inline std::span<const int64_t> span_of(const Dims& d) { return {d.data(), d.size()}; }

int64_t numel(std::span<const int64_t> shape);
inline int64_t numel(const Dims& shape) { return numel(span_of(shape)); }
Dims contiguous_strides(std::span<const int64_t> shape);
inline Dims contiguous_strides(const Dims& shape) { return contiguous_strides(span_of(shape)); }
bool is_contiguous(const ferro_tensor_impl& t);

// A new uninitialised row-major tensor on `engine`. Checks ndim, non-negative sizes and byte
// count overflow (INVALID_ARGUMENT naming `op`).
TensorPtr make_tensor(const EnginePtr& engine, ferro_dtype dtype, std::span<const int64_t> shape, const char* op = "tensor");
// The bytes of a row-major `dtype` tensor of `shape`, after make_tensor's checks.
uint64_t checked_bytes(ferro_dtype dtype, std::span<const int64_t> shape, const char* op);
// The checks every tensor handle passes, views included: ndim, non-negative sizes, and numel
// times the item size within int64 (INVALID_ARGUMENT naming `op`).
void check_element_count(ferro_dtype dtype, std::span<const int64_t> shape, const char* op);
// make_tensor for a layout already checked (a plan's outputs): `strides` contiguous for
// `shape`, `bytes` its size. The tensor and its storage are one allocation, and on the
// built-in cpu engine a small tensor's data shares it too.
TensorPtr make_checked_tensor(const EnginePtr& engine, ferro_dtype dtype, std::span<const int64_t> shape,
                              std::span<const int64_t> strides, uint64_t bytes);
inline TensorPtr make_tensor(const EnginePtr& engine, ferro_dtype dtype, const Dims& shape, const char* op = "tensor") {
    return make_tensor(engine, dtype, span_of(shape), op);
}
// A tensor handle over `storage` with the given metadata (no checks).
TensorPtr wrap_storage(StoragePtr storage, ferro_dtype dtype, std::span<const int64_t> shape, std::span<const int64_t> strides,
                       uint64_t byte_offset);
// A view of `base`'s storage with other metadata (no copy; check_element_count naming `op`).
inline TensorPtr make_view(const ferro_tensor_impl& base, ferro_dtype dtype, const Dims& shape, const Dims& strides,
                           uint64_t byte_offset, const char* op) {
    check_element_count(dtype, span_of(shape), op);
    return wrap_storage(base.storage, dtype, span_of(shape), span_of(strides), byte_offset);
}

// 128-bit arithmetic for layouts that plugins and applications describe: products of their
// sizes and strides must not wrap.
__extension__ typedef __int128 wide_int;

// The elements a strided layout touches, relative to element 0: [lo, hi] with lo <= 0 <= hi;
// `empty` when some size is 0 (then lo = hi = 0). Sizes must be non-negative.
struct StridedExtent {
    wide_int lo = 0, hi = 0;
    bool empty = false;
};
StridedExtent strided_extent(std::span<const int64_t> shape, const int64_t* strides);

// The ABI descriptions of a tensor: pointers borrowed from `t`.
inline ferro_tensor_view view_of(const ferro_tensor_impl& t) {
    ferro_tensor_view v;
    v.struct_size = sizeof v;
    v.dtype = t.dtype;
    v.ndim = static_cast<int32_t>(t.shape.size());
    v.reserved = 0;
    v.shape = t.shape.data();
    v.strides = t.strides.data();
    v.buffer = t.storage->buffer();
    v.byte_offset = t.byte_offset;
    v.data = t.storage->address() ? static_cast<char*>(t.storage->address()) + t.byte_offset : nullptr;
    v.tensor = const_cast<ferro_tensor_impl*>(&t);
    return v;
}
void fill_signature(const ferro_tensor_impl& t, ferro_signature& out);

// Copies between host memory (row-major packed) and a tensor, whatever its strides.
void copy_from_host(const ferro_tensor_impl& t, const void* data, uint64_t bytes);
void copy_to_host(const ferro_tensor_impl& t, void* data, uint64_t bytes);

}  // namespace ferro::host
