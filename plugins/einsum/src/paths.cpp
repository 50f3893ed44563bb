#include "paths.hpp"

#include <ferro/plugin.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <tuple>

namespace ferro::einsum {
namespace {

[[noreturn]] void fail(const std::string& why) { throw plugin::Error(FERRO_INVALID_ARGUMENT, "einsum: " + why); }

// A set of small integers (label ids, leaf ids) as a bitset.
class BitSet {
public:
    BitSet() = default;
    explicit BitSet(size_t n) : words_((n + 63) / 64, 0) {}
    BitSet(size_t n, const std::vector<int>& members) : BitSet(n) {
        for (int l : members) set(l);
    }
    void set(int l) { words_[static_cast<size_t>(l) >> 6] |= uint64_t{1} << (l & 63); }
    bool test(int l) const { return (words_[static_cast<size_t>(l) >> 6] >> (l & 63)) & 1; }
    BitSet& operator|=(const BitSet& o) {
        for (size_t i = 0; i < words_.size(); ++i) words_[i] |= o.words_[i];
        return *this;
    }
    friend BitSet operator|(BitSet a, const BitSet& b) { return a |= b; }
    friend BitSet operator&(BitSet a, const BitSet& b) {
        for (size_t i = 0; i < a.words_.size(); ++i) a.words_[i] &= b.words_[i];
        return a;
    }
    // Whether some member is not in o.
    bool outside(const BitSet& o) const {
        for (size_t i = 0; i < words_.size(); ++i) {
            if ((words_[i] & ~o.words_[i]) != 0) return true;
        }
        return false;
    }
    std::vector<int> members() const {
        std::vector<int> out;
        for_each([&](int m) { out.push_back(m); });
        return out;
    }
    bool contains_all(const BitSet& o) const {
        for (size_t i = 0; i < words_.size(); ++i) {
            if ((o.words_[i] & ~words_[i]) != 0) return false;
        }
        return true;
    }
    template <class F> void for_each(F&& f) const {
        for (size_t i = 0; i < words_.size(); ++i) {
            for (uint64_t w = words_[i]; w != 0; w &= w - 1) f(static_cast<int>(i * 64 + std::countr_zero(w)));
        }
    }
    friend bool operator==(const BitSet& a, const BitSet& b) { return a.words_ == b.words_; }
    friend bool operator<(const BitSet& a, const BitSet& b) { return a.words_ < b.words_; }
    double size(const std::vector<double>& sizes) const {
        double s = 1;
        for_each([&](int l) { s *= sizes[static_cast<size_t>(l)]; });
        return s;
    }

private:
    std::vector<uint64_t> words_;
};
using LabelSet = BitSet;
using LeafSet = BitSet;

// opt_einsum's cost of one step over `all` labels, producing `kept`.
double step_flops(const LabelSet& all, const LabelSet& kept, const std::vector<double>& sizes) {
    return all.size(sizes) * (kept.contains_all(all) ? 1.0 : 2.0);
}

// splitmix64: a small generator whose sequence is the same everywhere (std distributions are not).
class Random {
public:
    explicit Random(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    uint64_t state_;
};

// One greedy run. With temperature 0 and alpha 1 it is opt_einsum's greedy, step for step (the
// same path on the same network): tensors with equal label sets are multiplied first (and so is
// a result equal to a live tensor); a label every operand holds counts as an output label; each
// new tensor offers only its best partner (cost size(result) - size(a) - size(b), ties to the
// pair whose later id is smallest), and a pair whose offer went stale is not offered again;
// what shares no summed label is joined last by outer products, the smallest (in output
// labels) first. Otherwise (random-greedy) every pair is offered, each choice is drawn among
// the best few (weights exp(-(cost - best) / T)), and the cost weighs the operands by alpha.
class Greedy {
public:
    Greedy(const Network& net, double alpha, double temperature, Random* random)
        : net_(net),
          alpha_(alpha),
          temperature_(temperature),
          random_(random),
          offer_all_(temperature > 0),
          output_(net.size.size(), net.output),
          count_(net.size.size(), 0),
          holders_(net.size.size()) {
        std::vector<int> everywhere(net.size.size(), 0);
        for (const auto& in : net.inputs)
            for (int l : in) ++everywhere[static_cast<size_t>(l)];
        for (size_t l = 0; l < everywhere.size(); ++l) {
            if (everywhere[l] == static_cast<int>(net.inputs.size())) output_.set(static_cast<int>(l));
        }
        const int n = static_cast<int>(net.inputs.size());
        for (const auto& in : net.inputs) add(LabelSet(net.size.size(), in));
        for (int k = 0; k < n; ++k) {  // the first holder of each label set takes its later copies
            for (int j = 0; j < static_cast<int>(sets_.size()); ++j) {
                if ((j < k || j >= n) && alive_[static_cast<size_t>(j)] &&
                    sets_[static_cast<size_t>(j)] == sets_[static_cast<size_t>(k)]) {
                    contract(j, k, sets_[static_cast<size_t>(k)]);
                    break;
                }
            }
        }
    }

