// The primitive kernels: each picks a shader variant for its dtypes (or declines with the
// reason), packs the argument block common.glsl reads, and records one dispatch.
#include "engine.hpp"

#include <ferro/rules.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <span>
#include <vector>

namespace ferro::vk {
namespace {

// llvmpipe (lavapipe) ends a shader's loop nest after 65535 iterations, silently: kernels keep
// an invocation's loops well under that, splitting longer work over dispatches.
constexpr uint64_t kLoopIterations = 16384;

// The fixed part of a dispatch's argument block; `Args` in shaders/common.glsl.
struct ArgsHeader {
    uint64_t numel = 0;
    uint64_t address[4] = {};
    int64_t ndim = 0;
    int64_t wide = 0;
    int64_t value_i = 0;
    float value_f[4] = {};
    uint64_t value_bits[4] = {};
};
static_assert(sizeof(ArgsHeader) == 112, "must match Args in shaders/common.glsl");

// A header followed by int64 dims, as one byte block, and where it holds buffer addresses (for
// a recorded session: engine.hpp, ArgAddress).
class ArgsBlock {
public:
    ArgsHeader header;
    std::vector<int64_t> dims;
    ArgAddresses addresses;

    // header.address[i]: `byte_offset` into `buffer`.
    void set_address(size_t i, ferro_buffer buffer, uint64_t byte_offset) {
        header.address[i] = note(offsetof(ArgsHeader, address) + i * sizeof(uint64_t), buffer) + byte_offset;
    }
    // Appends to dims the address `byte_offset` into `buffer`.
    void push_address(ferro_buffer buffer, uint64_t byte_offset) {
        const uint64_t base = note(sizeof header + dims.size() * sizeof(int64_t), buffer);
        dims.push_back(static_cast<int64_t>(base + byte_offset));
    }

    std::vector<unsigned char> bytes() const {
        std::vector<unsigned char> out(sizeof header + dims.size() * sizeof(int64_t));
        std::memcpy(out.data(), &header, sizeof header);
        if (!dims.empty()) std::memcpy(out.data() + sizeof header, dims.data(), dims.size() * sizeof(int64_t));
        return out;
    }

