#include "program.hpp"

#include <ferro/host.h>
#include <ferro/plugin.hpp>
#include <ferro/rules.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>

namespace ferro::einsum {
namespace {

[[noreturn]] void fail(const std::string& why) { throw plugin::Error(FERRO_INVALID_ARGUMENT, "einsum: " + why); }

constexpr uint64_t kSlotAlignment = 64;

// A tensor while compiling: its distinct labels (size-1 axes left out: they broadcast and
// never matter to the arithmetic) with their strides, at some place.
struct Operand {
    Place place;
    std::vector<int> labels;
    std::vector<int64_t> strides;

    bool has(int l) const { return std::find(labels.begin(), labels.end(), l) != labels.end(); }
    int64_t stride_of(int l) const {
        const auto it = std::find(labels.begin(), labels.end(), l);
        return it == labels.end() ? 0 : strides[static_cast<size_t>(it - labels.begin())];
    }
};

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
    std::vector<int> out;
    for (int l : a) {
        if (std::find(b.begin(), b.end(), l) == b.end()) out.push_back(l);
    }
    return out;
}

class Compiler {
public:
    // recorded: every step's value but the last is kept, in output 1. output_layout: the
    // output's strides when they are fixed (a slice's part of a larger output), else row-major.
    Compiler(const Expression& e, std::span<const ferro_signature> inputs, const PathOptions& options, int64_t* output_strides,
             bool recorded = false, std::span<const int64_t> output_layout = {})
        : e_(e), inputs_(inputs), output_strides_(output_strides), recorded_(recorded), output_layout_(output_layout) {
        size_ = label_sizes(e, shapes_of(inputs));
        p_.dtype = result_dtype(inputs);
        for (const auto& s : inputs) p_.input_dtypes.push_back(s.dtype);
        const Network net = network_of(e, size_);
        p_.path = choose_path(net, options);
        p_.cost = path_cost(net, p_.path);
        output_ = output_operand();
    }

    Program compile() && {
        if (numel(e_.output) == 0) return std::move(p_);  // nothing to write
        if (std::find(size_.begin(), size_.end(), 0) != size_.end()) {
            // A summed label of size 0: every output element is an empty sum, as in numpy.
            Step s;
            s.kind = Step::zero;
            s.out = view_of(output_, output_.labels);
            push(std::move(s), {});
            return std::move(p_);
        }
        std::vector<Operand> current;
        std::vector<int> ids;  // the SSA id of each tensor in `current`: inputs 0..n-1, step s n + s
        for (size_t k = 0; k < inputs_.size(); ++k) {
            current.push_back(input_operand(k));
            ids.push_back(static_cast<int>(k));
        }
        const Ahead ahead = look_ahead(current);
        for (size_t step = 0; step < p_.path.size(); ++step) {
            const auto [i, j] = p_.path[step];
            Operand x = current[static_cast<size_t>(i)], y = current[static_cast<size_t>(j)];
            for (int at : {std::max(i, j), std::min(i, j)}) {
                current.erase(current.begin() + at);
                ids.erase(ids.begin() + at);
            }
            std::vector<int> keep = output_.labels;
            for (const Operand& t : current) keep.insert(keep.end(), t.labels.begin(), t.labels.end());
            const int id = static_cast<int>(inputs_.size() + step);
            const Wanted wanted = current.empty() ? Wanted{} : consumer_layout(ahead, id, current, ids);
            const bool last = current.empty();
            current.push_back(contract(std::move(x), std::move(y), keep, last, wanted));
            ids.push_back(id);
            if (recorded_ && !last) keep_value(current.back());
        }
        finish(current.front());
        place_slots();
        return std::move(p_);
    }

private:
    int64_t size(int l) const { return size_[static_cast<size_t>(l)]; }
    int64_t numel(const std::vector<int>& labels) const {
        int64_t n = 1;
        for (int l : labels) n *= size(l);
        return n;
    }
    std::vector<int64_t> row_major(const std::vector<int>& labels) const {
        std::vector<int64_t> s(labels.size());
        int64_t stride = 1;
        for (size_t i = labels.size(); i-- > 0;) {
            s[i] = stride;
            stride *= size(labels[i]);
        }
        return s;
    }