    SsaPath run() {
        for (size_t l = 0; l < holders_.size(); ++l) {
            if (output_.test(static_cast<int>(l))) continue;
            std::vector<int> h;
            for (int id : holders_[l]) {
                if (alive_[static_cast<size_t>(id)]) h.push_back(id);
            }
            for (size_t i = 0; i + 1 < h.size(); ++i) offer(h[i], {h.begin() + static_cast<std::ptrdiff_t>(i) + 1, h.end()});
        }
        while (alive_count_ > 1 && !queue_.empty()) {
            const std::optional<Candidate> chosen = choose();
            if (!chosen) break;
            const int c = merge_equal(contract(live_.at(chosen->sa), live_.at(chosen->sb), chosen->result));
            std::set<int> partners;
            sets_[static_cast<size_t>(c)].for_each([&](int l) {
                if (output_.test(l)) return;
                for (int h : holders_[static_cast<size_t>(l)]) {
                    if (h != c && alive_[static_cast<size_t>(h)]) partners.insert(h);
                }
            });
            if (!partners.empty()) offer(c, {partners.begin(), partners.end()});
        }
        // Whatever shares no summed label: outer products, the two smallest first.
        using Entry = std::pair<double, int>;
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> smallest;
        for (int id = 0; id < static_cast<int>(sets_.size()); ++id) {
            if (alive_[static_cast<size_t>(id)]) smallest.emplace((sets_[static_cast<size_t>(id)] & output_).size(net_.size), id);
        }
        while (smallest.size() > 1) {
            const int a = smallest.top().second;
            smallest.pop();
            const int b = smallest.top().second;
            smallest.pop();
            const int c = contract(a, b, result_of(a, b));
            smallest.emplace((sets_[static_cast<size_t>(c)] & output_).size(net_.size), c);
        }
        return ssa_;
    }

private:
    // A pair as offered: the two tensors' labels (the pair is stale once either set is gone) and
    // the labels the result keeps, as they were then; ids a < b order ties.
    struct Candidate {
        double cost;
        int a, b;
        LabelSet sa, sb, result;
        auto key() const { return std::tie(cost, b, a); }
        bool operator>(const Candidate& o) const { return key() > o.key(); }
    };

