// Creation ops: zeros, ones, full, eye (filled by the engine), arange, rand, randn (values
// computed on the host, then copied to the engine, so a seed gives the same numbers on every
// engine). All take `engine` (default "cpu") and a `dtype`.
#include "capture/program.hpp"
#include "ops/core_family.hpp"
#include "ops/op_util.hpp"
#include "runtime/runtime.hpp"

#include <atomic>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace ferro::host::ops {
namespace {

std::span<const int64_t> shape_attr(const ferro_attr_value& v) { return {v.v.i64_array, v.count}; }

void check_shape(const std::string& op, std::span<const int64_t> shape) {
    if (shape.size() > FERRO_MAX_NDIM) invalid(op, fmt::format("{} dimensions, at most {}", shape.size(), FERRO_MAX_NDIM));
    for (int64_t s : shape) {
        if (s < 0) invalid(op, fmt::format("shape {} has a negative size", shape_str(shape)));
    }
}

// zeros/ones/full: attrs (shape, dtype, engine[, value, value_imag]).
void fill_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto shape = shape_attr(a.attrs[0]);
    check_shape(op.qualified, shape);
    const ferro_dtype dtype = attr_dtype(op.qualified, a.attrs, 1);
    // The value converts to i64 only within its range (the conversion of any other is undefined).
    if (op.name == "full" && dtype == FERRO_DTYPE_I64 && !(a.attrs[3].v.f64 >= -0x1p63 && a.attrs[3].v.f64 < 0x1p63)) {
        invalid(op.qualified, fmt::format("value {} does not fit in i64", a.attrs[3].v.f64));
    }
    set_output(a.outputs[0], dtype, shape);
    a.n_outputs = 1;
}

void fill_exec(const CoreOp& op, const ferro_host_api*, const ferro_exec_args& a) {
    ferro_scalar value{static_cast<double>(op.code), 0, static_cast<int64_t>(op.code)};
    if (op.name == "full") {
        value.real = a.attrs[3].v.f64;
        value.imag = a.attrs[4].v.f64;
        value.integer = static_cast<int64_t>(value.real);
    }
    ferro_fill_args f{sizeof f, 0, a.outputs[0], value};
    check(trusted::run(a.session, f, &ferro_engine_iface::fill));
}

// eye: attrs (n, m, k, dtype, engine).
void eye_infer(const CoreOp& op, ferro_infer_args& a) {
    const int64_t n = a.attrs[0].v.i64;
    const int64_t m = a.attrs[1].type == FERRO_ATTR_NONE ? n : a.attrs[1].v.i64;
    const int64_t shape[2] = {n, m};
    check_shape(op.qualified, shape);
    set_output(a.outputs[0], attr_dtype(op.qualified, a.attrs, 3), shape);
    a.n_outputs = 1;
}

void eye_exec(const CoreOp&, const ferro_host_api*, const ferro_exec_args& a) {
    const ferro_tensor_view& out = a.outputs[0];
    ferro_fill_args zero{sizeof zero, 0, out, {0, 0, 0}};
    check(trusted::run(a.session, zero, &ferro_engine_iface::fill));
    const int64_t n = out.shape[0], m = out.shape[1], k = a.attrs[2].v.i64;
    const int64_t len = k >= 0 ? std::min(n, m - k) : std::min(n + k, m);
    if (len <= 0) return;
    View diagonal(out);
    const int64_t shape[1] = {len}, strides[1] = {m + 1};
    diagonal.set(shape, strides);
    shift(diagonal.v, (k >= 0 ? k : -k * m) * itemsize(out.dtype));
    ferro_fill_args one{sizeof one, 0, diagonal.v, {1, 0, 1}};
    check(trusted::run(a.session, one, &ferro_engine_iface::fill));
}

// arange: attrs (start, stop, step, dtype, engine).
struct ArangeSpec {
    double start, stop, step;
    int64_t length;
    ferro_dtype dtype;
};

