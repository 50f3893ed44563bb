// The fused elementwise kernel: a straight line of unary and binary ops (ferro_fused_args) run
// block by block, each instruction by the unary and binary kernels themselves on one block of
// values, so a fused program computes exactly what its steps compute one by one, while
// temporaries stay in a few blocks of cache instead of going to memory. Operands in other
// layouts than row-major (transposed, broadcast along some axes) are copied in and out per block.
#include "elementwise.hpp"

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace ferro::cpu {
namespace {

constexpr int K = FERRO_FUSED_MAX_OPERANDS;
// Elements per block: the temporaries of a block stay in L1 (512 c128 values: 8 KB each).
constexpr int64_t kBlock = 512;

// Whether an instruction's result has its operands' dtype (a comparison's is bool).
bool keeps_dtype(const ferro_fused_instr& in, ferro_dtype dtype) {
    if (in.kind == FERRO_FUSED_BINARY) return in.op <= FERRO_BINARY_ATAN2;
    const bool complex = dtype == FERRO_DTYPE_C64 || dtype == FERRO_DTYPE_C128;
    switch (in.op) {
        case FERRO_UNARY_ABS:
        case FERRO_UNARY_ANGLE: return !complex;
        case FERRO_UNARY_REAL:
        case FERRO_UNARY_IMAG:
        case FERRO_UNARY_LOGICAL_NOT:
        case FERRO_UNARY_ISNAN:
        case FERRO_UNARY_ISINF:
        case FERRO_UNARY_ISFINITE: return false;
        default: return true;
    }
}

ferro_status check_program(const Engine& e, const ferro_fused_args& a) {
    const uint64_t values = uint64_t{a.n_inputs} + a.n_outputs + a.n_temps;
    if (a.n_outputs == 0 || a.n_inputs + a.n_outputs > K || values > UINT16_MAX) {
        return unsupported(e, "elementwise_fused",
                           "a program with " + std::to_string(a.n_inputs) + " inputs, " + std::to_string(a.n_outputs) +
                               " outputs and " + std::to_string(a.n_temps) + " temporaries");
    }
    const ferro_tensor_view& out = a.outputs[0];
    const auto same_shape = [&](const ferro_tensor_view& v) {
        return v.ndim == out.ndim && std::equal(v.shape, v.shape + v.ndim, out.shape) && v.dtype == a.dtype;
    };
    for (uint32_t i = 0; i < a.n_inputs; ++i) {
        if (!same_shape(a.inputs[i])) return unsupported(e, "elementwise_fused", "an input not of the outputs' shape and dtype");
    }
    for (uint32_t i = 0; i < a.n_outputs; ++i) {
        if (!same_shape(a.outputs[i])) return unsupported(e, "elementwise_fused", "outputs of different shapes or dtypes");
    }
    for (uint32_t k = 0; k < a.n_instrs; ++k) {
        const ferro_fused_instr& in = a.instrs[k];
        const bool binary = in.kind == FERRO_FUSED_BINARY;
        if ((in.kind != FERRO_FUSED_UNARY && !binary) || in.dst < a.n_inputs || in.dst >= values || in.a >= values ||
            (binary && in.b >= values)) {
            return unsupported(e, "elementwise_fused", "instruction " + std::to_string(k) + " (a kind or value out of range)");
        }
        if (!keeps_dtype(in, a.dtype)) {
            return unsupported(e, "elementwise_fused", "instruction " + std::to_string(k) + ", whose op changes the dtype");
        }
    }
    return nullptr;
}

// How a block of an operand is reached: in place (row-major dense: linear index i is element
// i; or one value broadcast everywhere), or through a dense copy (any other layout).
enum class Access : uint8_t { dense, scalar, copied };

Access access_of(const ferro_tensor_view& v) {
    if (is_dense(v)) return Access::dense;
    if (std::all_of(v.strides, v.strides + v.ndim, [](int64_t s) { return s == 0; })) return Access::scalar;
    return Access::copied;
}

// Copies n elements of Item bytes from `from` (byte stride `from_stride`) to `to` (`to_stride`).
template <size_t Item> void copy_run(const char* from, int64_t from_stride, char* to, int64_t to_stride, int64_t n) {
    if (from_stride == int64_t(Item) && to_stride == int64_t(Item)) {
        std::memcpy(to, from, static_cast<size_t>(n) * Item);
        return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(to + i * to_stride, from + i * from_stride, Item);
}

void copy_run(int64_t item, const char* from, int64_t from_stride, char* to, int64_t to_stride, int64_t n) {
    switch (item) {
        case 4: return copy_run<4>(from, from_stride, to, to_stride, n);
        case 8: return copy_run<8>(from, from_stride, to, to_stride, n);
        case 16: return copy_run<16>(from, from_stride, to, to_stride, n);
        default:
            for (int64_t i = 0; i < n; ++i) std::memcpy(to + i * to_stride, from + i * from_stride, static_cast<size_t>(item));
    }
}

// Moves `len` elements between a strided operand (its StridedLoop, from linear index `begin`)
// and a dense block.
void gather(const StridedLoop<1>& loop, int64_t begin, int64_t len, int64_t item, char* block) {
    loop.run(begin, begin + len, [&](const std::array<char*, 1>& p, int64_t n, const std::array<int64_t, 1>& s) {
        copy_run(item, p[0], s[0], block, item, n);
        block += n * item;
    });
}
void scatter(const StridedLoop<1>& loop, int64_t begin, int64_t len, int64_t item, const char* block) {
    loop.run(begin, begin + len, [&](const std::array<char*, 1>& p, int64_t n, const std::array<int64_t, 1>& s) {
        copy_run(item, block, item, p[0], s[0], n);
        block += n * item;
    });
}

// Runs the program over linear indices of the outputs' shape, block by block: each value of a
// block is a one-dimensional view (dense, or stride 0 for a broadcast value) that the unary and
// binary kernels take as they take any tensor.
class Interpreter {
public:
    Interpreter(Engine& e, const ferro_fused_args& a)
        : e_(e), a_(a), item_(itemsize(a.dtype)), operands_(a.n_inputs + a.n_outputs), values_(operands_ + a.n_temps) {
        const ferro_tensor_view& out = a.outputs[0];
        for (uint32_t v = 0; v < operands_; ++v) {
            const ferro_tensor_view& op = v < a.n_inputs ? a.inputs[v] : a.outputs[v - a.n_inputs];
            access_[v] = access_of(op);
            base_[v] = static_cast<char*>(op.data);
            if (access_[v] == Access::copied) {
                loop_of_[v] = static_cast<uint8_t>(loops_.size());
                loops_.emplace_back(out.ndim, out.shape, std::array{op.strides}, std::array{base_[v]}, std::array{item_});
            }
        }
        for (uint32_t v = 0; v < values_.size(); ++v) {
            ferro_tensor_view& view = values_[v];
            view.struct_size = sizeof view;
            view.dtype = a.dtype;
            view.ndim = 1;
            view.shape = &length_;
            view.strides = v < operands_ && access_[v] == Access::scalar ? &kZero : &kOne;
        }
    }

    ferro_status run(int64_t begin, int64_t end) {
        // The temporaries' and copied operands' blocks, kept by each thread from call to call.
        thread_local std::vector<char> scratch;
        const auto need = static_cast<size_t>((a_.n_temps + loops_.size()) * kBlock * item_);
        if (scratch.size() < need) scratch.resize(need);
        char* next = scratch.data();
        for (uint32_t v = 0; v < values_.size(); ++v) {
            if (v >= operands_ || access_[v] == Access::copied) {
                values_[v].data = next;
                next += kBlock * item_;
            }
        }
        for (int64_t at = begin; at < end; at += kBlock) {
            if (ferro_status st = block(at, std::min(kBlock, end - at))) return st;
        }
        return nullptr;
    }

private:
    ferro_status block(int64_t at, int64_t len) {
        length_ = len;
        for (uint32_t v = 0; v < operands_; ++v) {
            if (access_[v] == Access::dense) values_[v].data = base_[v] + at * item_;
            else if (access_[v] == Access::scalar) values_[v].data = base_[v];
            else if (v < a_.n_inputs) gather(loops_[loop_of_[v]], at, len, item_, static_cast<char*>(values_[v].data));
        }
        for (uint32_t k = 0; k < a_.n_instrs; ++k) {
            const ferro_fused_instr& in = a_.instrs[k];
            ferro_status st;
            if (in.kind == FERRO_FUSED_UNARY) {
                const ferro_unary_args u{sizeof u, in.op, values_[in.a], values_[in.dst]};
                st = unary(e_, u);
            } else {
                const ferro_binary_args b{sizeof b, in.op, values_[in.a], values_[in.b], values_[in.dst]};
                st = binary(e_, b);
            }
            if (st != nullptr) return st;
        }
        for (uint32_t v = a_.n_inputs; v < operands_; ++v) {
            if (access_[v] == Access::copied) {
                scatter(loops_[loop_of_[v]], at, len, item_, static_cast<const char*>(values_[v].data));
            }
        }
        return nullptr;
    }

    static constexpr int64_t kOne = 1, kZero = 0;
    Engine& e_;
    const ferro_fused_args& a_;
    int64_t item_;
    uint32_t operands_;
    int64_t length_ = 0;  // of the current block: every view's shape
    std::array<Access, K> access_{};
    std::array<char*, K> base_{};
    std::array<uint8_t, K> loop_of_{};   // a copied operand's loop, in loops_
    std::vector<StridedLoop<1>> loops_;  // made only for the copied operands (each is 1 KB)
    // Inputs, outputs, temporaries: on the stack for the usual program.
    boost::container::small_vector<ferro_tensor_view, 2 * K> values_;
};

}  // namespace

ferro_status elementwise_fused(Engine& e, const ferro_fused_args& a) {
    if (ferro_status st = check_program(e, a)) return st;
    const int64_t n = numel_of(a.outputs[0]);
    if (n < kParallelThreshold) return Interpreter(e, a).run(0, n);
    std::mutex mutex;
    ferro_status failed = nullptr;
    e.pool->parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
        ferro_status st = Interpreter(e, a).run(begin, end);
        if (st == nullptr) return;
        const std::lock_guard lock(mutex);
        if (failed == nullptr) failed = st;
        else e.host->status_free(st);
    });
    return failed;
}

}  // namespace ferro::cpu