    int add(LabelSet s) {
        const int id = static_cast<int>(sets_.size());
        s.for_each([&](int l) {
            ++count_[static_cast<size_t>(l)];
            holders_[static_cast<size_t>(l)].push_back(id);
        });
        live_[s] = id;
        sets_.push_back(std::move(s));
        alive_.push_back(true);
        ++alive_count_;
        return id;
    }
    // A live tensor with the same labels as the new `id` is multiplied with it at once.
    int merge_equal(int id) {
        for (int other = 0; other < id; ++other) {
            if (alive_[static_cast<size_t>(other)] && sets_[static_cast<size_t>(other)] == sets_[static_cast<size_t>(id)]) {
                return contract(other, id, sets_[static_cast<size_t>(id)]);
            }
        }
        return id;
    }
    // The labels a contraction of a and b keeps: those in the output or in another live tensor.
    LabelSet result_of(int a, int b) const {
        const LabelSet& sa = sets_[static_cast<size_t>(a)];
        const LabelSet& sb = sets_[static_cast<size_t>(b)];
        LabelSet kept(net_.size.size());
        (sa | sb).for_each([&](int l) {
            const int others = count_[static_cast<size_t>(l)] - sa.test(l) - sb.test(l);
            if (output_.test(l) || others > 0) kept.set(l);
        });
        return kept;
    }
    Candidate candidate(int a, int b) const {
        if (a > b) std::swap(a, b);
        const LabelSet& sa = sets_[static_cast<size_t>(a)];
        const LabelSet& sb = sets_[static_cast<size_t>(b)];
        LabelSet result = result_of(a, b);
        const double cost = result.size(net_.size) - alpha_ * (sa.size(net_.size) + sb.size(net_.size));
        return {cost, a, b, sa, sb, std::move(result)};
    }
    // Pairs of `a` with each of `partners`: all of them, or (plain greedy) the best.
    void offer(int a, const std::vector<int>& partners) {
        std::optional<Candidate> best;
        for (int b : partners) {
            const Candidate c = candidate(a, b);
            if (offer_all_) {
                queue_.push(c);
            } else if (!best || best->key() > c.key()) {
                best = c;
            }
        }
        if (best) queue_.push(*best);
    }
    bool valid(const Candidate& c) const { return live_.contains(c.sa) && live_.contains(c.sb); }
    std::optional<Candidate> choose() {
        while (!queue_.empty() && !valid(queue_.top())) queue_.pop();
        if (queue_.empty()) return std::nullopt;
        if (temperature_ <= 0) {
            Candidate c = queue_.top();
            queue_.pop();
            return c;
        }
        std::vector<Candidate> options;
        while (!queue_.empty() && options.size() < 8) {
            if (valid(queue_.top())) options.push_back(queue_.top());
            queue_.pop();
        }
        const double best = options.front().cost;
        const double scale = temperature_ * std::max(1.0, std::abs(best));
        std::vector<double> weight;
        double total = 0;
        for (const Candidate& c : options) total += weight.emplace_back(std::exp(-(c.cost - best) / scale));
        double pick = random_->uniform() * total;
        size_t chosen = 0;
        while (chosen + 1 < options.size() && pick >= weight[chosen]) pick -= weight[chosen++];
        for (size_t i = 0; i < options.size(); ++i) {
            if (i != chosen) queue_.push(options[i]);
        }
        return options[chosen];
    }
    int contract(int a, int b, LabelSet kept) {
        for (int id : {a, b}) {
            live_.erase(sets_[static_cast<size_t>(id)]);
            alive_[static_cast<size_t>(id)] = false;
            --alive_count_;
            sets_[static_cast<size_t>(id)].for_each([&](int l) { --count_[static_cast<size_t>(l)]; });
        }
        ssa_.emplace_back(std::min(a, b), std::max(a, b));
        return add(std::move(kept));
    }

    const Network& net_;
    double alpha_, temperature_;
    Random* random_;
    bool offer_all_;
    LabelSet output_;                        // the output's labels and those every operand holds
    std::vector<int> count_;                 // live tensors holding each label
    std::vector<std::vector<int>> holders_;  // every tensor that ever held each label
    std::vector<LabelSet> sets_;             // by SSA id
    std::map<LabelSet, int> live_;           // the live tensors by their labels (no two alike)
    std::vector<bool> alive_;
    int alive_count_ = 0;
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue_;
    SsaPath ssa_;
};

// A contraction tree with subtree reconfiguration (as cotengra's): a subtree is cut at up to
// kFrontier of its most expensive descendants, and the tensors at the cut are contracted again
// in the order exact dynamic programming finds best for them. Sweeps repeat while they help.
class Tree {
public:
    static constexpr int kFrontier = 8;
    static constexpr int kMaxSweeps = 32;

    Tree(const Network& net, const Path& path)
        : net_(net), n_(net.inputs.size()), output_(net.size.size(), net.output), holders_(net.size.size(), LeafSet(n_)) {
        for (size_t leaf = 0; leaf < n_; ++leaf) {
            Node node;
            node.leaves = LeafSet(n_, {static_cast<int>(leaf)});
            node.kept = LabelSet(net.size.size(), net.inputs[leaf]);
            for (int l : net.inputs[leaf]) holders_[static_cast<size_t>(l)].set(static_cast<int>(leaf));
            nodes_.push_back(std::move(node));
        }
        std::vector<int> current(n_);
        for (size_t i = 0; i < n_; ++i) current[i] = static_cast<int>(i);
        for (const auto& [i, j] : path) {
            const int a = current[static_cast<size_t>(i)], b = current[static_cast<size_t>(j)];
            current.erase(current.begin() + std::max(i, j));
            current.erase(current.begin() + std::min(i, j));
            current.push_back(join(a, b));
        }
        root_ = current.front();
    }

