#include "small_blocks.hpp"

#include <bit>
#include <cstdlib>
#include <new>
#include <utility>

namespace ferro::cpu::small_blocks {
namespace {

constexpr int kFirstOctave = std::countr_zero(kMinBytes);
constexpr int kClasses = 8 * (std::countr_zero(kMaxBytes) - kFirstOctave);

// A parked block's first word links it to the next block of its class.
struct Parked {
    Parked* next;
};

// Trivially destructible, so that an access is one TLS lookup with no guard of its own (it
// was three lookups per take or give). Its blocks are freed at thread exit by a Drain, made
// on the first block the thread keeps.
struct Store {
    Parked* head[kClasses];
    uint64_t bytes;
    bool armed;  // this thread has its Drain
    bool gone;   // drained at thread exit: blocks freed later (a static's destructor on the main thread) go straight to free
};
constinit thread_local Store t_store{};

// This thread's store. GCC looks a thread_local's address up again (a __tls_get_addr call in
// a shared library) after a branch that may call out; an address that has been through an
// empty asm is an ordinary value, looked up once (the host's support/tls.hpp does the same;
// the engine builds against the plugin headers only).
Store& store() noexcept {
    Store* s = &t_store;
    asm("" : "+r"(s));
    return *s;
}

struct Drain {
    ~Drain() {
        for (Parked*& list : t_store.head) {
            while (list != nullptr) std::free(std::exchange(list, list->next));
        }
        t_store.bytes = 0;
        t_store.gone = true;
    }
};

[[gnu::noinline]] void arm(Store& s) {
    thread_local Drain drain;  // constructed here once per thread: registers its destructor
    (void)drain;
    s.armed = true;
}

int index_of(uint64_t size_class) {
    const int octave = static_cast<int>(std::bit_width(size_class)) - 1;
    return 8 * (octave - kFirstOctave) + static_cast<int>(size_class >> (octave - 3)) - 8;
}

}  // namespace

uint64_t size_class(uint64_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
    (void)bytes;
    return 0;
#else
    if (bytes < kMinBytes || bytes >= kMaxBytes) return 0;
    const uint64_t eighth = std::bit_floor(bytes) / 8;
    const uint64_t c = (bytes + eighth - 1) & ~(eighth - 1);  // a power of two: no division
    return c < kMaxBytes ? c : 0;
#endif
}

void* take(uint64_t size_class) {
    Store& s = store();
    Parked*& list = s.head[index_of(size_class)];
    if (list == nullptr) return nullptr;  // also once drained: the lists are empty
    s.bytes -= size_class;
    return std::exchange(list, list->next);
}

void give(uint64_t size_class, void* block) {
    Store& s = store();
    if (s.gone || s.bytes + size_class > kThreadBytes) {
        std::free(block);
        return;
    }
    if (!s.armed) [[unlikely]]
        arm(s);
    Parked*& list = s.head[index_of(size_class)];
    list = new (block) Parked{list};
    s.bytes += size_class;
}

uint64_t thread_bytes() { return t_store.bytes; }

}  // namespace ferro::cpu::small_blocks
