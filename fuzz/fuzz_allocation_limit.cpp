// Linked into every fuzz target: allocations past 1 GiB fail as they would on a machine without
// that much memory. Fuzzed sizes reach legitimate requests of terabytes (a 2^39-element arange);
// the host turns a failed allocation into RESOURCE_EXHAUSTED, but under ASan a throwing operator
// new reports out-of-memory instead of throwing, and malloc's large blocks would exhaust the
// fuzzing machine. So: malloc's family is capped by ASan's max_allocation_size_mb (scripts/fuzz,
// returning NULL), and operator new, replaced here over malloc, throws std::bad_alloc.
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kLimit = std::size_t{1} << 30;

void* allocate(std::size_t n, std::size_t alignment) {
    void* p = nullptr;
    if (n <= kLimit) {
        if (alignment <= alignof(std::max_align_t)) p = std::malloc(n == 0 ? 1 : n);
        else if (posix_memalign(&p, alignment, n == 0 ? alignment : n) != 0) p = nullptr;
    }
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

}  // namespace

void* operator new(std::size_t n) { return allocate(n, 0); }
void* operator new[](std::size_t n) { return allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return allocate(n, 0);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