    // Sweeps until one finds nothing better, kMaxSweeps have run, or the deadline passes.
    void improve(Objective objective, std::chrono::steady_clock::time_point deadline) {
        for (int sweep = 0, better = 1; better && sweep < kMaxSweeps && std::chrono::steady_clock::now() < deadline; ++sweep) {
            better = 0;
            for (int r : internal_by_cost()) {
                if (std::chrono::steady_clock::now() >= deadline) return;
                better = reconfigure(r, objective) || better;
            }
        }
    }

    Path path() const {
        SsaPath ssa;
        std::vector<int> id(nodes_.size(), -1);
        int next = static_cast<int>(n_);
        const auto visit = [&](auto&& self, int v) -> int {
            const Node& node = nodes_[static_cast<size_t>(v)];
            if (node.left < 0) return v;  // a leaf: its id is its input position
            const int a = self(self, node.left), b = self(self, node.right);
            ssa.emplace_back(a, b);
            return next++;
        };
        visit(visit, root_);
        return ssa_to_linear(ssa, static_cast<int>(n_));
    }

private:
    struct Node {
        int left = -1, right = -1;
        LeafSet leaves;
        LabelSet kept;
        double flops = 0, size = 0;
    };

    int join(int a, int b) {
        Node node;
        node.left = a;
        node.right = b;
        node.leaves = nodes_[static_cast<size_t>(a)].leaves | nodes_[static_cast<size_t>(b)].leaves;
        const LabelSet all = nodes_[static_cast<size_t>(a)].kept | nodes_[static_cast<size_t>(b)].kept;
        node.kept = LabelSet(net_.size.size());
        all.for_each([&](int l) {
            if (output_.test(l) || holders_[static_cast<size_t>(l)].outside(node.leaves)) node.kept.set(l);
        });
        node.flops = step_flops(all, node.kept, net_.size);
        node.size = node.kept.size(net_.size);
        nodes_.push_back(std::move(node));
        return static_cast<int>(nodes_.size()) - 1;
    }

    std::vector<int> internal_by_cost() const {
        std::vector<int> out;
        const auto visit = [&](auto&& self, int v) -> void {
            if (nodes_[static_cast<size_t>(v)].left < 0) return;
            out.push_back(v);
            self(self, nodes_[static_cast<size_t>(v)].left);
            self(self, nodes_[static_cast<size_t>(v)].right);
        };
        visit(visit, root_);
        std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
            return nodes_[static_cast<size_t>(a)].flops > nodes_[static_cast<size_t>(b)].flops;
        });
        return out;
    }

    // Re-contracts the cut below r optimally; true when that was cheaper.
    bool reconfigure(int r, Objective objective) {
        std::vector<int> frontier{nodes_[static_cast<size_t>(r)].left, nodes_[static_cast<size_t>(r)].right};
        double old_flops = nodes_[static_cast<size_t>(r)].flops, old_size = nodes_[static_cast<size_t>(r)].size;
        int inner = 1;
        while (frontier.size() < static_cast<size_t>(kFrontier)) {
            auto widest = frontier.end();
            for (auto it = frontier.begin(); it != frontier.end(); ++it) {
                const Node& f = nodes_[static_cast<size_t>(*it)];
                if (f.left >= 0 && (widest == frontier.end() || f.flops > nodes_[static_cast<size_t>(*widest)].flops))
                    widest = it;
            }
            if (widest == frontier.end()) break;
            const Node& f = nodes_[static_cast<size_t>(*widest)];
            old_flops += f.flops;
            old_size = std::max(old_size, f.size);
            const int left = f.left, right = f.right;
            *widest = left;
            frontier.push_back(right);
            ++inner;
        }
        if (inner < 2) return false;  // two tensors have one way to meet
        Network sub;
        sub.size = net_.size;
        for (int f : frontier) sub.inputs.push_back(nodes_[static_cast<size_t>(f)].kept.members());
        sub.output = nodes_[static_cast<size_t>(r)].kept.members();
        const Path best = optimal_path(sub, objective);
        const PathCost cost = path_cost(sub, best);
        const bool wins = objective == Objective::flops ? cost.flops < old_flops * (1 - 1e-9)
                                                        : std::tie(cost.largest, cost.flops) < std::tie(old_size, old_flops) &&
                                                              cost.flops <= old_flops * (1 + 1e-9);
        if (!wins) return false;
        std::vector<int> current = frontier;
        for (const auto& [i, j] : best) {
            const int a = current[static_cast<size_t>(i)], b = current[static_cast<size_t>(j)];
            current.erase(current.begin() + std::max(i, j));
            current.erase(current.begin() + std::min(i, j));
            current.push_back(join(a, b));
        }
        nodes_[static_cast<size_t>(r)] = nodes_.back();  // r keeps its index: its parent still points at it
        nodes_.pop_back();
        return true;
    }

