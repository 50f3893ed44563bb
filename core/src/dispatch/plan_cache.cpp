#include "dispatch/plan_cache.hpp"

namespace ferro {

size_t PlanKeyHash::operator()(const PlanKey& key) const noexcept {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over 64-bit words, then a final avalanche
    for (uint64_t w : key) {
        h ^= w;
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return static_cast<size_t>(h);
}

CachedPlan::CachedPlan(ferro_plan_instance instance, ModulePtr module, std::vector<OutputSig> outputs,
                       std::vector<OutputSig> residuals)
    : instance_(instance), module_(std::move(module)), outputs_(std::move(outputs)), residuals_(std::move(residuals)) {
    if (module_->library()) module_->library()->add_user_object();
}

CachedPlan::~CachedPlan() {
    instance_.iface->destroy(instance_.self);
    if (module_->library()) module_->library()->remove_user_object();
}

PlanCache::PlanCache(uint64_t max_entries, uint64_t max_bytes) {
    stats_.max_entries = max_entries;
    stats_.max_bytes = max_bytes;
}

// What an entry costs against the byte budget: what the plan retains plus a fixed estimate of
// the host's own bookkeeping.
uint64_t PlanCache::cost(const CachedPlan& plan) { return plan.retained_bytes() + 256; }

PlanPtr PlanCache::find(const PlanKey& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
        ++stats_.misses;
        return nullptr;
    }
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
}

void PlanCache::insert(PlanKey key, PlanPtr plan) {
    PlanPtr replaced;
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
        // Another thread prepared the same key meanwhile: keep the newer plan.
        stats_.bytes -= cost(*it->second->second);
        replaced = std::move(it->second->second);
        lru_.erase(it->second);
        index_.erase(it);
    }
    stats_.bytes += cost(*plan);
    lru_.emplace_front(std::move(key), std::move(plan));
    index_.emplace(lru_.front().first, lru_.begin());
    evict_over_limits();
    stats_.entries = lru_.size();
}

void PlanCache::evict_over_limits() {
    while (!lru_.empty() && (lru_.size() > stats_.max_entries || stats_.bytes > stats_.max_bytes)) {
        auto& victim = lru_.back();
        stats_.bytes -= cost(*victim.second);
        index_.erase(victim.first);
        lru_.pop_back();
        ++stats_.evictions;
    }
}

void PlanCache::clear() {
    std::list<Entry> dropped;  // destroyed outside the lock: plan destructors run plugin code
    {
        std::lock_guard lock(mutex_);
        dropped.swap(lru_);
        index_.clear();
        stats_.bytes = 0;
        stats_.entries = 0;
    }
}

void PlanCache::remove_if(const std::function<bool(const PlanKey&, const CachedPlan&)>& drop) {
    std::list<Entry> dropped;
    {
        std::lock_guard lock(mutex_);
        for (auto it = lru_.begin(); it != lru_.end();) {
            if (!drop(it->first, *it->second)) {
                ++it;
                continue;
            }
            stats_.bytes -= cost(*it->second);
            index_.erase(it->first);
            auto next = std::next(it);
            dropped.splice(dropped.end(), lru_, it);
            it = next;
        }
        stats_.entries = lru_.size();
    }
}

PlanCacheStats PlanCache::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

}  // namespace ferro