    void set_scalar(int i, double re) {
        header.value_f[i] = static_cast<float>(re);
        std::memcpy(&header.value_bits[i], &re, sizeof re);
    }

private:
    // Notes that the block holds an address into `buffer` at byte `at`; returns the buffer's address.
    uint64_t note(size_t at, ferro_buffer buffer) {
        const auto* source = reinterpret_cast<const Allocation*>(buffer);
        addresses.fields.at(addresses.n++) = {static_cast<uint32_t>(at), source};
        return source->address();
    }
};

// "f32", ... "bool": the shader variants' suffixes are the dtype attribute names.
const char* suffix_of(ferro_dtype dt) {
    const char* name = plugin::dtype_attr_name(dt);
    return std::strcmp(name, "invalid") == 0 ? nullptr : name;
}

bool is_complex(ferro_dtype dt) { return dt == FERRO_DTYPE_C64 || dt == FERRO_DTYPE_C128; }
bool is_real_float(ferro_dtype dt) { return dt == FERRO_DTYPE_F32 || dt == FERRO_DTYPE_F64; }
bool is_double(ferro_dtype dt) { return dt == FERRO_DTYPE_F64 || dt == FERRO_DTYPE_C128; }

ferro_status unsupported(const SessionState& s, const std::string& kernel, const std::string& what) {
    return make_status(*s.engine, FERRO_UNIMPLEMENTED, kernel + " does not support " + what);
}

// "<kernel> does not support op <op> on <dtype>".
ferro_status unsupported_op(const SessionState& s, const char* kernel, uint32_t op, const char* dtype) {
    return unsupported(s, kernel, "op " + std::to_string(op) + " on " + dtype);
}

// Whether the device can hold `dt` at all (f64/c128 need shaderFloat64, bool 8-bit storage).
ferro_status check_dtype(const SessionState& s, const char* kernel, ferro_dtype dt) {
    const PhysicalDevice& d = s.engine->physical;
    const char* name = suffix_of(dt);
    if (name == nullptr) return unsupported(s, kernel, "this dtype");
    if (is_double(dt) && !d.float64) {
        return unsupported(s, kernel, std::string(name) + " on " + s.engine->name + " (no shaderFloat64)");
    }
    if (dt == FERRO_DTYPE_BOOL && !d.int8_storage) {
        return unsupported(s, kernel, "bool on " + s.engine->name + " (no 8-bit storage)");
    }
    return nullptr;
}

// Elementwise iteration over `views[0]`'s shape: size-1 axes dropped and adjacent axes merged
// where every operand is contiguous across them, then dims = shape, each operand's strides.
void merge_dims(ArgsBlock& args, std::span<const ferro_tensor_view* const> views) {
    const ferro_tensor_view& out = *views.front();
    const size_t k = views.size();
    std::vector<int64_t> shape;
    std::vector<std::vector<int64_t>> strides(k);
    uint64_t numel = 1;
    for (int d = 0; d < out.ndim; ++d) {
        numel *= static_cast<uint64_t>(out.shape[d]);
        if (out.shape[d] == 1) continue;
        bool merge = !shape.empty();
        size_t j = 0;
        for (const ferro_tensor_view* v : views) {
            if (merge && strides[j].back() != v->strides[d] * out.shape[d]) merge = false;
            ++j;
        }
        j = 0;
        if (merge) {
            shape.back() *= out.shape[d];
            for (const ferro_tensor_view* v : views) strides[j++].back() = v->strides[d];
        } else {
            shape.push_back(out.shape[d]);
            for (const ferro_tensor_view* v : views) strides[j++].push_back(v->strides[d]);
        }
    }
    args.header.numel = numel;
    args.header.ndim = static_cast<int64_t>(shape.size());
    args.header.wide = numel > (uint64_t{1} << 31) ? 1 : 0;
    args.dims = shape;
    for (const auto& s : strides) args.dims.insert(args.dims.end(), s.begin(), s.end());
}

void set_elementwise_dims(ArgsBlock& args, std::initializer_list<const ferro_tensor_view*> views) {
    merge_dims(args, {views.begin(), views.size()});
    size_t j = 0;
    for (const ferro_tensor_view* v : views) {
        args.set_address(j, v->buffer, v->byte_offset);
        ++j;
    }
}

uint32_t groups_for(uint64_t invocations) {
    return static_cast<uint32_t>(std::clamp<uint64_t>((invocations + kGroupSize - 1) / kGroupSize, 1, 65535));
}

ferro_status run(SessionState& s, const std::string& shader, uint32_t op, const ArgsBlock& args, std::array<uint32_t, 3> groups) {
    std::string why;
    const VkPipeline p = s.engine->pipelines->get(shader, op, why);
    if (p == VK_NULL_HANDLE) return make_status(*s.engine, FERRO_INTERNAL, why);
    const std::vector<unsigned char> bytes = args.bytes();
    return dispatch(s, p, bytes.data(), bytes.size(), groups, args.addresses);
}

ferro_status run_elementwise(SessionState& s, const std::string& shader, uint32_t op, ArgsBlock& args,
                             std::initializer_list<const ferro_tensor_view*> views) {
    set_elementwise_dims(args, views);
    if (args.header.numel == 0) return nullptr;
    return run(s, shader, op, args, {groups_for(args.header.numel), 1, 1});
}

// ---- which (op, dtype) pairs the shaders implement ---------------------------------------

// GLSL has exp, log, sin, ... for float only: f64 has our exp and log and what is built on
// them (f64_has); the rest of these, and all of them on c128, are not available yet.
bool transcendental(uint32_t op) {
    switch (op) {
        case FERRO_UNARY_EXP:
        case FERRO_UNARY_LOG:
        case FERRO_UNARY_SIN:
        case FERRO_UNARY_COS:
        case FERRO_UNARY_TAN:
        case FERRO_UNARY_TANH:
        case FERRO_UNARY_EXPM1:
        case FERRO_UNARY_LOG1P:
        case FERRO_UNARY_SINH:
        case FERRO_UNARY_COSH:
        case FERRO_UNARY_ASIN:
        case FERRO_UNARY_ACOS:
        case FERRO_UNARY_ATAN:
        case FERRO_UNARY_SIGMOID:
        case FERRO_UNARY_ERF: return true;
        default: return false;
    }
}

bool to_bool_unary(uint32_t op) {
    return op == FERRO_UNARY_LOGICAL_NOT || op == FERRO_UNARY_ISNAN || op == FERRO_UNARY_ISINF || op == FERRO_UNARY_ISFINITE;
}

// The variant for a unary op on `dt`, or empty when there is none.
std::string unary_shader(uint32_t op, ferro_dtype dt) {
    const std::string sfx = suffix_of(dt);
    if (to_bool_unary(op)) return "unary_bool_" + sfx;
    // Double precision has the engine's own functions (double_math.glsl): GLSL has none.
    if (is_complex(dt)) {
        if (op == FERRO_UNARY_ABS || op == FERRO_UNARY_REAL || op == FERRO_UNARY_IMAG || op == FERRO_UNARY_ANGLE) {
            return "unary_real_" + sfx;
        }
        const bool ok = op == FERRO_UNARY_NEG || op == FERRO_UNARY_CONJ || op == FERRO_UNARY_SQRT || op == FERRO_UNARY_RSQRT ||
                        op == FERRO_UNARY_SIGN || op == FERRO_UNARY_RECIPROCAL || op == FERRO_UNARY_SQUARE ||
                        (transcendental(op) && op != FERRO_UNARY_ERF);
        return ok ? "unary_" + sfx : std::string();
    }
    if (is_real_float(dt)) {
        const bool ok = op == FERRO_UNARY_NEG || op == FERRO_UNARY_CONJ || op == FERRO_UNARY_ABS || op == FERRO_UNARY_SQRT ||
                        op == FERRO_UNARY_RSQRT || op == FERRO_UNARY_SIGN || op == FERRO_UNARY_RECIPROCAL ||
                        op == FERRO_UNARY_SQUARE || op == FERRO_UNARY_FLOOR || op == FERRO_UNARY_CEIL ||
                        op == FERRO_UNARY_ROUND || op == FERRO_UNARY_ANGLE || transcendental(op);
        return ok ? "unary_" + sfx : std::string();
    }
    if (dt == FERRO_DTYPE_I64) {
        const bool ok = op == FERRO_UNARY_NEG || op == FERRO_UNARY_CONJ || op == FERRO_UNARY_ABS || op == FERRO_UNARY_SIGN ||
                        op == FERRO_UNARY_SQUARE;
        return ok ? "unary_i64" : std::string();
    }
    return {};
}

std::string binary_shader(uint32_t op, ferro_dtype dt) {
    const std::string sfx = suffix_of(dt);
    if (op >= FERRO_BINARY_EQ && op <= FERRO_BINARY_LOGICAL_OR) {
        const bool ordered = op >= FERRO_BINARY_LT && op <= FERRO_BINARY_GE;
        return is_complex(dt) && ordered ? std::string() : "binary_cmp_" + sfx;
    }
    if (op == FERRO_BINARY_COMPLEX) return is_real_float(dt) ? "binary_complex_" + sfx : std::string();
    if (dt == FERRO_DTYPE_BOOL) return {};
    if (op == FERRO_BINARY_MAXIMUM || op == FERRO_BINARY_MINIMUM) return is_complex(dt) ? std::string() : "binary_" + sfx;
    if (op == FERRO_BINARY_ATAN2) return is_real_float(dt) ? "binary_" + sfx : std::string();
    return op <= FERRO_BINARY_POW ? "binary_" + sfx : std::string();
}

}  // namespace

ferro_status fill(SessionState& s, const ferro_fill_args& a) {
    if (ferro_status st = check_dtype(s, "fill", a.out.dtype)) return st;
    ArgsBlock args;
    args.set_scalar(0, a.value.real);
    args.set_scalar(1, a.value.imag);
    args.header.value_i = a.out.dtype == FERRO_DTYPE_BOOL ? (a.value.integer != 0 ? 1 : 0) : a.value.integer;
    return run_elementwise(s, std::string("fill_") + suffix_of(a.out.dtype), 0, args, {&a.out});
}

ferro_status copy_strided(SessionState& s, const ferro_copy_args& a) {
    if (a.in.dtype != a.out.dtype) return unsupported(s, "copy_strided", "different dtypes");
    if (ferro_status st = check_dtype(s, "copy_strided", a.out.dtype)) return st;
    const int64_t bytes = FERRO_DTYPE_BITS(a.out.dtype) / 8;
    ArgsBlock args;
    return run_elementwise(s, "copy_b" + std::to_string(bytes), 0, args, {&a.out, &a.in});
}

ferro_status cast(SessionState& s, const ferro_cast_args& a) {
    if (ferro_status st = check_dtype(s, "cast", a.out.dtype)) return st;
    if (ferro_status st = check_dtype(s, "cast", a.in.dtype)) return st;
    ArgsBlock args;
    return run_elementwise(s, std::string("cast_") + suffix_of(a.out.dtype) + "_" + suffix_of(a.in.dtype), 0, args,
                           {&a.out, &a.in});
}

ferro_status unary(SessionState& s, const ferro_unary_args& a) {
    if (ferro_status st = check_dtype(s, "unary", a.in.dtype)) return st;
    const std::string shader = unary_shader(a.op, a.in.dtype);
    if (shader.empty()) return unsupported_op(s, "unary", a.op, suffix_of(a.in.dtype));
    ArgsBlock args;
    return run_elementwise(s, shader, a.op, args, {&a.out, &a.in});
}

ferro_status binary(SessionState& s, const ferro_binary_args& a) {
    if (a.a.dtype != a.b.dtype) return unsupported(s, "binary", "operands of different dtypes");
    if (ferro_status st = check_dtype(s, "binary", a.a.dtype)) return st;
    const std::string shader = binary_shader(a.op, a.a.dtype);
    if (shader.empty()) return unsupported_op(s, "binary", a.op, suffix_of(a.a.dtype));
    ArgsBlock args;
    return run_elementwise(s, shader, a.op, args, {&a.out, &a.a, &a.b});
}

ferro_status where(SessionState& s, const ferro_where_args& a) {
    if (a.cond.dtype != FERRO_DTYPE_BOOL || a.a.dtype != a.out.dtype || a.b.dtype != a.out.dtype) {
        return unsupported(s, "where", "these dtypes (cond must be bool, a and b the output's dtype)");
    }
    if (ferro_status st = check_dtype(s, "where", a.out.dtype)) return st;
    if (ferro_status st = check_dtype(s, "where", FERRO_DTYPE_BOOL)) return st;
    ArgsBlock args;
    return run_elementwise(s, std::string("where_") + suffix_of(a.out.dtype), 0, args, {&a.out, &a.cond, &a.a, &a.b});
}

// Kept axes (out.shape[d] == in.shape[d]) iterate over the outputs; reduced axes (out 1, in
// not) are walked by each output's reduction.
ferro_status reduce(SessionState& s, const ferro_reduce_args& a) {
    if (ferro_status st = check_dtype(s, "reduce", a.in.dtype)) return st;
    const bool to_bool = a.op == FERRO_REDUCE_ANY || a.op == FERRO_REDUCE_ALL;
    const bool ordered = a.op == FERRO_REDUCE_MAX || a.op == FERRO_REDUCE_MIN;
    if (a.op > FERRO_REDUCE_ALL || (ordered && is_complex(a.in.dtype)) || (!to_bool && a.in.dtype == FERRO_DTYPE_BOOL)) {
        return unsupported_op(s, "reduce", a.op, suffix_of(a.in.dtype));
    }
    std::vector<int64_t> kept_shape, kept_out, kept_in, red_shape, red_in;
    uint64_t outputs = 1, count = 1;
    for (int d = 0; d < a.in.ndim; ++d) {
        if (a.in.shape[d] == 1 && a.out.shape[d] == 1) continue;
        if (a.out.shape[d] == 1) {
            red_shape.push_back(a.in.shape[d]);
            red_in.push_back(a.in.strides[d]);
            count *= static_cast<uint64_t>(a.in.shape[d]);
        } else {
            kept_shape.push_back(a.out.shape[d]);
            kept_out.push_back(a.out.strides[d]);
            kept_in.push_back(a.in.strides[d]);
            outputs *= static_cast<uint64_t>(a.out.shape[d]);
        }
    }
    if (outputs == 0) return nullptr;
    ArgsBlock args;
    args.header.numel = outputs;
    args.header.ndim = static_cast<int64_t>(kept_shape.size());
    args.header.wide = outputs > (uint64_t{1} << 31) || count > (uint64_t{1} << 31) ? 1 : 0;
    args.header.value_i = static_cast<int64_t>(count);
    args.set_address(0, a.out.buffer, a.out.byte_offset);
    args.set_address(1, a.in.buffer, a.in.byte_offset);
    for (const auto* part : {&kept_shape, &kept_out, &kept_in}) args.dims.insert(args.dims.end(), part->begin(), part->end());
    args.dims.push_back(static_cast<int64_t>(red_shape.size()));
    args.dims.insert(args.dims.end(), red_shape.begin(), red_shape.end());
    args.dims.insert(args.dims.end(), red_in.begin(), red_in.end());
    // Few elements per output, or many outputs: one invocation each; else a workgroup each.
    const bool per_invocation = count <= 64 || outputs >= 4096;
    const uint32_t op = a.op | (per_invocation ? 256u : 0u);
    const std::string shader = std::string(to_bool ? "reduce_bool_" : "reduce_") + suffix_of(a.in.dtype);
    const uint32_t groups = per_invocation ? groups_for(outputs) : static_cast<uint32_t>(std::min<uint64_t>(outputs, 65535));
    // Each dispatch combines a part of the reduced elements, the later ones into the output
    // (range and flag at the end of dims): an invocation's loops stay within kLoopIterations
    // (the reduced-offset loop and the loop over outputs nested in them count too).
    const uint64_t invocations = uint64_t{groups} * (per_invocation ? kGroupSize : 1);
    const uint64_t output_rounds = (outputs + invocations - 1) / invocations;
    const uint64_t per_invocation_budget = std::max<uint64_t>(1, kLoopIterations / ((1 + red_shape.size()) * output_rounds));
    const uint64_t part = per_invocation ? per_invocation_budget : per_invocation_budget * kGroupSize;
    const size_t range_at = args.dims.size();
    args.dims.insert(args.dims.end(), {0, 0, 0});
    uint64_t begin = 0;
    do {  // once at least: an empty reduction writes the identity
        args.dims[range_at] = static_cast<int64_t>(begin);
        args.dims[range_at + 1] = static_cast<int64_t>(std::min(count, begin + part));
        args.dims[range_at + 2] = begin > 0 ? 1 : 0;
        if (ferro_status st = run(s, shader, op, args, {groups, 1, 1})) return st;
        begin += part;
    } while (begin < count);
    return nullptr;
}

ferro_status gemm_batched(SessionState& s, const ferro_gemm_args& g) {
    if (ferro_status st = check_dtype(s, "gemm_batched", g.dtype)) return st;
    if (g.dtype == FERRO_DTYPE_I64 || g.dtype == FERRO_DTYPE_BOOL) return unsupported(s, "gemm_batched", suffix_of(g.dtype));
    if (g.batch < 0 || g.m < 0 || g.n < 0 || g.k < 0) return unsupported(s, "gemm_batched", "negative sizes");
    if (g.batch == 0 || g.m == 0 || g.n == 0) return nullptr;
    constexpr int64_t kTile = 64, kMaxGroups = 65535, kMaxSide = INT32_MAX;
    if (g.m > kMaxSide || g.n > kMaxSide || g.k > kMaxSide || g.batch > kMaxSide) {
        return unsupported(s, "gemm_batched", "a side or batch of 2^31 or more");
    }
    const int64_t gx = (g.n + kTile - 1) / kTile, gy = (g.m + kTile - 1) / kTile;
    if (gx > kMaxGroups || gy > kMaxGroups) return unsupported(s, "gemm_batched", "matrices with more than 4M rows or columns");
    // The k loop in parts of kLoopIterations (the tiled shader's steps over k run inner loops
    // too: a part is a sixteenth of the small shader's; the batch loop nests it), each part
    // after the first adding to C (beta 1).
    const int64_t elements = g.m * g.n;
    const bool small = (g.m < 32 || g.n < 32) && elements <= kMaxGroups * 64;  // skinny: one invocation per element
    const int64_t batch_rounds = (g.batch + kMaxGroups - 1) / kMaxGroups;
    const int64_t part = std::max<int64_t>(16, static_cast<int64_t>(kLoopIterations) / (small ? 1 : 16) / batch_rounds);
    const int64_t item = FERRO_DTYPE_BITS(g.dtype) / 8;
    const std::string shader = std::string(small ? "gemm_small_" : "gemm_") + suffix_of(g.dtype);
    const std::array<uint32_t, 3> groups = small
                                               ? std::array<uint32_t, 3>{static_cast<uint32_t>((elements + 63) / 64),
                                                                         static_cast<uint32_t>(std::min(g.batch, kMaxGroups)), 1}
                                               : std::array<uint32_t, 3>{static_cast<uint32_t>(gx), static_cast<uint32_t>(gy),
                                                                         static_cast<uint32_t>(std::min(g.batch, kMaxGroups))};
    int64_t k0 = 0;
    do {  // once at least: k = 0 writes beta C
        const bool first = k0 == 0;
        ArgsBlock args;
        args.header.numel = static_cast<uint64_t>(g.batch);
        args.set_address(0, g.c.buffer, g.c.byte_offset);
        args.set_address(1, g.a.buffer, g.a.byte_offset + static_cast<uint64_t>(k0 * g.a.col_stride * item));
        args.set_address(2, g.b.buffer, g.b.byte_offset + static_cast<uint64_t>(k0 * g.b.row_stride * item));
        args.dims = {g.m,
                     g.n,
                     std::min(g.k - k0, part),
                     g.a.batch_stride,
                     g.a.row_stride,
                     g.a.col_stride,
                     g.b.batch_stride,
                     g.b.row_stride,
                     g.b.col_stride,
                     g.c.batch_stride,
                     g.c.row_stride,
                     g.c.col_stride,
                     g.conj_a ? 1 : 0,
                     g.conj_b ? 1 : 0};
        args.set_scalar(0, g.alpha.real);
        args.set_scalar(1, g.alpha.imag);
        args.set_scalar(2, first ? g.beta.real : 1.0);
        args.set_scalar(3, first ? g.beta.imag : 0.0);
        if (ferro_status st = run(s, shader, 0, args, groups)) return st;
        k0 += part;
    } while (k0 < g.k);
    return nullptr;
}

// The program's values live in the shader's registers (fused.comp, MAX_VALUES); each instruction
// must be one the dtype-keeping unary or binary variant has.
ferro_status elementwise_fused(SessionState& s, const ferro_fused_args& a) {
    constexpr uint32_t kMaxValues = FERRO_FUSED_MAX_VALUES;
    if (ferro_status st = check_dtype(s, "elementwise_fused", a.dtype)) return st;
    const std::string sfx = suffix_of(a.dtype);
    if (a.dtype == FERRO_DTYPE_BOOL) return unsupported(s, "elementwise_fused", "bool");
    const uint64_t operands = uint64_t{a.n_inputs} + a.n_outputs, values = operands + a.n_temps;
    if (a.n_outputs == 0 || operands > FERRO_FUSED_MAX_OPERANDS || values > kMaxValues) {
        return unsupported(s, "elementwise_fused",
                           "a program with " + std::to_string(a.n_inputs) + " inputs, " + std::to_string(a.n_outputs) +
                               " outputs and " + std::to_string(a.n_temps) + " temporaries (at most " +
                               std::to_string(FERRO_FUSED_MAX_OPERANDS) + " operands and " + std::to_string(kMaxValues) +
                               " values)");
    }
    ArgsBlock args;
    std::vector<const ferro_tensor_view*> views;
    for (uint32_t i = 0; i < a.n_inputs; ++i) views.push_back(&a.inputs[i]);
    for (uint32_t i = 0; i < a.n_outputs; ++i) views.push_back(&a.outputs[i]);
    for (const ferro_tensor_view* v : views) {
        if (v->dtype != a.dtype || v->ndim != a.outputs[0].ndim ||
            !std::equal(v->shape, v->shape + v->ndim, a.outputs[0].shape)) {
            return unsupported(s, "elementwise_fused", "operands of another dtype or shape than the outputs'");
        }
    }
    std::vector<int64_t> program;
    for (uint32_t j = 0; j < a.n_instrs; ++j) {
        const ferro_fused_instr& in = a.instrs[j];
        const bool binary = in.kind == FERRO_FUSED_BINARY;
        if ((in.kind != FERRO_FUSED_UNARY && !binary) || in.dst < a.n_inputs || in.dst >= values || in.a >= values ||
            (binary && in.b >= values)) {
            return make_status(*s.engine, FERRO_INVALID_ARGUMENT,
                               "elementwise_fused: instruction " + std::to_string(j) + " is malformed");
        }
        const std::string variant = binary ? binary_shader(in.op, a.dtype) : unary_shader(in.op, a.dtype);
        if (variant != (binary ? "binary_" : "unary_") + sfx) {
            return unsupported_op(s, binary ? "binary" : "unary", in.op, sfx.c_str());
        }
        program.push_back(static_cast<int64_t>(uint64_t{in.kind} | uint64_t{in.op} << 8 | uint64_t{in.dst} << 24 |
                                               uint64_t{in.a} << 32 | uint64_t{binary ? in.b : 0u} << 40));
    }
    merge_dims(args, views);
    if (args.header.numel == 0) return nullptr;
    args.header.value_i = static_cast<int64_t>(a.n_instrs);
    args.header.value_bits[0] = a.n_inputs;
    args.header.value_bits[1] = a.n_outputs;
    for (const ferro_tensor_view* v : views) args.push_address(v->buffer, v->byte_offset);
    args.dims.insert(args.dims.end(), program.begin(), program.end());
    return run(s, "fused_" + sfx, 0, args, {groups_for(args.header.numel), 1, 1});
}

}  // namespace ferro::vk
