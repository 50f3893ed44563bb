#include "tensor/tensor.hpp"

#include "support/status.hpp"
#include "support/thread_cache.hpp"

#include <fmt/format.h>

#include <limits>

namespace ferro::host {

// A fresh tensor and its storage in one allocation, with room for a small tensor's data when
// the engine is the built-in cpu engine (then the storage imports that room instead of asking
// the engine for memory). An op's output costs one cached block instead of three allocations.
// The tensor part dies first (its storage reference keeps the block); the storage frees it.
constexpr size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

struct TensorBlock {
    static constexpr size_t kStorageAt = round_up(sizeof(ferro_tensor_impl), alignof(Storage));
    static constexpr size_t kDataAt = round_up(kStorageAt + sizeof(Storage), 64);
    static constexpr uint64_t kInlineBytes = 256;
    using Cache = ThreadCache<kDataAt + kInlineBytes, 64>;

    // The storage is built before the tensor, so a throwing engine alloc only frees the block.
    static ferro_tensor_impl* create(const EnginePtr& engine, uint64_t bytes) {
        auto* block = static_cast<char*>(Cache::allocate());
        Storage* storage;
        try {
            if (engine->buffers_are_addresses() && bytes <= kInlineBytes) {
                storage = new (block + kStorageAt) Storage(engine, block + kDataAt, bytes);
            } else {
                storage = new (block + kStorageAt) Storage(engine, bytes);
            }
        } catch (...) {
            Cache::deallocate(block);
            throw;
        }
        storage->in_block_ = true;
        auto* t = new (block) ferro_tensor_impl;
        t->in_block = true;
        t->storage = StoragePtr::adopt(storage);
        return t;
    }
    static void free(Storage* storage) noexcept { Cache::deallocate(reinterpret_cast<char*>(storage) - kStorageAt); }
};

using HandleCache = ThreadCache<sizeof(ferro_tensor_impl)>;

void TensorPtr::destroy(ferro_tensor_impl* t) noexcept {
    if (t->in_block) {
        StoragePtr keep = std::move(t->storage);  // may be the block's last user: freed after
        t->~ferro_tensor_impl();
        return;
    }
    t->~ferro_tensor_impl();
    HandleCache::deallocate(t);
}

Storage::Storage(const EnginePtr& engine, uint64_t bytes) : engine_(engine), bytes_(bytes) {
    throw_if_error(engine_->iface().alloc(engine_->self(), std::max<uint64_t>(bytes, 1), 64, &buffer_, &address_));
    engine_->count_alloc(bytes_);
    if (engine_->library()) engine_->library()->add_user_object();
}

Storage::Storage(const EnginePtr& engine, void* address, uint64_t bytes, Deleter deleter, void* context)
    : kind_(Kind::borrowed), engine_(engine), address_(address), bytes_(bytes), deleter_(deleter), deleter_context_(context) {
    const auto& f = engine_->iface();
    if (!FERRO_HAS_FIELD(&f, ferro_engine_iface, release_import) || f.import_memory == nullptr || f.release_import == nullptr) {
        throw Error(FERRO_UNIMPLEMENTED, "engine '" + engine_->name() + "' cannot adopt memory it did not allocate");
    }
    throw_if_error(f.import_memory(engine_->self(), address, bytes, &buffer_));
    if (!engine_->host_addressable()) address_ = nullptr;
    if (engine_->library()) engine_->library()->add_user_object();
}

// On an engine whose buffer handles are addresses, the address is the buffer.
Storage::Storage(const EnginePtr& engine, void* address, uint64_t bytes)
    : kind_(Kind::placed), engine_(engine), buffer_(static_cast<ferro_buffer>(address)), address_(address), bytes_(bytes) {
    if (engine_->library()) engine_->library()->add_user_object();
}

Storage::~Storage() {
    switch (kind_) {
        case Kind::allocated:
            engine_->iface().free(engine_->self(), buffer_);
            engine_->count_free(bytes_);
            break;
        case Kind::borrowed:
            engine_->iface().release_import(engine_->self(), buffer_);
            if (deleter_ != nullptr) deleter_(deleter_context_);
            break;
        case Kind::placed:
            if (deleter_ != nullptr) deleter_(deleter_context_);
            break;
    }
    if (engine_->library()) engine_->library()->remove_user_object();
}

void Storage::destroy() noexcept {
    if (in_block_) {
        this->~Storage();
        TensorBlock::free(this);
        return;
    }
    delete this;
}

StoragePtr Storage::allocate(const EnginePtr& engine, uint64_t bytes) { return StoragePtr::adopt(new Storage(engine, bytes)); }

StoragePtr Storage::borrow(const EnginePtr& engine, void* address, uint64_t bytes, Deleter deleter, void* context) {
    return StoragePtr::adopt(new Storage(engine, address, bytes, deleter, context));
}

StoragePtr Storage::place(const StoragePtr& whole, uint64_t offset, uint64_t bytes) {
    auto* part = new Storage(whole->engine_, static_cast<char*>(whole->address_) + offset, bytes);
    whole->retain();
    part->deleter_ = [](void* w) { static_cast<Storage*>(w)->release(); };
    part->deleter_context_ = whole.get();
    return StoragePtr::adopt(part);
}

int64_t numel(std::span<const int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

Dims contiguous_strides(std::span<const int64_t> shape) {
    Dims strides(shape.size());
    int64_t stride = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= std::max<int64_t>(shape[i], 1);
    }
    return strides;
}

bool is_contiguous(const ferro_tensor_impl& t) {
    int64_t expected = 1;
    for (size_t i = t.shape.size(); i-- > 0;) {
        if (t.shape[i] != 1 && t.strides[i] != expected) return false;
        expected *= t.shape[i];
    }
    return true;
}

namespace {

void check_dims(std::span<const int64_t> shape, const char* op) {
    if (shape.size() > FERRO_MAX_NDIM) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    fmt::format("{}: {} dimensions, at most {} are supported", op, shape.size(), FERRO_MAX_NDIM));
    }
    for (int64_t s : shape) {
        if (s < 0) {
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: shape [{}] has a negative size", op, fmt::join(shape, ",")));
        }
    }
}