ArangeSpec arange_spec(const std::string& op, const ferro_attr_value* attrs) {
    ArangeSpec s{attrs[0].v.f64, attrs[1].v.f64, attrs[2].v.f64, 0, FERRO_DTYPE_INVALID};
    if (s.step == 0 || !std::isfinite(s.step) || !std::isfinite(s.start) || !std::isfinite(s.stop)) {
        invalid(op, "start, stop and step must be finite and step non-zero");
    }
    // In double first: a count past int64 (or an infinite one, from stop - start overflowing)
    // has no conversion, and wrapped it would make an empty or a wrong tensor.
    const double count = std::ceil((s.stop - s.start) / s.step);
    if (!(count < 0x1p63)) {
        throw Error(FERRO_RESOURCE_EXHAUSTED, fmt::format("{}: [{}, {}) by {} holds {:g} elements, more than a tensor "
                                                          "can hold",
                                                          op, s.start, s.stop, s.step, count));
    }
    s.length = count > 0 ? static_cast<int64_t>(count) : 0;
    const bool integral = s.start == std::floor(s.start) && s.stop == std::floor(s.stop) && s.step == std::floor(s.step);
    s.dtype = attrs[3].type == FERRO_ATTR_NONE ? (integral ? FERRO_DTYPE_I64 : FERRO_DTYPE_F64) : attr_dtype(op, attrs, 3);
    const double last = s.start + static_cast<double>(s.length - 1) * s.step;  // the values are monotone
    const auto fits = [](double v) { return v >= -0x1p63 && v < 0x1p63; };
    if (s.dtype == FERRO_DTYPE_I64 && s.length > 0 && !(fits(s.start) && fits(last))) {
        invalid(op, fmt::format("values from {} to {} do not fit in i64", s.start, last));
    }
    return s;
}

void arange_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto s = arange_spec(op.qualified, a.attrs);
    const int64_t shape[1] = {s.length};
    set_output(a.outputs[0], s.dtype, shape);
    a.n_outputs = 1;
}

// Writes `values` (f64, or complex pairs) into a new tensor of `dtype` on the call's engine.
Outputs from_host_values(const HostOpCall& call, ferro_dtype dtype, std::span<const int64_t> shape,
                         const std::vector<std::complex<double>>& values) {
    TensorPtr t = make_tensor(call.engine, dtype, shape, call.op.c_str());
    std::vector<unsigned char> bytes(static_cast<size_t>(numel(shape) * itemsize(dtype)));
    for (size_t i = 0; i < values.size(); ++i) {
        unsigned char* p = bytes.data() + i * static_cast<size_t>(itemsize(dtype));
        const auto v = values[i];
        // One dtype per line (kept as laid out).
        // clang-format off
        switch (dtype) {
            case FERRO_DTYPE_F32: { float x = static_cast<float>(v.real()); std::memcpy(p, &x, 4); break; }
            case FERRO_DTYPE_F64: { double x = v.real(); std::memcpy(p, &x, 8); break; }
            case FERRO_DTYPE_C64: { std::complex<float> x(v); std::memcpy(p, &x, 8); break; }
            case FERRO_DTYPE_C128: std::memcpy(p, &v, 16); break;
            case FERRO_DTYPE_I64: { int64_t x = static_cast<int64_t>(v.real()); std::memcpy(p, &x, 8); break; }
            default: { unsigned char x = v.real() != 0 ? 1 : 0; std::memcpy(p, &x, 1); break; }
        }
        // clang-format on
    }
    copy_from_host(*t, bytes.data(), bytes.size());
    return {std::move(t)};
}

Outputs arange_host(const HostOpCall& call) {
    const auto s = arange_spec(call.op, call.attrs.data());
    const int64_t shape[1] = {s.length};
    checked_bytes(s.dtype, shape, call.op.c_str());  // before the values are staged
    std::vector<std::complex<double>> values(static_cast<size_t>(s.length));
    for (int64_t i = 0; i < s.length; ++i) values[static_cast<size_t>(i)] = s.start + static_cast<double>(i) * s.step;
    return from_host_values(call, s.dtype, shape, values);
}

