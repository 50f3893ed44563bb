// Exact dynamic programming over connected subnetworks (paths.hpp, connected_optimal_path).
//
// Level m holds the best known contraction of every connected set of m operands found under
// the cap; a set of m is made from two disjoint sets of m1 and m - m1 that share a label. The
// cap on the objective prunes every candidate above it; as costs only grow towards the root, a
// tree under the cap has all its subtrees under it too, so the first cap under which the whole
// network is reached gives the optimum. Sets of operands (up to 128) and of labels (up to 512)
// are fixed-width bit sets, so the inner loop allocates nothing.
#include "paths.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace ferro::einsum {
namespace {

// A fixed-width bit set: sets of labels (up to 512) and of operands (up to 128). One word
// compiles to plain integer operations.
template <size_t W> struct Bits {
    std::array<uint64_t, W> words{};

    static Bits bit(int i) {
        Bits b;
        b.set(i);
        return b;
    }
    void set(int i) { words[static_cast<size_t>(i) >> 6] |= uint64_t{1} << (i & 63); }
    bool test(int i) const { return (words[static_cast<size_t>(i) >> 6] >> (i & 63) & 1) != 0; }
    bool any() const {
        for (uint64_t w : words) {
            if (w != 0) return true;
        }
        return false;
    }
    int count() const {
        int c = 0;
        for (uint64_t w : words) c += std::popcount(w);
        return c;
    }
    int first() const {  // the lowest set bit; the set must not be empty
        for (size_t i = 0;; ++i) {
            if (words[i] != 0) return static_cast<int>(i * 64 + static_cast<size_t>(std::countr_zero(words[i])));
        }
    }
    friend Bits operator|(Bits a, const Bits& b) {
        for (size_t i = 0; i < W; ++i) a.words[i] |= b.words[i];
        return a;
    }
    Bits& operator|=(const Bits& b) { return *this = *this | b; }
    friend Bits operator^(Bits a, const Bits& b) {
        for (size_t i = 0; i < W; ++i) a.words[i] ^= b.words[i];
        return a;
    }
    bool shares(const Bits& o) const {
        for (size_t i = 0; i < W; ++i) {
            if ((words[i] & o.words[i]) != 0) return true;
        }
        return false;
    }
    bool shares_within(const Bits& o, const Bits& mask) const {  // a common member in mask
        for (size_t i = 0; i < W; ++i) {
            if ((words[i] & o.words[i] & mask.words[i]) != 0) return true;
        }
        return false;
    }
    bool outside(const Bits& o) const {  // a member not in o
        for (size_t i = 0; i < W; ++i) {
            if ((words[i] & ~o.words[i]) != 0) return true;
        }
        return false;
    }
    friend bool operator==(const Bits&, const Bits&) = default;
    friend bool operator<(const Bits& a, const Bits& b) { return a.words < b.words; }
    template <class F> void for_each(F&& f) const {
        for (size_t i = 0; i < W; ++i) {
            for (uint64_t w = words[i]; w != 0; w &= w - 1)
                f(static_cast<int>(i * 64 + static_cast<size_t>(std::countr_zero(w))));
        }
    }
    struct Hash {
        size_t operator()(const Bits& b) const noexcept {
            uint64_t h = 0;
            for (uint64_t w : b.words) h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
            return static_cast<size_t>(h ^ (h >> 29));
        }
    };
};

// W words of labels, K words of operands.
template <size_t W, size_t K> class ConnectedDp {
    using Labels = Bits<W>;
    using Operands = Bits<K>;

public:
    ConnectedDp(const Network& net, Objective objective, double max_pairs)
        : net_(net),
          objective_(objective),
          max_pairs_(max_pairs),
          n_(static_cast<int>(net.inputs.size())),
          holders_(net.size.size()),
          in_output_(net.size.size(), false) {
        for (int t = 0; t < n_; ++t) {
            Labels own;
            for (int l : net.inputs[static_cast<size_t>(t)]) {
                own.set(l);
                holders_[static_cast<size_t>(l)].set(t);
            }
            leaf_labels_.push_back(own);
        }
        for (int l : net.output) in_output_[static_cast<size_t>(l)] = true;
        for (size_t l = 0; l < net.size.size(); ++l) {
            if (!in_output_[l]) summed_.set(static_cast<int>(l));
        }
    }

    std::optional<Path> run() {
        SsaPath ssa;
        int next = n_;
        std::vector<std::pair<int, double>> roots;  // each component's SSA id and result size
        for (const Operands& component : components()) {
            const auto root = solve(component, ssa, next);
            if (!root) return std::nullopt;
            roots.push_back(*root);
        }
        // Disconnected parts meet last, by outer products, the two smallest first.
        while (roots.size() > 1) {
            std::sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
            const auto a = roots.back();
            roots.pop_back();
            const auto b = roots.back();
            roots.pop_back();
            ssa.emplace_back(a.first, b.first);
            roots.emplace_back(next++, a.second * b.second);
        }
        return ssa_to_linear(ssa, n_);
    }

private:
    struct Entry {
        Operands leaves;
        Operands left;  // the leaves of the part it was made from with the lowest operand; empty for one operand
        Labels kept;
        double flops = 0, largest = 0;
    };
    using Level = std::vector<Entry>;
    using Index = std::unordered_map<Operands, size_t, typename Operands::Hash>;

    // Operands that share summed labels, transitively: the connected parts of the network. (A
    // label of the output, a batch label say, joins nothing: it can be held by every operand.)
    std::vector<Operands> components() const {
        std::vector<int> parent(static_cast<size_t>(n_));
        std::iota(parent.begin(), parent.end(), 0);
        const auto find = [&](int t) {
            while (parent[static_cast<size_t>(t)] != t)
                t = parent[static_cast<size_t>(t)] = parent[static_cast<size_t>(parent[static_cast<size_t>(t)])];
            return t;
        };
        for (size_t l = 0; l < holders_.size(); ++l) {
            const Operands& holders = holders_[l];
            if (!holders.any() || in_output_[l]) continue;
            const int first = holders.first();
            holders.for_each([&](int t) { parent[static_cast<size_t>(find(t))] = find(first); });
        }
        std::vector<Operands> parts(static_cast<size_t>(n_));
        for (int t = 0; t < n_; ++t) parts[static_cast<size_t>(find(t))].set(t);
        std::erase_if(parts, [](const Operands& p) { return !p.any(); });
        return parts;
    }

    double size_of(const Labels& labels) const {
        double s = 1;
        labels.for_each([&](int l) { s *= net_.size[static_cast<size_t>(l)]; });
        return s;
    }
    double primary(const Entry& e) const { return objective_ == Objective::flops ? e.flops : e.largest; }
    bool better(const Entry& a, const Entry& b) const { return cheaper({a.flops, a.largest}, {b.flops, b.largest}, objective_); }

    // The best tree of one connected component under growing caps; its root's SSA id and size.
    std::optional<std::pair<int, double>> solve(const Operands& component, SsaPath& ssa, int& next) {
        const int k = component.count();
        Level leaves;
        double cap = 1, factor = std::numeric_limits<double>::infinity();
        component.for_each([&](int t) {
            Entry e;
            e.leaves = Operands::bit(t);
            e.kept = leaf_labels_[static_cast<size_t>(t)];
            e.largest = size_of(e.kept);
            cap = std::max(cap, e.largest);
            e.kept.for_each([&](int l) { factor = std::min(factor, net_.size[static_cast<size_t>(l)]); });
            leaves.push_back(e);
        });
        if (k == 1) return std::pair{component.first(), leaves[0].largest};
        factor = std::max(factor, 2.0);
        for (;;) {
            std::vector<Level> x(static_cast<size_t>(k) + 1);
            std::vector<Index> at(static_cast<size_t>(k) + 1);
            x[1] = leaves;
            for (int m = 2; m <= k; ++m) {
                for (int m1 = 1; m1 <= m / 2; ++m1) {
                    if (!join_levels(x[static_cast<size_t>(m1)], x[static_cast<size_t>(m - m1)], m1 == m - m1, cap,
                                     x[static_cast<size_t>(m)], at[static_cast<size_t>(m)])) {
                        return std::nullopt;
                    }
                }
            }
            if (!x[static_cast<size_t>(k)].empty()) {
                const Entry& root = x[static_cast<size_t>(k)].front();
                return std::pair{emit(root.leaves, x, at, ssa, next), size_of(root.kept)};
            }
            cap *= factor;
        }
    }

    // Every joint of a set from `a` with a disjoint one from `b` that shares a summed label with it,
    // under the cap, into `out`; false when the pair budget runs out.
    bool join_levels(const Level& a, const Level& b, bool same_level, double cap, Level& out, Index& index) {
        for (const Entry& e1 : a) {
            for (const Entry& e2 : b) {
                if (++pairs_ > max_pairs_) return false;
                const bool joinable = !e1.leaves.shares(e2.leaves) && !(same_level && e2.leaves < e1.leaves) &&
                                      e1.kept.shares_within(e2.kept, summed_);
                if (!joinable) continue;
                Entry e;
                e.leaves = e1.leaves | e2.leaves;
                const Labels all = e1.kept | e2.kept;
                bool sums = false;
                all.for_each([&](int l) {
                    const bool needed = holders_[static_cast<size_t>(l)].outside(e.leaves) || in_output_[static_cast<size_t>(l)];
                    if (needed) e.kept.set(l);
                    sums = sums || !needed;
                });
                const double kept_size = size_of(e.kept);
                e.flops = e1.flops + e2.flops + size_of(all) * (sums ? 2.0 : 1.0);  // opt_einsum's cost (paths.hpp)
                e.largest = std::max({e1.largest, e2.largest, kept_size});
                if (primary(e) > cap) continue;
                e.left = e1.leaves.test(e.leaves.first()) ? e1.leaves : e2.leaves;
                const auto [it, fresh] = index.try_emplace(e.leaves, out.size());
                if (fresh) {
                    out.push_back(e);
                } else if (better(e, out[it->second])) {
                    out[it->second] = e;
                }
            }
        }
        return true;
    }

    // SSA steps of the best tree of `leaves`, children first; returns its SSA id.
    int emit(const Operands& leaves, const std::vector<Level>& x, const std::vector<Index>& at, SsaPath& ssa, int& next) const {
        const auto m = static_cast<size_t>(leaves.count());
        if (m == 1) return leaves.first();
        const Entry& e = x[m][at[m].at(leaves)];
        const int a = emit(e.left, x, at, ssa, next), b = emit(leaves ^ e.left, x, at, ssa, next);
        ssa.emplace_back(a, b);
        return next++;
    }

    const Network& net_;
    const Objective objective_;
    const double max_pairs_;
    const int n_;
    std::vector<Operands> holders_;  // per label: the operands that hold it
    std::vector<bool> in_output_;    // per label
    Labels summed_;                  // the labels not in the output
    std::vector<Labels> leaf_labels_;
    double pairs_ = 0;
};

template <size_t W> std::optional<Path> search(const Network& net, Objective objective, double max_pairs) {
    if (net.inputs.size() <= 64) return ConnectedDp<W, 1>(net, objective, max_pairs).run();
    return ConnectedDp<W, 2>(net, objective, max_pairs).run();
}

}  // namespace

std::optional<Path> connected_optimal_path(const Network& net, Objective objective, double max_pairs) {
    const size_t n = net.inputs.size(), labels = net.size.size();
    if (n > static_cast<size_t>(kConnectedOptimalMaxOperands)) return std::nullopt;
    if (n < 2) return Path{};
    if (labels <= 64) return search<1>(net, objective, max_pairs);
    if (labels <= 128) return search<2>(net, objective, max_pairs);
    if (labels <= 256) return search<4>(net, objective, max_pairs);
    if (labels <= 512) return search<8>(net, objective, max_pairs);
    return std::nullopt;
}

}  // namespace ferro::einsum
