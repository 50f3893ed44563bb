// Per-thread free lists for the small fixed-size objects every op call creates and destroys
// (tensor handles, tensor blocks). Reusing a block costs a few instructions where malloc +
// free cost ~200, a visible share of a tiny op's dispatch. Blocks freed on another thread
// join that thread's list; each list keeps at most kCached blocks and frees the rest.
#pragma once

#include "support/tls.hpp"

#include <cstddef>
#include <new>
#include <utility>

namespace ferro::host {

template <std::size_t Size, std::size_t Align = alignof(std::max_align_t)> class ThreadCache {
public:
    static void* allocate() {
        List& l = this_thread(t_list);
        if (l.head != nullptr) {
            Node* n = l.head;
            l.head = n->next;
            --l.count;
            return n;
        }
        return ::operator new (Size, std::align_val_t{Align});
    }
    static void deallocate(void* p) noexcept {
        List& l = this_thread(t_list);
        if (l.count < kCached) {
            if (!l.armed) [[unlikely]]
                arm();
            auto* n = static_cast<Node*>(p);
            n->next = l.head;
            l.head = n;
            ++l.count;
            return;
        }
        ::operator delete (p, std::align_val_t{Align});
    }

private:
    static_assert(Size >= sizeof(void*), "a cached block must hold a pointer");
    static constexpr std::size_t kCached = 64;
    struct Node {
        Node* next;
    };
    // Trivially destructible, so that an access is one TLS lookup with no guard of its own. A
    // Drain, made on the first block the thread keeps, frees the list at thread exit and marks
    // it full, so that blocks freed after that (a static's destructor on the main thread) go
    // straight to operator delete.
    struct List {
        Node* head;
        std::size_t count;
        bool armed;
    };
    static inline constinit thread_local List t_list{};
    struct Drain {
        ~Drain() {
            List& l = t_list;
            while (l.head != nullptr) ::operator delete (std::exchange(l.head, l.head->next), std::align_val_t{Align});
            l.count = kCached;
        }
    };
    [[gnu::noinline]] static void arm() noexcept {
        thread_local Drain drain;  // constructed here once per thread: registers its destructor
        (void)drain;
        t_list.armed = true;
    }
};

}  // namespace ferro::host
