// Counters that every thread bumps on a hot path and something reads now and then (an
// engine's memory statistics: three adds per op output, two per free). A locked
// read-modify-write costs ~20 cycles even uncontended, a fifth of the host's overhead on a
// microsecond fft; here each thread adds into a slot of its own with a plain load and store,
// and a read sums the slots.
//
// A thread claims one of kOwned process-wide slots on its first add and gives it back at
// exit. Its counts stay in the slot, being deltas, and the slot's next owner adds to them (the
// hand-over is a release/acquire pair on the slot mask). Threads beyond kOwned, and a thread
// whose exit hook has run (a static's destructor on the main thread), add to a shared slot
// with atomic read-modify-writes. A read during adds may see some of a thread's adds and not
// others; once the adds are done it is exact.
#pragma once

#include "support/tls.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace ferro::host {

class ThreadSlot {
public:
    static constexpr unsigned kOwned = 64;       // slots a thread owns alone
    static constexpr unsigned kShared = kOwned;  // the slot of everyone else

    // This thread's slot: below kOwned when it owns one, else kShared.
    static unsigned current() noexcept {
        const unsigned s = this_thread(t_slot);
        if (s != kUnclaimed) [[likely]]
            return s;
        return claim();
    }

    // Slots owned now (for tests).
    static unsigned owned() noexcept { return static_cast<unsigned>(std::popcount(g_taken.load(std::memory_order_relaxed))); }

private:
    static constexpr unsigned kUnclaimed = ~0u;
    // Trivially destructible, so an access needs no guard of its own; Release, made once a
    // slot is claimed, gives the slot back at thread exit.
    static inline constinit thread_local unsigned t_slot = kUnclaimed;
    static inline std::atomic<uint64_t> g_taken{0};

    struct Release {
        unsigned slot;
        ~Release() {
            t_slot = kShared;
            g_taken.fetch_and(~(uint64_t{1} << slot), std::memory_order_release);
        }
    };

    [[gnu::noinline]] static unsigned claim() noexcept {
        uint64_t taken = g_taken.load(std::memory_order_relaxed);
        unsigned slot = kShared;
        while (taken != ~uint64_t{0}) {
            const auto free_slot = static_cast<unsigned>(std::countr_one(taken));
            if (g_taken.compare_exchange_weak(taken, taken | (uint64_t{1} << free_slot), std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
                slot = free_slot;
                break;
            }
        }
        t_slot = slot;
        if (slot != kShared) {
            thread_local Release release{slot};  // constructed here once per thread: registers its destructor
            (void)release;
        }
        return slot;
    }
};

template <std::size_t N> class ThreadCounters {
public:
    using Values = std::array<int64_t, N>;

    void add(const Values& deltas) noexcept {
        const unsigned s = ThreadSlot::current();
        auto& v = slots_[s].v;
        if (s != ThreadSlot::kShared) [[likely]] {
            for (std::size_t i = 0; i < N; ++i) {
                v[i].store(v[i].load(std::memory_order_relaxed) + deltas[i], std::memory_order_relaxed);
            }
        } else {
            for (std::size_t i = 0; i < N; ++i) v[i].fetch_add(deltas[i], std::memory_order_relaxed);
        }
    }

    Values read() const noexcept {
        Values sum{};
        for (const Slot& slot : slots_) {
            for (std::size_t i = 0; i < N; ++i) sum[i] += slot.v[i].load(std::memory_order_relaxed);
        }
        return sum;
    }

private:
    struct alignas(64) Slot {
        std::atomic<int64_t> v[N]{};
    };
    std::array<Slot, ThreadSlot::kOwned + 1> slots_{};
};

}  // namespace ferro::host