// Counter-based generator: value i of a seed is SplitMix64's output at state
// mix(seed) + (i + 1) * golden, so any element can be computed independently and the stream
// is the same on every engine and thread count.
uint64_t splitmix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
double uniform(uint64_t state, uint64_t i) {
    const uint64_t bits = splitmix64(state + (i + 1) * 0x9e3779b97f4a7c15ull);
    return static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
}
double normal(uint64_t state, uint64_t i) {  // Box-Muller on draws 2i, 2i+1
    const double u1 = 1.0 - uniform(state, 2 * i), u2 = uniform(state, 2 * i + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// An unseeded call draws its seed from a process-wide sequence started from the OS entropy.
uint64_t next_seed() {
    static std::atomic<uint64_t> counter{std::random_device{}()};
    return splitmix64(counter.fetch_add(1));
}

// rand/randn: attrs (shape, dtype, seed, engine).
void random_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto shape = shape_attr(a.attrs[0]);
    check_shape(op.qualified, shape);
    const ferro_dtype dt = attr_dtype(op.qualified, a.attrs, 1);
    if (!is_inexact(dt)) invalid(op.qualified, "dtype must be f32, f64, c64 or c128, got " + dtype_name(dt));
    set_output(a.outputs[0], dt, shape);
    a.n_outputs = 1;
}

template <bool Normal> Outputs random_host(const HostOpCall& call) {
    const auto shape = shape_attr(call.attrs[0]);
    check_shape(call.op, shape);
    const ferro_dtype dt = attr_dtype(call.op, call.attrs.data(), 1);
    if (!is_inexact(dt)) invalid(call.op, "dtype must be f32, f64, c64 or c128, got " + dtype_name(dt));
    checked_bytes(dt, shape, call.op.c_str());  // before the values are staged
    if (call.attrs[2].type == FERRO_ATTR_NONE) refuse_while_capturing(call.op, "a random sample without a seed (give `seed`)");
    const uint64_t seed = call.attrs[2].type == FERRO_ATTR_NONE ? next_seed() : static_cast<uint64_t>(call.attrs[2].v.i64);
    const uint64_t state = splitmix64(seed);
    const auto n = static_cast<uint64_t>(numel(shape));
    std::vector<std::complex<double>> values(n);
    for (uint64_t i = 0; i < n; ++i) {
        if (is_complex(dt)) {
            // Complex normals have unit total variance (each part 1/2), as torch.randn.
            values[i] = Normal ? std::complex<double>(normal(state, 2 * i), normal(state, 2 * i + 1)) * M_SQRT1_2
                               : std::complex<double>(uniform(state, 2 * i), uniform(state, 2 * i + 1));
        } else {
            values[i] = Normal ? normal(state, i) : uniform(state, i);
        }
    }
    return from_host_values(call, dt, shape, values);
}

ferro_attr_spec engine_attr() { return attr_str("engine", "cpu", "engine to create the tensor on"); }
ferro_attr_spec dtype_attr() { return attr_str("dtype", "f64", "element type"); }
ferro_attr_spec shape_attr_spec() { return attr_required("shape", FERRO_ATTR_I64_ARRAY, "shape"); }

}  // namespace

void add_creation_ops(std::vector<CoreOp>& ops) {
    ops.push_back({"zeros",
                   "",
                   "a tensor of zeros",
                   0,
                   0,
                   1,
                   {shape_attr_spec(), dtype_attr(), engine_attr()},
                   fill_infer,
                   fill_exec,
                   nullptr,
                   0});
    ops.push_back({"ones",
                   "",
                   "a tensor of ones",
                   0,
                   0,
                   1,
                   {shape_attr_spec(), dtype_attr(), engine_attr()},
                   fill_infer,
                   fill_exec,
                   nullptr,
                   1});
    ops.push_back({"full",
                   "",
                   "a tensor filled with value (+ i*value_imag for complex dtypes)",
                   0,
                   0,
                   1,
                   {shape_attr_spec(), dtype_attr(), engine_attr(), attr_required("value", FERRO_ATTR_F64, "fill value"),
                    attr_f64("value_imag", 0.0, "imaginary part for complex dtypes")},
                   fill_infer,
                   fill_exec});
    ops.push_back({"eye",
                   "",
                   "ones on diagonal k, zeros elsewhere (numpy.eye)",
                   0,
                   0,
                   1,
                   {attr_required("n", FERRO_ATTR_I64, "rows"), attr_optional("m", FERRO_ATTR_I64, "columns (None: n)"),
                    attr_i64("k", 0, "diagonal offset"), dtype_attr(), engine_attr()},
                   eye_infer,
                   eye_exec});
    ops.push_back({"arange",
                   "",
                   "evenly spaced values in [start, stop) (i64 when all arguments are integral)",
                   0,
                   0,
                   1,
                   {attr_f64("start", 0.0, "first value"), attr_required("stop", FERRO_ATTR_F64, "end, exclusive"),
                    attr_f64("step", 1.0, "spacing"), attr_str("dtype", nullptr, "element type (None: inferred)"), engine_attr()},
                   arange_infer,
                   nullptr,
                   arange_host});
    ops.push_back({"rand",
                   "",
                   "uniform samples in [0, 1) from a seeded counter-based generator",
                   0,
                   0,
                   1,
                   {shape_attr_spec(), dtype_attr(), attr_optional("seed", FERRO_ATTR_I64, "seed (None: fresh)"), engine_attr()},
                   random_infer,
                   nullptr,
                   random_host<false>});
    ops.push_back({"randn",
                   "",
                   "standard normal samples from a seeded counter-based generator",
                   0,
                   0,
                   1,
                   {shape_attr_spec(), dtype_attr(), attr_optional("seed", FERRO_ATTR_I64, "seed (None: fresh)"), engine_attr()},
                   random_infer,
                   nullptr,
                   random_host<true>});
}

}  // namespace ferro::host::ops
