#include "dispatch/plan_cache.hpp"

#include "dispatch/op_handle.hpp"

namespace ferro::host {

CachedPlan::CachedPlan(ferro_plan_instance instance, ModulePtr module, std::vector<OutputSig> outputs,
                       std::vector<OutputSig> residuals)
    : instance_(instance), module_(std::move(module)), outputs_(std::move(outputs)), residuals_(std::move(residuals)) {
    if (module_->library()) module_->library()->add_user_object();
}

CachedPlan::~CachedPlan() {
    instance_.iface->destroy(instance_.self);
    if (module_->library()) module_->library()->remove_user_object();
}

uint64_t PlanEntry::cost() const noexcept {
    return (plan ? plan->retained_bytes() : 0) + 256 + key.words.size() * sizeof(uint64_t);
}

PlanCache::PlanCache(uint64_t max_entries, uint64_t max_bytes, const std::atomic<uint64_t>& epoch)
    : epoch_(epoch), max_plans_(max_entries), max_bytes_(max_bytes) {}

PlanCache::~PlanCache() { clear(); }

void PlanCache::unlink(std::list<EntryPtr>::iterator it, std::vector<EntryPtr>& dropped) {
    const EntryPtr& e = *it;
    {
        std::lock_guard lock(e->op->mutex);
        e->op->entries.erase(e);
        if (e->op->last == e) e->op->last.reset();
    }
    if (e->plan) --plans_;
    bytes_ -= e->cost();
    dropped.push_back(std::move(*it));
    ring_.erase(it);
}

void PlanCache::insert(const EntryPtr& entry) {
    std::vector<EntryPtr> dropped;  // destroyed after the lock is released: plans run plugin code
    std::lock_guard lock(mutex_);
    // A reconfiguration purges older epochs after publishing the new one: an entry checked
    // here is either purged by it or never added.
    if (entry->key.epoch != epoch_.load(std::memory_order_acquire)) return;
    {
        std::lock_guard handle_lock(entry->op->mutex);
        if (!entry->op->entries.insert(entry).second) return;
    }
    ring_.push_back(entry);
    if (entry->plan) ++plans_;
    bytes_ += entry->cost();
    // CLOCK: the hand (the front) passes entries used since its last pass to the back, once
    // each, and evicts the first that was not. Host-op entries hold no plan: the byte bound
    // keeps them, the entry bound counts plans.
    while (!ring_.empty() && (plans_ > max_plans_ || bytes_ > max_bytes_)) {
        auto hand = ring_.begin();
        if ((*hand)->used.exchange(false, std::memory_order_relaxed) && std::next(hand) != ring_.end()) {
            ring_.splice(ring_.end(), ring_, hand);
            continue;
        }
        if ((*hand)->plan) ++evictions_;
        unlink(hand, dropped);
    }
}

void PlanCache::remove_if(const std::function<bool(const PlanEntry&)>& drop) {
    std::vector<EntryPtr> dropped;
    std::lock_guard lock(mutex_);
    for (auto it = ring_.begin(); it != ring_.end();) {
        const auto next = std::next(it);
        if (drop(**it)) unlink(it, dropped);
        it = next;
    }
}

void PlanCache::clear() {
    remove_if([](const PlanEntry&) { return true; });
}

PlanCacheStats PlanCache::stats() const {
    std::lock_guard lock(mutex_);
    PlanCacheStats s;
    s.evictions = evictions_;
    s.entries = plans_;
    s.bytes = bytes_;
    s.max_entries = max_plans_;
    s.max_bytes = max_bytes_;
    return s;
}

}  // namespace ferro::host