    Operand input_operand(size_t k) {
        const ferro_signature& sig = inputs_[k];
        Operand t;
        t.place = {Place::input, static_cast<int>(k)};
        for (size_t a = 0; a < e_.inputs[k].size(); ++a) {
            const int l = e_.inputs[k][a];
            if (sig.shape[a] == 1) continue;
            const auto it = std::find(t.labels.begin(), t.labels.end(), l);
            if (it != t.labels.end()) {
                t.strides[static_cast<size_t>(it - t.labels.begin())] += sig.strides[a];  // a diagonal
            } else {
                t.labels.push_back(l);
                t.strides.push_back(sig.strides[a]);
            }
        }
        // Along a label of stride 0 (an expanded tensor, as the cotangent of a sum is) the
        // operand is constant, so it need not be looped over where another operand carries
        // the label: the product is summed or broadcast over it there (sum_l c y_l = c sum_l
        // y_l). The cotangent products of einsum(...).sum() for a matrix product become a sum
        // and an outer product instead of two gemms, as XLA simplifies them.
        for (size_t i = t.labels.size(); i-- > 0;) {
            if (t.strides[i] == 0 && carried_elsewhere(k, t.labels[i])) {
                t.labels.erase(t.labels.begin() + static_cast<std::ptrdiff_t>(i));
                t.strides.erase(t.strides.begin() + static_cast<std::ptrdiff_t>(i));
            }
        }
        if (sig.dtype == p_.dtype) return t;
        return transfer(Step::cast, t, new_slot(t.labels));
    }

    // Whether an operand other than k varies along label l (a nonzero stride over its axes of
    // that label longer than 1).
    bool carried_elsewhere(size_t k, int l) const {
        for (size_t j = 0; j < inputs_.size(); ++j) {
            if (j == k) continue;
            int64_t stride = 0;
            bool has = false;
            for (size_t a = 0; a < e_.inputs[j].size(); ++a) {
                if (e_.inputs[j][a] != l || inputs_[j].shape[a] == 1) continue;
                has = true;
                stride += inputs_[j].strides[a];
            }
            if (has && stride != 0) return true;
        }
        return false;
    }

    Operand output_operand() const {
        Operand o;
        o.place = {Place::output, 0};
        int64_t stride = 1;
        std::vector<int64_t> strides(e_.output.size());
        for (size_t i = e_.output.size(); i-- > 0;) {
            strides[i] = output_layout_.empty() ? stride : output_layout_[i];
            stride *= size(e_.output[i]);
        }
        for (size_t i = 0; i < e_.output.size(); ++i) {
            if (size(e_.output[i]) == 1) continue;
            o.labels.push_back(e_.output[i]);
            o.strides.push_back(strides[i]);
        }
        return o;
    }

    Operand new_slot(const std::vector<int>& labels) {
        Operand t;
        t.place = {Place::workspace, static_cast<int>(slot_bytes_.size())};
        t.labels = labels;
        t.strides = row_major(labels);
        slot_bytes_.push_back(static_cast<uint64_t>(numel(labels) * (FERRO_DTYPE_BITS(p_.dtype) / 8)));
        p_.slot_labels.push_back(labels);
        slot_life_.emplace_back(p_.steps.size(), p_.steps.size());
        return t;
    }

    // `order`'s labels in t (stride 0 where t lacks one: a broadcast).
    View view_of(const Operand& t, const std::vector<int>& order) const {
        View v;
        v.place = t.place;
        for (int l : order) {
            v.shape.push_back(size(l));
            v.strides.push_back(t.stride_of(l));
        }
        return v;
    }

    // Recorded mode: a step's value (a new slot, but the last step's) stays in its slot to the end.
    void keep_value(const Operand& t) {
        if (t.place.kind != Place::workspace) throw plugin::Error(FERRO_INTERNAL, "einsum: a step's value is not in a slot");
        slot_life_[static_cast<size_t>(t.place.index)].second = SIZE_MAX;
        p_.values.push_back({t.place.index, t.labels, t.strides});
    }

    // Appends a step; the workspace slots it reads live at least until it.
    void push(Step s, std::initializer_list<const Operand*> reads) {
        for (const Operand* t : reads) {
            if (t->place.kind != Place::workspace) continue;
            size_t& end = slot_life_[static_cast<size_t>(t->place.index)].second;
            end = std::max(end, p_.steps.size());  // a kept value's end stays the last
        }
        p_.steps.push_back(std::move(s));
    }

    // t with `labels` summed away (a reduce into a new slot).
    Operand sum_out(const Operand& t, const std::vector<int>& labels) {
        if (labels.empty()) return t;
        Operand r = new_slot(minus(t.labels, labels));
        push(reduction(t, r), {&t});
        return r;
    }