    const Network& net_;
    size_t n_;
    LabelSet output_;
    std::vector<LeafSet> holders_;  // per label: the leaves that hold it
    std::vector<Node> nodes_;       // leaves first; replaced nodes stay, unreferenced
    int root_ = 0;
};

}  // namespace

Path ssa_to_linear(const SsaPath& ssa, int n_inputs) {
    std::vector<int> current(static_cast<size_t>(n_inputs));
    for (int i = 0; i < n_inputs; ++i) current[static_cast<size_t>(i)] = i;
    Path path;
    int next = n_inputs;
    for (const auto& [a, b] : ssa) {
        const auto pos = [&](int id) {
            return static_cast<int>(std::find(current.begin(), current.end(), id) - current.begin());
        };
        const int i = pos(a), j = pos(b);
        path.emplace_back(i, j);
        current.erase(current.begin() + std::max(i, j));
        current.erase(current.begin() + std::min(i, j));
        current.push_back(next++);
    }
    return path;
}

Path greedy_path(const Network& net) {
    if (net.inputs.size() < 2) return {};
    return ssa_to_linear(Greedy(net, 1.0, 0.0, nullptr).run(), static_cast<int>(net.inputs.size()));
}

Path optimal_path(const Network& net, Objective objective) {
    const int n = static_cast<int>(net.inputs.size());
    if (n > kOptimalMaxOperands) {
        std::optional<Path> path = connected_optimal_path(net, objective, kOptimalMaxPairs);
        if (!path) {
            fail("the optimal path search over connected subnetworks gave up on " + std::to_string(n) + " operands (" +
                 (n > kConnectedOptimalMaxOperands ? "more than " + std::to_string(kConnectedOptimalMaxOperands) + " operands"
                                                   : "more than " + std::to_string(static_cast<int64_t>(kOptimalMaxPairs)) +
                                                         " pairs of subnetworks, or more than 512 labels") +
                 "); use optimize=\"auto\", \"greedy\" or \"random-greedy\"");
        }
        return *path;
    }
    if (n < 2) return {};
    const size_t L = net.size.size();
    const uint32_t full = (uint32_t{1} << n) - 1;
    std::vector<uint32_t> holders(L, 0);
    for (int t = 0; t < n; ++t)
        for (int l : net.inputs[static_cast<size_t>(t)]) holders[static_cast<size_t>(l)] |= uint32_t{1} << t;
    const LabelSet output(L, net.output);
    // kept[S]: the labels of the contraction of subset S that the rest (or the output) needs;
    // for one input, all its labels (those only it has are summed when it is first contracted).
    std::vector<LabelSet> kept(size_t{1} << n);
    std::vector<double> kept_size(size_t{1} << n);
    for (uint32_t S = 1; S <= full; ++S) {
        LabelSet k(L);
        if (std::popcount(S) == 1) {
            k = LabelSet(L, net.inputs[static_cast<size_t>(std::countr_zero(S))]);  // an input as it is
        } else {
            for (size_t l = 0; l < L; ++l) {
                if ((holders[l] & S) != 0 && (output.test(static_cast<int>(l)) || (holders[l] & ~S & full) != 0)) {
                    k.set(static_cast<int>(l));
                }
            }
        }
        kept_size[S] = k.size(net.size);
        kept[S] = std::move(k);
    }
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::vector<double> flops(size_t{1} << n, inf), largest(size_t{1} << n, inf);
    std::vector<uint32_t> split(size_t{1} << n, 0);
    for (int t = 0; t < n; ++t) flops[uint32_t{1} << t] = largest[uint32_t{1} << t] = 0;
    const auto better = [&](double f, double s, uint32_t S) { return cheaper({f, s}, {flops[S], largest[S]}, objective); };
    for (uint32_t S = 1; S <= full; ++S) {
        if (std::popcount(S) < 2) continue;
        const uint32_t low = S & (~S + 1);
        for (uint32_t A = (S - 1) & S; A != 0; A = (A - 1) & S) {
            if ((A & low) == 0) continue;
            const uint32_t B = S ^ A;
            const double below = flops[A] + flops[B];
            if (objective == Objective::flops && below > flops[S]) continue;
            const LabelSet all = kept[A] | kept[B];
            const double f = below + step_flops(all, kept[S], net.size);
            const double s = std::max({largest[A], largest[B], kept_size[S]});
            if (better(f, s, S)) {
                flops[S] = f;
                largest[S] = s;
                split[S] = A;
            }
        }
    }
    SsaPath ssa;
    int next = n;
    const auto build = [&](auto&& self, uint32_t S) -> int {
        if (std::popcount(S) == 1) return std::countr_zero(S);
        const int a = self(self, split[S]), b = self(self, S ^ split[S]);
        ssa.emplace_back(a, b);
        return next++;
    };
    build(build, full);
    return ssa_to_linear(ssa, n);
}