// numel(shape) * itemsize, or -1 when the row-major extent, the product of max(size, 1) times
// the item size, does not fit in int64 (sizes non-negative). Every tensor the host describes
// stays under that bound, so the element counts, byte counts and row-major strides that code
// computes from a shape (views of one element expanded, empty tensors of huge other sizes
// included) never wrap.
int64_t byte_count(ferro_dtype dtype, std::span<const int64_t> shape) {
    int64_t extent = itemsize(dtype);
    bool empty = false;
    for (int64_t s : shape) {
        empty = empty || s == 0;
        if (s > 1 && __builtin_mul_overflow(extent, s, &extent)) return -1;
    }
    return empty ? 0 : extent;
}

}  // namespace

uint64_t checked_bytes(ferro_dtype dtype, std::span<const int64_t> shape, const char* op) {
    check_dims(shape, op);
    const int64_t bytes = byte_count(dtype, shape);
    if (bytes < 0) {
        throw Error(FERRO_RESOURCE_EXHAUSTED, fmt::format("{}: shape [{}] is too large (more than 2^63 - 1 bytes of {})", op,
                                                          fmt::join(shape, ","), dtype_name(dtype)));
    }
    return static_cast<uint64_t>(bytes);
}

void check_element_count(ferro_dtype dtype, std::span<const int64_t> shape, const char* op) {
    check_dims(shape, op);
    if (byte_count(dtype, shape) < 0) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    fmt::format("{}: shape [{}] has more elements than a tensor can hold (its {} elements would "
                                "take more than 2^63 - 1 bytes, even as a view)",
                                op, fmt::join(shape, ","), dtype_name(dtype)));
    }
}

TensorPtr make_tensor(const EnginePtr& engine, ferro_dtype dtype, std::span<const int64_t> shape, const char* op) {
    const uint64_t bytes = checked_bytes(dtype, shape, op);
    return make_checked_tensor(engine, dtype, shape, span_of(contiguous_strides(shape)), bytes);
}