    // A reduce of t into `out` (which lacks the summed labels), walking t's memory in order.
    Step reduction(const Operand& t, const Operand& out) const {
        const std::vector<int> order = by_stride(t, t.labels);
        Step s;
        s.kind = Step::reduce;
        s.a = view_of(t, order);
        s.out = view_of(out, order);
        for (size_t i = 0; i < order.size(); ++i) {
            if (!out.has(order[i])) s.out.shape[i] = 1;
        }
        return s;
    }

    // t copied (or cast) into target's layout, walking the target's memory in order (the
    // primitives run their innermost loop over the last axis of a view).
    Operand transfer(Step::Kind kind, const Operand& t, Operand target) {
        const std::vector<int> order = by_stride(target, t.labels);
        Step s;
        s.kind = kind;
        s.a = view_of(t, order);
        s.out = view_of(target, order);
        push(std::move(s), {&t});
        return target;
    }

    // Group labels ordered as they nest in t's memory (outermost first).
    static std::vector<int> by_stride(const Operand& t, std::vector<int> group) {
        std::stable_sort(group.begin(), group.end(),
                         [&](int a, int b) { return std::abs(t.stride_of(a)) > std::abs(t.stride_of(b)); });
        return group;
    }
    // Whether `order` is one strided dimension of t: each axis steps over the next one whole.
    bool nests(const Operand& t, const std::vector<int>& order) const {
        for (size_t i = 0; i + 1 < order.size(); ++i) {
            if (t.stride_of(order[i]) != t.stride_of(order[i + 1]) * size(order[i + 1])) return false;
        }
        return true;
    }
    // Whether t is a batch of matrices BLAS takes as they are: each group one strided
    // dimension, and the rows or the columns contiguous (a batch axis innermost would make
    // every matrix of the batch a strided gather).
    bool gemm_ready(const Operand& t, const std::vector<int>& batch, const std::vector<int>& rows,
                    const std::vector<int>& cols) const {
        if (!nests(t, batch) || !nests(t, rows) || !nests(t, cols)) return false;
        return rows.empty() || cols.empty() || std::abs(inner_stride(t, rows)) == 1 || std::abs(inner_stride(t, cols)) == 1;
    }
    static int64_t inner_stride(const Operand& t, const std::vector<int>& order) {
        return order.empty() ? 0 : t.stride_of(order.back());
    }

    // The label sets along the path, known before any layout is: what each step contracts,
    // what it keeps, and which later step consumes each tensor.
    struct Ahead {
        std::vector<std::vector<int>> labels;       // per SSA id
        std::vector<int> consumer;                  // per SSA id: the step that reads it (-1: none)
        std::vector<std::pair<int, int>> operands;  // per step: the SSA ids it contracts
        std::vector<std::vector<int>> keep;         // per step: the labels needed after it
    };
    Ahead look_ahead(const std::vector<Operand>& inputs) const {
        Ahead a;
        std::vector<int> live;
        for (size_t k = 0; k < inputs.size(); ++k) {
            a.labels.push_back(inputs[k].labels);
            live.push_back(static_cast<int>(k));
        }
        a.consumer.assign(inputs.size() + p_.path.size(), -1);
        for (size_t step = 0; step < p_.path.size(); ++step) {
            const auto [i, j] = p_.path[step];
            const int x = live[static_cast<size_t>(i)], y = live[static_cast<size_t>(j)];
            live.erase(live.begin() + std::max(i, j));
            live.erase(live.begin() + std::min(i, j));
            std::vector<int> keep = output_.labels;
            for (int id : live)
                keep.insert(keep.end(), a.labels[static_cast<size_t>(id)].begin(), a.labels[static_cast<size_t>(id)].end());
            std::vector<int> result;
            for (const auto* side : {&a.labels[static_cast<size_t>(x)], &a.labels[static_cast<size_t>(y)]}) {
                for (int l : *side) {
                    if (std::find(keep.begin(), keep.end(), l) != keep.end() &&
                        std::find(result.begin(), result.end(), l) == result.end()) {
                        result.push_back(l);
                    }
                }
            }
            a.consumer[static_cast<size_t>(x)] = a.consumer[static_cast<size_t>(y)] = static_cast<int>(step);
            a.operands.emplace_back(x, y);
            a.keep.push_back(std::move(keep));
            a.labels.push_back(std::move(result));
            live.push_back(static_cast<int>(inputs.size() + step));
        }
        return a;
    }