Path auto_path(const Network& net, Objective objective) {
    if (net.inputs.size() <= 8) return optimal_path(net, objective);
    Path best = improve_path(net, greedy_path(net), objective, 0.0);
    const auto keep_better = [&](const Path& candidate) {
        if (cheaper(path_cost(net, candidate), path_cost(net, best), objective)) best = candidate;
    };
    RandomGreedyOptions random;
    random.repeats = kAutoRandomRepeats;
    random.objective = objective;
    keep_better(random_greedy_path(net, random));
    if (const std::optional<Path> exact = connected_optimal_path(net, objective, kAutoMaxPairs)) keep_better(*exact);
    return best;
}

Path random_greedy_path(const Network& net, const RandomGreedyOptions& options) {
    if (net.inputs.size() < 2) return {};
    if (options.repeats < 1) fail("random-greedy needs repeats >= 1, got " + std::to_string(options.repeats));
    const auto start = std::chrono::steady_clock::now();
    Random random(options.seed);
    Path best;
    PathCost best_cost;
    for (int64_t trial = 0; trial < options.repeats; ++trial) {
        // Trial 0 is plain greedy, so the result is never worse than greedy's.
        const double temperature = trial == 0 ? 0.0 : std::exp(std::log(0.01) * random.uniform());
        const double alpha = trial == 0 ? 1.0 : 0.5 + random.uniform();
        Path path = ssa_to_linear(Greedy(net, alpha, temperature, &random).run(), static_cast<int>(net.inputs.size()));
        const PathCost cost = path_cost(net, path);
        if (best.empty() || cheaper(cost, best_cost, options.objective)) {
            best = std::move(path);
            best_cost = cost;
        }
        if (options.max_seconds > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > options.max_seconds) {
            break;
        }
    }
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.max_seconds > 0 && spent >= options.max_seconds) return best;
    return improve_path(net, best, options.objective, options.max_seconds > 0 ? options.max_seconds - spent : 0.0);
}

Path improve_path(const Network& net, const Path& path, Objective objective, double max_seconds) {
    if (net.inputs.size() < 3) return path;
    Tree tree(net, path);
    const auto deadline =
        max_seconds > 0
            ? std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(max_seconds))
            : std::chrono::steady_clock::time_point::max();
    tree.improve(objective, deadline);
    Path better = tree.path();
    // Ties go to the improved tree.
    return cheaper(path_cost(net, path), path_cost(net, better), objective) ? path : better;
}