TensorPtr make_checked_tensor(const EnginePtr& engine, ferro_dtype dtype, std::span<const int64_t> shape,
                              std::span<const int64_t> strides, uint64_t bytes) {
    ferro_tensor_impl* t = TensorBlock::create(engine, bytes);
    t->dtype = dtype;
    t->shape.assign(shape.begin(), shape.end());
    t->strides.assign(strides.begin(), strides.end());
    return TensorPtr::adopt(t);
}

TensorPtr wrap_storage(StoragePtr storage, ferro_dtype dtype, std::span<const int64_t> shape, std::span<const int64_t> strides,
                       uint64_t byte_offset) {
    auto* t = new (HandleCache::allocate()) ferro_tensor_impl;
    TensorPtr owned = TensorPtr::adopt(t);
    t->storage = std::move(storage);
    t->dtype = dtype;
    t->shape.assign(shape.begin(), shape.end());
    t->strides.assign(strides.begin(), strides.end());
    t->byte_offset = byte_offset;
    return owned;
}

StridedExtent strided_extent(std::span<const int64_t> shape, const int64_t* strides) {
    StridedExtent e;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0) return {0, 0, true};
        const wide_int span = static_cast<wide_int>(shape[d] - 1) * strides[d];
        (span < 0 ? e.lo : e.hi) += span;
    }
    return e;
}

void fill_signature(const ferro_tensor_impl& t, ferro_signature& out) {
    out.struct_size = sizeof out;
    out.dtype = t.dtype;
    out.ndim = static_cast<int32_t>(t.shape.size());
    std::copy(t.shape.begin(), t.shape.end(), out.shape);
    std::copy(t.strides.begin(), t.strides.end(), out.strides);
}

namespace {

// Copies `from` into `to` (same shape and dtype) with the engine's copy_strided.
void engine_copy(const ferro_tensor_impl& from, const ferro_tensor_impl& to) {
    const Engine& e = to.storage->engine();
    ferro_engine_session session = nullptr;
    throw_if_error(e.iface().session_begin(e.self(), &session));
    ferro_copy_args args{sizeof args, 0, view_of(from), view_of(to)};
    ferro_status st = e.iface().copy_strided(e.self(), session, &args);
    ferro_status end = e.iface().session_end(e.self(), session, 1);
    throw_if_error(st);
    throw_if_error(end);
}

void check_bytes(const ferro_tensor_impl& t, uint64_t bytes, const char* what) {
    const auto expected = static_cast<uint64_t>(numel(t.shape) * itemsize(t.dtype));
    if (bytes != expected) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: {} bytes given, the tensor [{}] {} holds {}", what, bytes,
                                                        fmt::join(t.shape, ","), dtype_name(t.dtype), expected));
    }
}

}  // namespace

void copy_from_host(const ferro_tensor_impl& t, const void* data, uint64_t bytes) {
    check_bytes(t, bytes, "copy from host");
    if (bytes == 0) return;  // empty tensors: nothing to move (and data may be NULL)
    const Engine& e = t.storage->engine();
    if (is_contiguous(t)) {
        throw_if_error(e.iface().copy_h2d(e.self(), data, t.storage->buffer(), t.byte_offset, bytes));
        return;
    }
    TensorPtr packed = make_tensor(t.storage->engine_ptr(), t.dtype, t.shape);
    throw_if_error(e.iface().copy_h2d(e.self(), data, packed->storage->buffer(), 0, bytes));
    engine_copy(*packed, t);
}

void copy_to_host(const ferro_tensor_impl& t, void* data, uint64_t bytes) {
    check_bytes(t, bytes, "copy to host");
    if (bytes == 0) return;
    const Engine& e = t.storage->engine();
    if (is_contiguous(t)) {
        throw_if_error(e.iface().copy_d2h(e.self(), t.storage->buffer(), t.byte_offset, data, bytes));
        return;
    }
    TensorPtr packed = make_tensor(t.storage->engine_ptr(), t.dtype, t.shape);
    engine_copy(t, *packed);
    throw_if_error(e.iface().copy_d2h(e.self(), packed->storage->buffer(), 0, data, bytes));
}

}  // namespace ferro::host
