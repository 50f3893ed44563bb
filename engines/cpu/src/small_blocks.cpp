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

struct Store {
    Parked* head[kClasses] = {};
    uint64_t bytes = 0;
    ~Store();
};

// Set once this thread's store is destroyed: a tensor freed later in the thread's exit (a
// static's destructor on the main thread) goes straight to free.
thread_local bool t_gone = false;
thread_local Store t_store;

Store::~Store() {
    for (Parked*& list : head) {
        while (list != nullptr) std::free(std::exchange(list, list->next));
    }
    bytes = 0;
    t_gone = true;
}

int index_of(uint64_t size_class) {
    const int octave = std::bit_width(size_class) - 1;
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
    const uint64_t c = (bytes + eighth - 1) / eighth * eighth;
    return c < kMaxBytes ? c : 0;
#endif
}

void* take(uint64_t size_class) {
    if (t_gone) return nullptr;
    Store& s = t_store;
    Parked*& list = s.head[index_of(size_class)];
    if (list == nullptr) return nullptr;
    s.bytes -= size_class;
    return std::exchange(list, list->next);
}

void give(uint64_t size_class, void* block) {
    if (t_gone || t_store.bytes + size_class > kThreadBytes) {
        std::free(block);
        return;
    }
    Store& s = t_store;
    Parked*& list = s.head[index_of(size_class)];
    list = new (block) Parked{list};
    s.bytes += size_class;
}

uint64_t thread_bytes() { return t_gone ? 0 : t_store.bytes; }

}  // namespace ferro::cpu::small_blocks