Path parse_order(std::string_view order, int n_operands) {
    const std::string quoted = std::string("order \"").append(order).append("\"");
    size_t at = 0;
    const auto where = [&](size_t pos) { return " at character " + std::to_string(pos) + " of " + quoted; };
    const auto skip_spaces = [&] {
        while (at < order.size() && order[at] == ' ') ++at;
    };
    const auto expect = [&](char c) {
        skip_spaces();
        if (at >= order.size() || order[at] != c) fail(std::string("expected '") + c + "'" + where(at));
        ++at;
    };
    SsaPath ssa;
    std::vector<bool> seen(static_cast<size_t>(n_operands), false);
    int next = n_operands;
    // node := operand | '(' node ',' node ')'; returns its SSA id.
    const auto node = [&](auto&& self) -> int {
        skip_spaces();
        if (at < order.size() && order[at] == '(') {
            ++at;
            const int a = self(self);
            expect(',');
            const int b = self(self);
            expect(')');
            ssa.emplace_back(a, b);
            return next++;
        }
        const size_t start = at;
        while (at < order.size() && order[at] >= '0' && order[at] <= '9') ++at;
        if (at == start) fail("expected an operand or '('" + where(at));
        const long v = at - start > 9 ? n_operands : std::stol(std::string(order.substr(start, at - start)));
        if (v >= n_operands) {
            fail("operand " + std::to_string(v) + " does not exist (" + std::to_string(n_operands) + " operands)" + where(start));
        }
        if (seen[static_cast<size_t>(v)]) fail("operand " + std::to_string(v) + " appears twice" + where(start));
        seen[static_cast<size_t>(v)] = true;
        return static_cast<int>(v);
    };
    node(node);
    skip_spaces();
    if (at != order.size()) fail("unexpected '" + std::string(1, order[at]) + "'" + where(at));
    for (int k = 0; k < n_operands; ++k) {
        if (!seen[static_cast<size_t>(k)]) fail(quoted + " leaves operand " + std::to_string(k) + " out");
    }
    return ssa_to_linear(ssa, n_operands);
}

PathCost path_cost(const Network& net, const Path& path) {
    const size_t L = net.size.size();
    const LabelSet output(L, net.output);
    std::vector<LabelSet> current;
    std::vector<int> count(L, 0);
    for (const auto& in : net.inputs) {
        current.emplace_back(L, in);
        for (int l : in) ++count[static_cast<size_t>(l)];
    }
    PathCost cost;
    if (current.size() == 1 && path.empty()) {
        const LabelSet all = current[0];
        cost.flops = step_flops(all, output, net.size);
        cost.largest = (all & output).size(net.size);
        return cost;
    }
    for (size_t s = 0; s < path.size(); ++s) {
        const auto [i, j] = path[s];
        const int remain = static_cast<int>(current.size());
        if (i < 0 || j < 0 || i >= remain || j >= remain) {
            fail("path step " + std::to_string(s) + " (" + std::to_string(i) + ", " + std::to_string(j) +
                 ") names an operand that does not exist: " + std::to_string(remain) + " remain");
        }
        if (i == j) fail("path step " + std::to_string(s) + " names operand " + std::to_string(i) + " twice");
        const LabelSet& a = current[static_cast<size_t>(i)];
        const LabelSet& b = current[static_cast<size_t>(j)];
        const LabelSet all = a | b;
        LabelSet kept(L);
        all.for_each([&](int l) {
            if (output.test(l) || count[static_cast<size_t>(l)] - a.test(l) - b.test(l) > 0) kept.set(l);
        });
        cost.flops += step_flops(all, kept, net.size);
        cost.largest = std::max(cost.largest, kept.size(net.size));
        a.for_each([&](int l) { --count[static_cast<size_t>(l)]; });
        b.for_each([&](int l) { --count[static_cast<size_t>(l)]; });
        kept.for_each([&](int l) { ++count[static_cast<size_t>(l)]; });
        current.erase(current.begin() + std::max(i, j));
        current.erase(current.begin() + std::min(i, j));
        current.push_back(std::move(kept));
    }
    if (current.size() != 1) {
        fail("the path " + path_str(path) + " leaves " + std::to_string(current.size()) +
             " operands uncontracted; a complete path has " + std::to_string(net.inputs.size() - 1) + " steps");
    }
    return cost;
}

std::string path_str(const Path& path) {
    std::string s;
    for (const auto& [i, j] : path) {
        if (!s.empty()) s += ", ";
        s += std::string("(") + std::to_string(i) + ", " + std::to_string(j) + ")";
    }
    return s.empty() ? "()" : s;
}

}  // namespace ferro::einsum
