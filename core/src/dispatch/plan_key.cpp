#include "dispatch/plan_key.hpp"

#include <algorithm>
#include <bit>

namespace ferro::host {
namespace {

// Appends words through its own pointers and sizes the key once at the end: push_back would
// keep the key's size in memory, where every word stored may alias it (both are 64-bit
// integers), so each word waited for the last one's size update.
class Writer {
public:
    [[gnu::always_inline]] explicit Writer(PlanKey& key) : key_(key) {
        const size_t used = key_.words.size();
        key_.words.resize(std::max(key_.words.capacity(), used + 16), boost::container::default_init);
        next_ = key_.words.data() + used;
        end_ = key_.words.data() + key_.words.size();
    }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    // NOLINTNEXTLINE(bugprone-exception-escape): shrinking a vector never allocates
    [[gnu::always_inline]] ~Writer() { key_.words.resize(static_cast<size_t>(next_ - key_.words.data())); }

    [[gnu::always_inline]] void operator()(uint64_t w) {
        if (next_ == end_) [[unlikely]]
            grow();
        *next_++ = w;
    }
    void reject() { key_.valid = false; }

private:
    [[gnu::noinline]] void grow() {
        const size_t used = key_.words.size();
        key_.words.resize(2 * used, boost::container::default_init);
        next_ = key_.words.data() + used;
        end_ = key_.words.data() + key_.words.size();
    }
    PlanKey& key_;
    uint64_t* next_;
    uint64_t* end_;
};

// The `n` (1 to 8) bytes at `p` as a word, zero above them (little-endian: byte i at bits 8i).
// Built from whole loads that may overlap: copying the bytes into a zeroed word and reading it
// back stalls on the narrow stores.
uint64_t word_of(const char* p, size_t n) {
    if (n == 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        return w;
    }
    if (n >= 4) {
        uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + n - 4, 4);
        return lo | uint64_t{hi} << (8 * (n - 4));
    }
    const auto byte = [p](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])} << (8 * i); };
    return byte(0) | byte(n / 2) | byte(n - 1);
}

// Inlined, as the others that write: the writer's pointers then stay in registers.
[[gnu::always_inline]] inline void encode_str(Writer& out, const char* s) {
    if (s == nullptr) return out.reject();
    const size_t n = std::strlen(s);
    out(n);
    for (size_t i = 0; i < n; i += 8) out(word_of(s + i, std::min<size_t>(8, n - i)));
}

[[gnu::always_inline]] inline void encode_value(Writer& out, const ferro_attr_value& v) {
    out(v.type | (uint64_t{v.count} << 32));
    const bool is_array = v.type == FERRO_ATTR_I64_ARRAY || v.type == FERRO_ATTR_F64_ARRAY;
    if (is_array && v.count > 0 && v.v.i64_array == nullptr) return out.reject();
    switch (v.type) {
        case FERRO_ATTR_I64: out(static_cast<uint64_t>(v.v.i64)); break;
        case FERRO_ATTR_F64: out(std::bit_cast<uint64_t>(v.v.f64)); break;
        case FERRO_ATTR_BOOL: out(v.v.boolean); break;
        case FERRO_ATTR_STR: encode_str(out, v.v.str); break;
        case FERRO_ATTR_I64_ARRAY:
            for (uint32_t i = 0; i < v.count; ++i) out(static_cast<uint64_t>(v.v.i64_array[i]));
            break;
        case FERRO_ATTR_F64_ARRAY:
            for (uint32_t i = 0; i < v.count; ++i) out(std::bit_cast<uint64_t>(v.v.f64_array[i]));
            break;
        default: break;
    }
}

[[gnu::always_inline]] inline void write_attrs(Writer& out, const ferro_named_attr* attrs, uint32_t n_attrs) {
    out(n_attrs);
    if (n_attrs > 0 && attrs == nullptr) return out.reject();
    for (uint32_t i = 0; i < n_attrs; ++i) {
        encode_str(out, attrs[i].name);
        encode_value(out, attrs[i].value);
    }
}

}  // namespace

KeyWords encode_attrs(const ferro_named_attr* attrs, uint32_t n_attrs) {
    PlanKey key;
    {
        Writer out{key};
        write_attrs(out, attrs, n_attrs);
    }
    return std::move(key.words);
}

void encode_call(PlanKey& key, const KeyWords* attr_words, const ferro_named_attr* attrs, uint32_t n_attrs,
                 std::span<ferro_tensor_impl* const> inputs) {
    if (attr_words != nullptr) key.words = *attr_words;
    Writer out{key};
    if (attr_words == nullptr) write_attrs(out, attrs, n_attrs);
    out(inputs.size());
    for (const ferro_tensor_impl* t : inputs) {
        out(t->dtype | (uint64_t{t->shape.size()} << 32));
        for (int64_t d : t->shape) out(static_cast<uint64_t>(d));
        for (int64_t d : t->strides) out(static_cast<uint64_t>(d));
    }
}

// Rotate-and-xor per word (one cycle each, no multiply chain on the hot path), then a final
// avalanche; equal hashes are confirmed by comparing the words.
void hash_key(PlanKey& key) noexcept {
    uint64_t h = reinterpret_cast<uintptr_t>(key.engine);
    for (uint64_t w : key.words) h = std::rotl(h, 7) ^ w;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    key.hash = h;
}

}  // namespace ferro::host