    // How the next contraction of the tensor `id` about to be made would read it without packing:
    // its labels in runs, each one strided dimension of that gemm: [batch, its free labels,
    // summed] or [batch, summed, free], the first when the tensor is that gemm's rows (its
    // rows contiguous), the second as its columns; the other is a transposed operand, which
    // serves as well. With the partner made, batch and summed follow the partner's memory
    // order; before, any order within a run serves (`any_order`): the partner, made later,
    // follows this tensor's. None when the next step sums nothing or the tensor is the last.
    struct Wanted {
        std::vector<std::vector<std::vector<int>>> layouts;  // candidates, best first
        bool any_order = false;
    };
    Wanted consumer_layout(const Ahead& a, int id, const std::vector<Operand>& current, const std::vector<int>& ids) const {
        const int step = a.consumer[static_cast<size_t>(id)];
        if (step < 0) return {};
        const auto [first, second] = a.operands[static_cast<size_t>(step)];
        const int partner = first == id ? second : first;
        const auto at = std::find(ids.begin(), ids.end(), partner);
        const Operand* p = at == ids.end() ? nullptr : &current[static_cast<size_t>(at - ids.begin())];
        const std::vector<int>& mine = a.labels[static_cast<size_t>(id)];
        const std::vector<int>& theirs = a.labels[static_cast<size_t>(partner)];
        const std::vector<int>& keep = a.keep[static_cast<size_t>(step)];
        std::vector<int> batch, summed, free, partner_free;
        for (int l : mine) {
            if (!contains(theirs, l)) free.push_back(l);
            else (contains(keep, l) ? batch : summed).push_back(l);
        }
        for (int l : theirs) {
            if (!contains(mine, l) && contains(keep, l)) partner_free.push_back(l);
        }
        if (summed.empty()) return {};
        // contract() makes the operand with the smaller free side the rows (first wins ties).
        const bool rows = first == id ? numel(free) <= numel(partner_free) : numel(free) < numel(partner_free);
        if (p != nullptr) {
            batch = by_stride(*p, batch);
            summed = by_stride(*p, summed);
        }
        const std::vector<std::vector<int>> as_rows = {batch, free, summed}, as_columns = {batch, summed, free};
        Wanted w;
        w.any_order = p == nullptr;
        w.layouts.push_back(rows ? as_rows : as_columns);
        w.layouts.push_back(rows ? as_columns : as_rows);
        return w;
    }

    // Whether `order` already reads as one of w's layouts.
    static bool serves(const std::vector<int>& order, const Wanted& w) {
        for (const auto& runs : w.layouts) {
            std::vector<int> seen;  // each label's run, in `order`
            for (int l : order) {
                for (size_t r = 0; r < runs.size(); ++r) {
                    if (contains(runs[r], l)) seen.push_back(static_cast<int>(r));
                }
            }
            std::vector<int> whole;
            for (const auto& run : runs) whole.insert(whole.end(), run.begin(), run.end());
            if (w.any_order ? std::is_sorted(seen.begin(), seen.end()) : order == whole) return true;
        }
        return false;
    }

    // A layout of the result that is one of w's and also one run of each of its batch, row and
    // column groups (as_groups), or empty. Without an order within runs, each run's labels are
    // taken group by group, in each of the groups' six orders.
    std::vector<int> resolve(const Wanted& w, const std::vector<int>& batch, const std::vector<int>& rows,
                             const std::vector<int>& cols) const {
        const std::array<const std::vector<int>*, 3> groups = {&batch, &rows, &cols};
        for (const auto& runs : w.layouts) {
            std::array<size_t, 3> rank = {0, 1, 2};
            do {
                std::vector<int> order;
                for (const auto& run : runs) {
                    if (!w.any_order) {
                        order.insert(order.end(), run.begin(), run.end());
                        continue;
                    }
                    for (size_t g : rank) {
                        for (int l : run) {
                            if (contains(*groups[g], l)) order.push_back(l);
                        }
                    }
                }
                if (as_groups(order, batch, rows, cols)) return order;
            } while (w.any_order && std::next_permutation(rank.begin(), rank.end()));
        }
        return {};
    }

