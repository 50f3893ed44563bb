// Per-thread free lists for the small fixed-size objects every op call creates and destroys
// (tensor handles, storage control blocks). Reusing a block costs a few instructions where
// malloc + free cost ~200, a visible share of a tiny op's dispatch. Blocks freed on another
// thread join that thread's list; each list keeps at most kCached blocks and frees the rest.
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace ferro {

template <std::size_t Size>
class ThreadCache {
public:
    static void* allocate() {
        List& l = list();
        if (l.head != nullptr) {
            Node* n = l.head;
            l.head = n->next;
            --l.count;
            return n;
        }
        return ::operator new(Size);
    }
    static void deallocate(void* p) noexcept {
        List& l = list();
        if (l.count < kCached) {
            auto* n = static_cast<Node*>(p);
            n->next = l.head;
            l.head = n;
            ++l.count;
            return;
        }
        ::operator delete(p);
    }

private:
    static_assert(Size >= sizeof(void*), "a cached block must hold a pointer");
    static constexpr std::size_t kCached = 64;
    struct Node {
        Node* next;
    };
    struct List {
        Node* head = nullptr;
        std::size_t count = 0;
        ~List() {
            while (head != nullptr) ::operator delete(std::exchange(head, head->next));
        }
    };
    static List& list() {
        thread_local List l;
        return l;
    }
};

// An allocator for std::allocate_shared that takes single objects from ThreadCache.
template <class T>
struct CachedAllocator {
    using value_type = T;
    CachedAllocator() = default;
    template <class U>
    CachedAllocator(const CachedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        return n == 1 ? static_cast<T*>(ThreadCache<sizeof(T)>::allocate())
                      : static_cast<T*>(::operator new(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n == 1) ThreadCache<sizeof(T)>::deallocate(p);
        else ::operator delete(p);
    }
    template <class U>
    bool operator==(const CachedAllocator<U>&) const noexcept { return true; }
};

}  // namespace ferro
