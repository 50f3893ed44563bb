#include "slicing.hpp"

#include <ferro/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>

namespace ferro::einsum {
namespace {

[[noreturn]] void fail(const std::string& why) { throw plugin::Error(FERRO_INVALID_ARGUMENT, "einsum: " + why); }

constexpr uint64_t kAlignment = 64;
// Widening a slicing looks at the labels of this many of the program's largest slots.
constexpr size_t kWidenSlots = 8;
uint64_t aligned(uint64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

bool contains(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

// The elements of a tensor with `labels` once `sliced` are fixed.
double size_of(const Network& net, const std::vector<int>& labels, const std::vector<int>& sliced = {}) {
    double size = 1;
    for (int l : labels) {
        if (!contains(sliced, l)) size *= net.size[static_cast<size_t>(l)];
    }
    return size;
}

// How far the intermediates are over the target, as one number that slicing a label they
// carry lowers: each one's size over the target (at least 1, so those that fit weigh alike).
double oversize(const SlicedPath& p, const std::vector<int>& sliced, double max_largest) {
    double total = 0;
    for (const auto& r : p.intermediates) total += std::max(size_of(p.net, r, sliced) / std::max(max_largest, 1.0), 1.0);
    return total;
}

// Whether slicing `labels` and `l` stays within kMaxSlices.
bool within_bound(const Network& net, const Slicing& s, int l) {
    return static_cast<double>(s.slices) * net.size[static_cast<size_t>(l)] <= static_cast<double>(kMaxSlices);
}

std::vector<int> with(std::vector<int> v, int l) {
    v.push_back(l);
    return v;
}
std::vector<int> without(std::vector<int> v, int l) {
    v.erase(std::find(v.begin(), v.end(), l));
    return v;
}

class SliceFinder {
public:
    SliceFinder(const SlicedPath& path, double max_largest, int64_t min_slices, uint64_t trial)
        : path_(path),
          net_(path.net),
          max_largest_(max_largest),
          min_slices_(min_slices),
          rng_(trial),
          jitter_(trial < 2 ? 0.0 : 0.5),
          by_cost_(trial % 2 == 1) {
        std::vector<bool> seen(net_.size.size(), false);
        for (const auto& in : net_.inputs) {
            for (int l : in) {
                if (!seen[static_cast<size_t>(l)] && net_.size[static_cast<size_t>(l)] > 1) all_.push_back(l);
                seen[static_cast<size_t>(l)] = true;
            }
        }
        // Labels of intermediates too large unsliced: the only ones whose slicing saves memory.
        for (const auto& r : path.intermediates) {
            if (size_of(net_, r) <= max_largest) continue;
            for (int l : r) {
                if (net_.size[static_cast<size_t>(l)] > 1 && !contains(large_, l)) large_.push_back(l);
            }
        }
    }

    Slicing find() {
        Slicing current = path_.slicing({});
        while (!fits(current)) {
            const std::optional<Slicing> next = current.largest > max_largest_ ? shrink(current) : multiply(current);
            if (!next) break;
            current = *next;
        }
        if (!fits(current)) return current;
        for (int pass = 0; pass < 16; ++pass) {
            if (const auto dropped = drop(current)) {
                current = *dropped;
            } else if (const auto swapped = swap(current)) {
                current = *swapped;
            } else {
                break;
            }
        }
        return current;
    }

private:
    bool fits(const Slicing& s) const { return s.largest <= max_largest_ && s.slices >= min_slices_; }
    // A trial's random weight on a candidate's score (1 on the first trial: plain greedy).
    double noise() const { return 1 + jitter_ * std::uniform_real_distribution<double>(0, 1)(rng_); }

    // The label that costs least per memory removed: the ratio of logarithms of the cost's growth
    // and of the oversize's fall (on odd trials, the least cost among those removing any).
    std::optional<Slicing> shrink(const Slicing& current) const {
        const double before = oversize(path_, current.labels, max_largest_);
        std::optional<Slicing> best;
        double best_score = 0, best_fall = 0;
        for (int l : large_) {
            if (contains(current.labels, l) || !within_bound(net_, current, l)) continue;
            const std::vector<int> labels = with(current.labels, l);
            const double fall = std::log(before / oversize(path_, labels, max_largest_));
            if (!(fall > 0)) continue;
            Slicing trial = path_.slicing(labels);
            const double growth = std::log(trial.cost() / current.cost());
            const double score = (by_cost_ ? growth : growth / fall) * noise();
            if (!best || score < best_score || (score == best_score && fall > best_fall)) {
                best = std::move(trial);
                best_score = score;
                best_fall = fall;
            }
        }
        return best;
    }

    // The label that costs least per slice it adds (the ratio of the logarithms of the cost's
    // growth and of its size), when only the number of slices is short.
    std::optional<Slicing> multiply(const Slicing& current) const {
        std::optional<Slicing> best;
        double best_score = 0;
        for (int l : all_) {
            if (contains(current.labels, l) || !within_bound(net_, current, l)) continue;
            Slicing trial = path_.slicing(with(current.labels, l));
            const double score = std::log(trial.cost() / current.cost()) / std::log(net_.size[static_cast<size_t>(l)]) * noise();
            if (!best || score < best_score || (score == best_score && trial.largest < best->largest)) {
                best = std::move(trial);
                best_score = score;
            }
        }
        return best;
    }

    // A label the others do without, the one whose removal saves the most.
    std::optional<Slicing> drop(const Slicing& current) const {
        std::optional<Slicing> best;
        for (int l : current.labels) {
            Slicing trial = path_.slicing(without(current.labels, l));
            if (fits(trial) && trial.cost() <= current.cost() && (!best || trial.cost() < best->cost())) best = std::move(trial);
        }
        return best;
    }

    // A sliced label traded for another that costs less.
    std::optional<Slicing> swap(const Slicing& current) const {
        const std::vector<int>& candidates = large_.empty() ? all_ : large_;
        std::optional<Slicing> best;
        for (int out : current.labels) {
            for (int in : candidates) {
                if (contains(current.labels, in)) continue;
                Slicing trial = path_.slicing(with(without(current.labels, out), in));
                if (trial.slices > kMaxSlices) continue;
                const double bar = best ? best->cost() : current.cost() * (1 - 1e-9);
                if (fits(trial) && trial.cost() < bar) best = std::move(trial);
            }
        }
        return best;
    }

    const SlicedPath& path_;
    const Network& net_;
    double max_largest_;
    int64_t min_slices_;
    std::vector<int> all_, large_;
    mutable std::mt19937_64 rng_;
    double jitter_;
    bool by_cost_;  // shrink by the least cost alone, as cotengra's SliceFinder, not per memory removed
};

ferro_tensor_view shifted(ferro_tensor_view v, int64_t bytes) {
    v.byte_offset = static_cast<uint64_t>(static_cast<int64_t>(v.byte_offset) + bytes);
    if (v.data != nullptr) v.data = static_cast<char*>(v.data) + bytes;
    v.tensor = nullptr;  // no longer the host tensor's view
    return v;
}

int64_t element_bytes(ferro_dtype d) { return FERRO_DTYPE_BITS(d) / 8; }

}  // namespace

SlicedPath::SlicedPath(const Expression& e, std::span<const std::span<const int64_t>> shapes, const Network& network,
                       const Path& steps)
    : net(network), path(steps) {
    const std::vector<TreeNode> nodes = contraction_tree(e, shapes, steps);
    for (size_t k = e.inputs.size(); k + 1 < nodes.size(); ++k) intermediates.push_back(nodes[k].labels);
}

Slicing SlicedPath::slicing(std::vector<int> labels) const {
    Network one = net;  // one slice: the labels gone from every operand and the output
    const auto drop = [&](std::vector<int>& v) {
        v.erase(std::remove_if(v.begin(), v.end(), [&](int l) { return contains(labels, l); }), v.end());
    };
    for (auto& in : one.inputs) drop(in);
    drop(one.output);
    Slicing s;
    s.slices = static_cast<int64_t>(std::min(size_of(net, labels), static_cast<double>(kMaxSlices) + 1));
    s.flops = path_cost(one, path).flops * static_cast<double>(s.slices);
    for (const auto& r : intermediates) s.largest = std::max(s.largest, size_of(net, r, labels));
    s.labels = std::move(labels);
    return s;
}

Slicing find_slicing(const SlicedPath& path, double max_largest, int64_t min_slices, uint64_t trial) {
    return SliceFinder(path, max_largest, min_slices, trial).find();
}

namespace {

// The program of `slicing` (its labels put in order, the output's first).
SlicedProgram build(const Expression& e, std::span<const ferro_signature> inputs, const Path& path, Slicing slicing,
                    const std::vector<int64_t>& sizes) {
    SlicedProgram p;
    std::stable_partition(slicing.labels.begin(), slicing.labels.end(), [&](int l) { return contains(e.output, l); });
    p.slicing = std::move(slicing);
    const std::vector<int>& labels = p.slicing.labels;
    for (int l : labels) {
        p.sizes.push_back(sizes[static_cast<size_t>(l)]);
        p.in_output.push_back(contains(e.output, l));
    }
    // Each operand with its sliced axes of size 1: one slice of it, at its first index.
    std::vector<ferro_signature> slice(inputs.begin(), inputs.end());
    for (size_t k = 0; k < inputs.size(); ++k) {
        std::vector<int64_t>& steps = p.input_steps.emplace_back(labels.size(), 0);
        for (size_t ax = 0; ax < e.inputs[k].size(); ++ax) {
            const auto at = std::find(labels.begin(), labels.end(), e.inputs[k][ax]) - labels.begin();
            if (at == static_cast<std::ptrdiff_t>(labels.size())) continue;
            if (inputs[k].shape[ax] != 1) steps[static_cast<size_t>(at)] += inputs[k].strides[ax];
            slice[k].shape[ax] = 1;
        }
    }
    // The output is row-major; a slice writes the part its output labels' indices select.
    const size_t rank = e.output.size();
    std::vector<int64_t> strides(rank), part_shape(rank), dense(rank);
    int64_t stride = 1, part = 1;
    for (size_t a = rank; a-- > 0;) {
        const int l = e.output[a];
        strides[a] = stride;
        stride *= sizes[static_cast<size_t>(l)];
        part_shape[a] = contains(labels, l) ? 1 : sizes[static_cast<size_t>(l)];
        dense[a] = part;
        part *= part_shape[a];
    }
    for (int l : labels) {
        const auto at = std::find(e.output.begin(), e.output.end(), l);
        p.output_steps.push_back(at == e.output.end() ? 0 : strides[static_cast<size_t>(at - e.output.begin())]);
    }
    p.direct = compile_slice(e, slice, path, strides);
    p.workspace_bytes = p.direct.workspace_bytes;
    p.in_place = accumulates_in_place(p.direct);
    if (std::find(p.in_output.begin(), p.in_output.end(), false) != p.in_output.end() && !p.in_place) {
        p.partial = compile_slice(e, slice, path, {});
        p.accumulator_offset = aligned(p.partial.workspace_bytes);
        const uint64_t bytes = static_cast<uint64_t>(part * element_bytes(p.direct.dtype));
        p.workspace_bytes = std::max(p.workspace_bytes, p.accumulator_offset + bytes);
        p.part = {{Place::output, 0}, part_shape, strides};
        p.accumulator = {{Place::workspace, 0}, part_shape, dense};
    }
    return p;
}

std::string bytes_str(uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace

SlicedProgram compile_sliced(const Expression& e, std::span<const ferro_signature> inputs, const Path& path,
                             const SliceOptions& options, uint64_t unsliced_workspace) {
    const std::vector<std::span<const int64_t>> shapes = shapes_of(inputs);
    const std::vector<int64_t> sizes = label_sizes(e, shapes);
    const Network net = network_of(e, sizes);
    const SlicedPath sliced(e, shapes, net, path);
    const uint64_t limit = options.memory_limit;
    const double element = static_cast<double>(element_bytes(result_dtype(inputs)));
    const PathCost whole = path_cost(net, path);
    const auto make = [&](Slicing s) {
        SlicedProgram p = build(e, inputs, path, std::move(s), sizes);
        p.unsliced = whole;
        return p;
    };
    const auto fits = [&](const SlicedProgram& p) {
        return (limit == 0 || p.workspace_bytes <= limit) && p.slicing.slices >= options.min_slices &&
               p.slicing.slices <= kMaxSlices;
    };
    // The intermediates first, then what the compiled program holds besides them (packed
    // operands, several values at once), one label at a time.
    const double target = limit > 0 ? std::floor(static_cast<double>(limit) / element) : std::numeric_limits<double>::infinity();
    // The labels of the program's largest slots (and of the accumulator): those whose slicing
    // lowers its working memory.
    const auto candidates_of = [&](const SlicedProgram& p) {
        std::vector<std::pair<double, const std::vector<int>*>> slots;
        for (const Program* program : {&p.direct, &p.partial}) {
            for (const auto& labels : program->slot_labels) {
                slots.emplace_back(size_of(net, labels), &labels);
            }
        }
        std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        std::vector<int> candidates;
        for (size_t s = 0; s < std::min<size_t>(slots.size(), kWidenSlots); ++s) {
            for (int l : *slots[s].second) {
                if (sizes[static_cast<size_t>(l)] > 1 && !contains(candidates, l)) candidates.push_back(l);
            }
        }
        if (!p.partial.steps.empty()) {  // the accumulator
            for (int l : e.output) {
                if (sizes[static_cast<size_t>(l)] > 1 && !contains(p.slicing.labels, l) && !contains(candidates, l)) {
                    candidates.push_back(l);
                }
            }
        }
        return candidates;
    };
    // One more label, compiled: of candidates_of, the one that costs least per working memory
    // removed (the ratio of the logarithms of the cost's growth and of the working memory's
    // fall), as SliceFinder::shrink chooses on intermediates.
    const auto widen = [&](const SlicedProgram& p) {
        std::optional<SlicedProgram> best;
        double best_score = 0;
        for (int l : candidates_of(p)) {
            if (!within_bound(net, p.slicing, l)) continue;
            SlicedProgram q = make(sliced.slicing(with(p.slicing.labels, l)));
            if (q.workspace_bytes >= p.workspace_bytes) continue;
            const double fall = std::log(static_cast<double>(p.workspace_bytes) / static_cast<double>(q.workspace_bytes));
            const double score = std::log(q.slicing.cost() / p.slicing.cost()) / fall;
            if (!best || score < best_score) {
                best_score = score;
                best = std::move(q);
            }
        }
        return best;
    };
    double most = 1;
    for (int64_t size : sizes) most *= static_cast<double>(std::max<int64_t>(size, 1));
    if (static_cast<double>(options.min_slices) > std::min(most, static_cast<double>(kMaxSlices))) {
        fail("slices " + std::to_string(options.min_slices) + " is more than the contraction can be cut into: " +
             std::to_string(static_cast<int64_t>(std::min(most, static_cast<double>(kMaxSlices)))) + " at most");
    }
    // Each trial's greedy choice made to fit the compiled program, then refined; the cheapest
    // that fits wins, else the error names the least working memory any reached.
    std::optional<SlicedProgram> best, least = make(sliced.slicing({}));
    const std::vector<int> candidates = candidates_of(*least);
    for (uint64_t trial = 0; trial < kSliceTrials; ++trial) {
        SlicedProgram p = make(find_slicing(sliced, target, options.min_slices, trial));
        while (!fits(p)) {
            std::optional<SlicedProgram> more = widen(p);
            if (!more) break;
            p = std::move(*more);
        }
        if (!fits(p)) {
            if (p.workspace_bytes < least->workspace_bytes) least = std::move(p);
            continue;
        }
        // Labels the others do without, dropped while that costs no more.
        for (bool dropped = true; dropped;) {
            dropped = false;
            for (int l : p.slicing.labels) {
                SlicedProgram q = make(sliced.slicing(without(p.slicing.labels, l)));
                if (fits(q) && q.slicing.cost() <= p.slicing.cost()) {
                    p = std::move(q);
                    dropped = true;
                    break;
                }
            }
        }
        if (!best || p.slicing.cost() < best->slicing.cost()) best = std::move(p);
        if (best->slicing.labels.empty()) break;  // nothing sliced: nothing cheaper
    }
    if (!best) {
        fail("memory_limit " + bytes_str(limit) + " is below the least working memory found for this contraction: " +
             bytes_str(least->workspace_bytes) + " in " + std::to_string(least->slicing.slices) + " slices (" +
             bytes_str(unsliced_workspace) + " unsliced; at most " + std::to_string(kMaxSlices) + " slices)");
    }
    // The best refined: a label traded for one the unsliced program's largest slots hold, while
    // that fits and costs less.
    SlicedProgram p = std::move(*best);
    for (bool swapped = true; swapped;) {
        swapped = false;
        for (size_t i = 0; i < p.slicing.labels.size() && !swapped; ++i) {
            for (int l : candidates) {
                if (contains(p.slicing.labels, l)) continue;
                SlicedProgram q = make(sliced.slicing(with(without(p.slicing.labels, p.slicing.labels[i]), l)));
                if (fits(q) && q.slicing.cost() < p.slicing.cost() * (1 - 1e-9)) {
                    p = std::move(q);
                    swapped = true;
                    break;
                }
            }
        }
    }
    return p;
}

uint64_t plan_digest(const SlicedProgram& p) {
    uint64_t h = 1469598103934665603ull;
    const auto mix = [&h](int64_t v) { h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull; };
    for (const auto& [i, j] : p.direct.path) mix(i), mix(j);
    for (int l : p.slicing.labels) mix(l);
    for (int64_t s : p.sizes) mix(s);
    mix(p.slicing.slices);
    return h;
}

void run_sliced(const SlicedProgram& p, const ferro_host_api* host, const ferro_exec_args& args, int64_t begin, int64_t end) {
    const size_t n = args.n_inputs, labels = p.sizes.size();
    std::vector<int64_t> index(labels, 0);
    for (size_t j = labels, rest = static_cast<size_t>(begin); j-- > 0;) {  // slice `begin`'s indices
        index[j] = static_cast<int64_t>(rest % static_cast<size_t>(p.sizes[j]));
        rest /= static_cast<size_t>(p.sizes[j]);
    }
    std::vector<ferro_tensor_view> inputs(n);
    ferro_exec_args call = args;
    call.inputs = inputs.data();
    const ferro_tensor_view& output = args.outputs[0];
    const int64_t out_element = element_bytes(output.dtype);
    ferro_tensor_view accumulator = shifted({sizeof(ferro_tensor_view), p.direct.dtype, 0, 0, nullptr, nullptr,
                                             args.workspace.buffer, args.workspace.byte_offset, args.workspace.data, nullptr},
                                            static_cast<int64_t>(p.accumulator_offset));
    accumulator.ndim = static_cast<int32_t>(p.accumulator.shape.size());
    accumulator.shape = p.accumulator.shape.data();
    accumulator.strides = p.accumulator.strides.data();
    for (int64_t s = begin; s < end; ++s) {
        // The first slice into its part of the output (no summed label past 0), or the range's
        // first, which may be past it: it writes, the others add.
        bool first = true;
        int64_t out_offset = 0;
        for (size_t j = 0; j < labels; ++j) {
            first = first && (p.in_output[j] || index[j] == 0 || s == begin);
            out_offset += index[j] * p.output_steps[j];
        }
        for (size_t k = 0; k < n; ++k) {
            int64_t offset = 0;
            for (size_t j = 0; j < labels; ++j) offset += index[j] * p.input_steps[k][j];
            inputs[k] = shifted(args.inputs[k], offset * element_bytes(args.inputs[k].dtype));
        }
        ferro_tensor_view part = shifted(output, out_offset * out_element);
        if (first || p.in_place) {
            call.outputs = &part;
            run(p.direct, host, call, !first);
        } else {
            call.outputs = &accumulator;
            run(p.partial, host, call);
            part.ndim = static_cast<int32_t>(p.part.shape.size());
            part.shape = p.part.shape.data();
            part.strides = p.part.strides.data();
            const ferro_binary_args add{sizeof add, FERRO_BINARY_ADD, part, accumulator, part};
            plugin::check(host, host->session_binary(args.session, &add));
        }
        for (size_t j = labels; j-- > 0;) {  // the last label fastest: a part's summed slices in a row
            if (++index[j] < p.sizes[j]) break;
            index[j] = 0;
        }
    }
}

void plan_workers(SlicedProgram& p, int64_t threads, uint64_t memory_limit, uint64_t output_bytes) {
    const int64_t n = p.slicing.slices / p.ranks;  // this rank's share, about
    if (threads < 2 || n < 2 || p.slicing.flops / static_cast<double>(p.slicing.slices) >= kParallelSliceFlops) return;
    p.parts = 1;
    for (size_t j = 0; j < p.sizes.size(); ++j) p.parts *= p.in_output[j] ? p.sizes[j] : 1;
    const uint64_t region = aligned(p.workspace_bytes);
    for (int64_t w = std::min(threads, n); w > 1; --w) {
        const bool shared = p.ranks > 1 || p.parts < w;
        const uint64_t bytes = static_cast<uint64_t>(w) * region + (shared ? static_cast<uint64_t>(w - 1) * output_bytes : 0);
        if (memory_limit > 0 && bytes > memory_limit) continue;
        p.workers = w;
        p.shared = shared;
        p.region_bytes = region;
        p.output_bytes = output_bytes;
        p.workspace_bytes = bytes;
        return;
    }
}

namespace {

// One worker's slices, in a child session of the call's: its own region of the workspace, and
// its own accumulator when workers share parts.
struct Worker {
    const SlicedProgram* p;
    const ferro_host_api* host;
    const ferro_exec_args* args;
    int64_t begin, end;
};

std::pair<int64_t, int64_t> worker_range(const SlicedProgram& p, int64_t begin, int64_t end, int64_t w) {
    if (p.shared) return {begin + (end - begin) * w / p.workers, begin + (end - begin) * (w + 1) / p.workers};
    const int64_t per_part = p.slicing.slices / p.parts;  // whole parts, so no two workers share one
    return {per_part * (p.parts * w / p.workers), per_part * (p.parts * (w + 1) / p.workers)};
}

ferro_tensor_view accumulator_of(const SlicedProgram& p, const ferro_exec_args& args, int64_t w) {
    ferro_tensor_view out = args.outputs[0];
    out.buffer = args.workspace.buffer;
    out.byte_offset = args.workspace.byte_offset;
    out.data = args.workspace.data;
    return shifted(out, static_cast<int64_t>(static_cast<uint64_t>(p.workers) * p.region_bytes +
                                             static_cast<uint64_t>(w - 1) * p.output_bytes));
}

ferro_status run_worker(void* user, uint32_t w, ferro_session child) {
    const Worker& worker = *static_cast<const Worker*>(user);
    const SlicedProgram& p = *worker.p;
    return plugin::guard(worker.host, [&] {
        ferro_exec_args call = *worker.args;
        call.session = child;
        call.workspace.byte_offset += w * p.region_bytes;
        if (call.workspace.data != nullptr) call.workspace.data = static_cast<char*>(call.workspace.data) + w * p.region_bytes;
        call.workspace.bytes = p.region_bytes;
        const ferro_tensor_view out = p.shared && w > 0 ? accumulator_of(p, *worker.args, w) : worker.args->outputs[0];
        call.outputs = &out;
        const auto [begin, end] = worker_range(p, worker.begin, worker.end, w);
        run_sliced(p, worker.host, call, begin, end);
    });
}

}  // namespace

void run_slices(const SlicedProgram& p, const ferro_host_api* host, const ferro_exec_args& args, int64_t begin, int64_t end) {
    const bool parallel = p.workers > 1 && FERRO_HAS_FIELD(host, ferro_host_api, session_parallel);
    const ferro_tensor_view& output = args.outputs[0];
    const auto zero = [&](const ferro_tensor_view& v) {
        const ferro_fill_args fill{sizeof fill, 0, v, {}};
        plugin::check(host, host->session_fill(args.session, &fill));
    };
    // Zeros where no slice of the range writes first: the parts other ranks compute, and the
    // parts of workers that share them, in the output and in their accumulators.
    const bool shared = parallel && p.shared;
    if (p.ranks > 1 || shared) zero(output);
    for (int64_t w = 1; shared && w < p.workers; ++w) zero(accumulator_of(p, args, w));
    if (!parallel) {
        run_sliced(p, host, args, begin, end);
        return;
    }
    Worker worker{&p, host, &args, begin, end};
    plugin::check(host, host->session_parallel(args.session, static_cast<uint32_t>(p.workers), run_worker, &worker));
    for (int64_t w = 1; p.shared && w < p.workers; ++w) {
        const ferro_tensor_view acc = accumulator_of(p, args, w);
        const ferro_binary_args add{sizeof add, FERRO_BINARY_ADD, output, acc, output};
        plugin::check(host, host->session_binary(args.session, &add));
    }
}

}  // namespace ferro::einsum