    // `wanted` cut into the result's batch, row and column groups, when each is one run of it
    // and a matrix axis is innermost (else empty: the gemm could not write that layout well).
    std::optional<std::array<std::vector<int>, 3>> as_groups(const std::vector<int>& wanted, const std::vector<int>& batch,
                                                             const std::vector<int>& rows, const std::vector<int>& cols) const {
        if (wanted.size() != batch.size() + rows.size() + cols.size() || wanted.empty()) return std::nullopt;
        std::array<std::vector<int>, 3> groups;
        int previous = -1;
        std::array<bool, 3> closed{};
        for (int l : wanted) {
            const int g = contains(batch, l) ? 0 : contains(rows, l) ? 1 : contains(cols, l) ? 2 : -1;
            if (g < 0 || closed[static_cast<size_t>(g)]) return std::nullopt;
            if (previous >= 0 && previous != g) closed[static_cast<size_t>(previous)] = true;
            groups[static_cast<size_t>(g)].push_back(l);
            previous = g;
        }
        if (previous == 0 && !(rows.empty() && cols.empty())) return std::nullopt;
        return groups;
    }
    static bool contains(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

    Operand contract(Operand x, Operand y, const std::vector<int>& keep, bool last, const Wanted& wanted) {
        const auto needed = [&](const std::vector<int>& labels, const Operand& other) {
            std::vector<int> gone;
            for (int l : labels) {
                if (!other.has(l) && std::find(keep.begin(), keep.end(), l) == keep.end()) gone.push_back(l);
            }
            return gone;
        };
        x = sum_out(x, needed(x.labels, y));
        y = sum_out(y, needed(y.labels, x));
        std::vector<int> batch, summed;
        for (int l : x.labels) {
            if (!y.has(l)) continue;
            (std::find(keep.begin(), keep.end(), l) != keep.end() ? batch : summed).push_back(l);
        }
        std::vector<int> left = minus(x.labels, y.labels), right = minus(y.labels, x.labels);
        if (summed.empty()) return multiply(x, y, last);
        // The result is laid out [batch, rows, columns] with the smaller free side as rows:
        // OpenBLAS runs a tall, narrow product 25-35% slower than its transpose (measured for
        // 505 x 21 x 462, 177147 x 243 x 50, 4096 x 64 x 64; no difference near square).
        if (numel(left) > numel(right)) {
            std::swap(x, y);
            std::swap(left, right);
        }

        // Choose each group's axis order among the operands' own, so as to copy the least.
        const auto candidates = [&](const std::vector<int>& group, std::initializer_list<const Operand*> from) {
            std::vector<std::vector<int>> out;
            for (const Operand* t : from) {
                std::vector<int> o = by_stride(*t, group);
                if (std::find(out.begin(), out.end(), o) == out.end()) out.push_back(std::move(o));
            }
            return out;
        };
        const Operand& o = output_;
        const auto ob = last ? candidates(batch, {&x, &y, &o}) : candidates(batch, {&x, &y});
        const auto ok = candidates(summed, {&x, &y});
        const auto ol = last ? candidates(left, {&x, &o}) : candidates(left, {&x});
        const auto orr = last ? candidates(right, {&y, &o}) : candidates(right, {&y});
        struct Choice {
            int64_t cost = -1;
            std::vector<int> b, k, l, r;
        };
        const auto choose = [&](const auto& ob_, const auto& ol_, const auto& or_) {
            Choice best;
            for (const auto& b : ob_)
                for (const auto& k : ok)
                    for (const auto& l : ol_)
                        for (const auto& r : or_) {
                            int64_t cost = 0;
                            if (!gemm_ready(x, b, l, k)) cost += numel(x.labels);
                            if (!gemm_ready(y, b, k, r)) cost += numel(y.labels);
                            if (last && !gemm_ready(o, b, l, r)) cost += 2 * numel(o.labels);
                            if (best.cost < 0 || cost < best.cost) best = {cost, b, k, l, r};
                        }
            return best;
        };
        const auto cat = [](std::initializer_list<const std::vector<int>*> parts) {
            std::vector<int> out;
            for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
            return out;
        };
        Choice best = choose(ob, ol, orr);
        // Laying the result out as its next contraction wants it saves packing it there, when
        // that costs less here than the pack it saves.
        std::vector<int> layout;
        if (!serves(cat({&best.b, &best.l, &best.r}), wanted)) layout = resolve(wanted, batch, left, right);
        if (const auto groups = as_groups(layout, batch, left, right)) {
            using Orders = std::vector<std::vector<int>>;
            const Choice forced = choose(Orders{(*groups)[0]}, Orders{(*groups)[1]}, Orders{(*groups)[2]});
            if (forced.cost < best.cost + numel(layout)) best = forced;
            else layout.clear();
        }
        if (!gemm_ready(x, best.b, best.l, best.k)) x = transfer(Step::copy, x, new_slot(cat({&best.b, &best.l, &best.k})));
        if (!gemm_ready(y, best.b, best.k, best.r)) y = transfer(Step::copy, y, new_slot(cat({&best.b, &best.k, &best.r})));
        if (last && output_strides_ != nullptr) lay_out_output(cat({&best.b, &best.l, &best.r}));
        const bool direct = last && gemm_ready(o, best.b, best.l, best.r);
        Operand c = direct ? output_ : new_slot(layout.empty() ? cat({&best.b, &best.l, &best.r}) : layout);
        Step s;
        s.kind = Step::gemm;
        s.batch = numel(best.b);
        s.m = numel(best.l);
        s.n = numel(best.r);
        s.k = numel(best.k);
        s.a = {x.place, {}, {inner_stride(x, best.b), inner_stride(x, best.l), inner_stride(x, best.k)}};
        s.b = {y.place, {}, {inner_stride(y, best.b), inner_stride(y, best.k), inner_stride(y, best.r)}};
        s.out = {c.place, {}, {inner_stride(c, best.b), inner_stride(c, best.l), inner_stride(c, best.r)}};
        push(std::move(s), {&x, &y});
        if (last && !direct) return transfer(Step::copy, c, output_);
        return c;
    }

    // No label summed: a broadcast product (elementwise, outer or batched outer).
    Operand multiply(const Operand& x, const Operand& y, bool last) {
        std::vector<int> order = x.labels;
        for (int l : y.labels) {
            if (!x.has(l)) order.push_back(l);
        }
        if (last && output_strides_ != nullptr) lay_out_output(order);
        Operand c = last ? output_ : new_slot(order);
        if (last) order = by_stride(output_, output_.labels);  // the output's memory order
        Step s;
        s.kind = Step::mul;
        s.a = view_of(x, order);
        s.b = view_of(y, order);
        s.out = view_of(c, order);
        push(std::move(s), {&x, &y});
        return c;
    }

    // The last tensor into the output: sum what the output lacks, or copy.
    void finish(const Operand& t) {
        if (t.place.kind == Place::output) return;
        const std::vector<int> gone = minus(t.labels, output_.labels);
        if (output_strides_ != nullptr) lay_out_output(by_stride(t, minus(t.labels, gone)));
        if (gone.empty()) {
            transfer(Step::copy, t, output_);
        } else {
            push(reduction(t, output_), {&t});
        }
    }

    // The output laid out with `order` (its labels longer than 1) outermost first, which the
    // host then allocates (ABI 1.1): size-1 axes get stride 1.
    void lay_out_output(const std::vector<int>& order) {
        const std::vector<int64_t> strides = row_major(order);
        for (size_t i = 0; i < output_.labels.size(); ++i) {
            const auto at = std::find(order.begin(), order.end(), output_.labels[i]) - order.begin();
            output_.strides[i] = strides[static_cast<size_t>(at)];
        }
        for (size_t a = 0; a < e_.output.size(); ++a) output_strides_[a] = std::max<int64_t>(1, output_.stride_of(e_.output[a]));
    }

    // Offsets for the workspace slots: a slot shares memory with any other whose lifetime
    // (written .. last read) does not overlap its own. A kept value (recorded mode) has a
    // residual slot of its own instead.
    void place_slots() {
        struct Placed {
            uint64_t begin, end;
            size_t first, last;
        };
        std::vector<Placed> placed;
        for (size_t s = 0; s < slot_bytes_.size(); ++s) {
            const uint64_t bytes = (slot_bytes_[s] + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
            const auto [first, last] = slot_life_[s];
            p_.slot_kept.push_back(last == SIZE_MAX);
            if (p_.slot_kept.back()) {
                p_.slot_offsets.push_back(p_.residual_bytes);
                p_.residual_bytes += bytes;
                continue;
            }
            std::vector<std::pair<uint64_t, uint64_t>> busy;
            for (const Placed& p : placed) {
                if (p.first <= last && first <= p.last) busy.emplace_back(p.begin, p.end);
            }
            std::sort(busy.begin(), busy.end());
            uint64_t at = 0;
            for (const auto& [b, e] : busy) {
                if (at + bytes <= b) break;
                at = std::max(at, e);
            }
            placed.push_back({at, at + bytes, first, last});
            p_.slot_offsets.push_back(at);
            p_.workspace_bytes = std::max(p_.workspace_bytes, at + bytes);
        }
    }

    const Expression& e_;
    std::span<const ferro_signature> inputs_;
    int64_t* output_strides_;  // the output layout, when the host lets us choose it
    bool recorded_;
    std::span<const int64_t> output_layout_;
    std::vector<int64_t> size_;
    Program p_;
    Operand output_;
    std::vector<uint64_t> slot_bytes_;
    std::vector<std::pair<size_t, size_t>> slot_life_;
};

// One primitive's view of a compiled View, at this call's addresses.
struct Bases {
    const ferro_exec_args& args;
    const Program& p;
    ferro_tensor_view operator()(const View& v) const {
        ferro_tensor_view t{};
        t.struct_size = sizeof t;
        t.dtype = v.place.kind == Place::input ? p.input_dtypes[static_cast<size_t>(v.place.index)] : p.dtype;
        t.ndim = static_cast<int32_t>(v.shape.size());
        t.shape = v.shape.data();
        t.strides = v.strides.data();
        char* data = nullptr;
        if (v.place.kind == Place::workspace) {
            const auto slot = static_cast<size_t>(v.place.index);
            const uint64_t at = p.slot_offsets[slot];
            if (p.slot_kept[slot]) {
                const ferro_tensor_view& kept = args.residuals[0];
                t.buffer = kept.buffer;
                t.byte_offset = kept.byte_offset + at;
                data = static_cast<char*>(kept.data);
            } else {
                t.buffer = args.workspace.buffer;
                t.byte_offset = args.workspace.byte_offset + at;
                data = static_cast<char*>(args.workspace.data);
            }
            if (data) data += at;
        } else {
            const ferro_tensor_view& base = v.place.kind == Place::input ? args.inputs[v.place.index] : args.outputs[0];
            t.buffer = base.buffer;
            t.byte_offset = base.byte_offset;
            data = static_cast<char*>(base.data);
        }
        t.data = data;
        return t;
    }
    ferro_gemm_operand gemm(const View& v) const {
        const ferro_tensor_view t = (*this)(v);
        return {t.buffer, t.byte_offset, t.data, v.strides[0], v.strides[1], v.strides[2]};
    }
};

bool is_double(ferro_dtype d) { return d == FERRO_DTYPE_F64 || d == FERRO_DTYPE_C128; }

}  // namespace

ferro_dtype result_dtype(std::span<const ferro_signature> inputs) {
    bool complex = false, wide = false;
    for (const auto& s : inputs) {
        complex = complex || plugin::is_complex(s.dtype);
        wide = wide || is_double(s.dtype);
    }
    if (complex) return wide ? FERRO_DTYPE_C128 : FERRO_DTYPE_C64;
    return wide ? FERRO_DTYPE_F64 : FERRO_DTYPE_F32;
}

Network network_of(const Expression& e, std::span<const int64_t> sizes) {
    Network net;
    net.size.assign(sizes.begin(), sizes.end());
    for (const auto& in : e.inputs) {
        std::vector<int> distinct;
        for (int l : in) {
            if (std::find(distinct.begin(), distinct.end(), l) == distinct.end()) distinct.push_back(l);
        }
        net.inputs.push_back(std::move(distinct));
    }
    net.output = e.output;
    return net;
}

Path choose_path(const Network& net, const PathOptions& o) {
    if (o.has_explicit_path) {
        path_cost(net, o.explicit_path);  // validates
        return o.explicit_path;
    }
    if (o.optimize == "greedy") return greedy_path(net);
    if (o.optimize == "optimal") return optimal_path(net, o.objective);
    if (o.optimize == "random-greedy") return random_greedy_path(net, o.random);
    if (o.optimize == "auto") return auto_path(net, o.objective);
    fail("optimize must be auto, greedy, optimal or random-greedy, got \"" + o.optimize + "\"");
}

Program compile(const Expression& e, std::span<const ferro_signature> inputs, const PathOptions& options,
                int64_t* output_strides) {
    return Compiler(e, inputs, options, output_strides).compile();
}

Program compile_slice(const Expression& e, std::span<const ferro_signature> inputs, const Path& path,
                      std::span<const int64_t> output_layout) {
    PathOptions options;
    options.explicit_path = path;
    options.has_explicit_path = true;
    return Compiler(e, inputs, options, nullptr, false, output_layout).compile();
}

Program compile_recorded(const Expression& e, std::span<const ferro_signature> inputs, const PathOptions& options,
                         int64_t* output_strides) {
    Program p = Compiler(e, inputs, options, output_strides, true).compile();
    if (p.values.size() + 2 != inputs.size()) {
        throw plugin::Error(FERRO_INTERNAL, "einsum: the recorded mode needs two steps or more and no label of size 0");
    }
    return p;
}

namespace {

std::string list(const std::vector<int64_t>& v) {
    std::string d = "[";
    for (size_t i = 0; i < v.size(); ++i) d += (i ? ", " : "") + std::to_string(v[i]);
    return d + "]";
}

// "gemm batch 1100 m 144 n 12 k 12, strides a [144, 1, 12] b ... c ..." (batch, row, column) /
// "mul [11, 144] strides [144, 1] [0, 1] -> [144, 1]" / "copy [1100, 11, 144] strides ...": a
// step for the trace log.
std::string describe(const Step& s) {
    static constexpr const char* names[] = {"cast", "copy", "reduce", "mul", "gemm", "zero"};
    std::string d = names[s.kind];
    if (s.kind == Step::gemm) {
        return d + " batch " + std::to_string(s.batch) + " m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " +
               std::to_string(s.k) + ", strides a " + list(s.a.strides) + " b " + list(s.b.strides) + " c " + list(s.out.strides);
    }
    if (s.kind == Step::zero) return d + " " + list(s.out.shape) + " -> " + list(s.out.strides);
    const std::string b = s.kind == Step::mul ? " " + list(s.b.strides) : "";
    return d + " " + list(s.a.shape) + " strides " + list(s.a.strides) + b + " -> " + list(s.out.strides);
}

}  // namespace

bool accumulates_in_place(const Program& p) {
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const bool writes_output = p.steps[i].out.place.kind == Place::output;
        if (writes_output != (i + 1 == p.steps.size())) return false;
    }
    return !p.steps.empty() && p.steps.back().kind == Step::gemm;
}

void run(const Program& p, const ferro_host_api* host, const ferro_exec_args& args, bool accumulate) {
    const Bases at{args, p};
    const ferro_session session = args.session;
    // At trace level each step logs what it was and how long it took to enqueue (on the cpu
    // engine: to run), so a slow network shows which contraction is to blame.
    const bool trace = host->log_enabled(host, FERRO_LOG_TRACE) != 0;
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const Step& s = p.steps[i];
        const auto start = trace ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        ferro_status st = nullptr;
        switch (s.kind) {
            case Step::cast: {
                const ferro_cast_args c{sizeof c, 0, at(s.a), at(s.out)};
                st = host->session_cast(session, &c);
                break;
            }
            case Step::copy: {
                const ferro_copy_args c{sizeof c, 0, at(s.a), at(s.out)};
                st = host->session_copy_strided(session, &c);
                break;
            }
            case Step::reduce: {
                const ferro_reduce_args r{sizeof r, FERRO_REDUCE_SUM, at(s.a), at(s.out)};
                st = host->session_reduce(session, &r);
                break;
            }
            case Step::mul: {
                const ferro_binary_args b{sizeof b, FERRO_BINARY_MUL, at(s.a), at(s.b), at(s.out)};
                st = host->session_binary(session, &b);
                break;
            }
            case Step::zero: {
                const ferro_fill_args f{sizeof f, 0, at(s.out), {}};
                st = host->session_fill(session, &f);
                break;
            }
            case Step::gemm: {
                ferro_gemm_args g{};
                g.struct_size = sizeof g;
                g.dtype = p.dtype;
                g.batch = s.batch;
                g.m = s.m;
                g.n = s.n;
                g.k = s.k;
                g.a = at.gemm(s.a);
                g.b = at.gemm(s.b);
                g.c = at.gemm(s.out);
                g.alpha = {1.0, 0.0, 1};
                const bool add = accumulate && s.out.place.kind == Place::output;
                g.beta = {add ? 1.0 : 0.0, 0.0, add ? 1 : 0};
                st = host->session_gemm_batched(session, &g);
                break;
            }
        }
        plugin::check(host, st);
        if (trace) {
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            plugin::log(host, FERRO_LOG_TRACE, "einsum",
                        "step " + std::to_string(i) + ": " + describe(s) + ", " + std::to_string(ms) + " ms");
        }
    }
}

}  // namespace ferro::einsum
