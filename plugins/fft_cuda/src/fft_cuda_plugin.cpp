// libferro_fft_cuda.so: a module of the fft family (defined by libferro_fft.so) for cuda
// engines, on cuFFT. numpy's semantics come from the family's own Transform; this module only
// decides where the data sits while cuFFT runs.
//
// Each plan owns its cuFFT plans (made in prepare, kept in the host's plan cache). Its session
// executor carves the call's workspace into a complex buffer W (and a real one R for the real
// transforms), gathers the input into it with the engine's primitives (zeros for padding, the
// part that is read when truncating, real -> complex, conj for hfft), enqueues cuFFT on the
// engine's stream through the native context, and scatters the result into the output scaled
// for the norm (conj for ihfft). Everything is ordered on the one stream: nothing waits.
//
// Layouts (outermost first):
//  - c2c and r2c: the untransformed (batch) axes, then the transformed ones in the order given:
//    one cuFFT plan of rank <= 3 with the batch as its batch.
//  - c2r: the complex axes, then the batch axes, then the halved axis. numpy's irfftn is the
//    inverse over the complex axes followed by a 1-D c2r along the halved axis that uses only
//    the real parts of its points 0 and n/2; cuFFT's multidimensional c2r does not promise
//    that. In this layout both steps are single strided cuFFT calls: the complex axes with
//    stride B*half over B*half interleaved batches, then the c2r over contiguous rows.

#include <ferro/cuda/errors.hpp>

#include <ferro/cuda_context.h>
#include <ferro/family/fft.hpp>
#include <ferro/family_binding.hpp>
#include <ferro/plugin.hpp>
#include <ferro/rules.hpp>
#include <ferro/schema.hpp>

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ferro::fft::cuda {
namespace {

using namespace ferro::family::fft;

constexpr uint64_t kAlign = 256;

uint64_t aligned(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
int64_t bytes_of(ferro_dtype d) { return FERRO_DTYPE_BITS(d) / 8; }

[[noreturn]] void fail_cufft(const std::string& call, cufftResult r) {
    throw plugin::Error(ferro::cuda::status_code(r), "fft (cuda): " + call + " failed: " + ferro::cuda::error_text(r));
}

void check_cuda(const std::string& call, cudaError_t r) {
    if (r != cudaSuccess)
        throw plugin::Error(ferro::cuda::status_code(r), "fft (cuda): " + call + " failed: " + ferro::cuda::error_text(r));
}

// Makes `device` current for the scope (prepare runs on the application's thread: put its
// current device back).
class DeviceScope {
public:
    explicit DeviceScope(int device) {
        check_cuda("cudaGetDevice", cudaGetDevice(&previous_));
        check_cuda("cudaSetDevice", cudaSetDevice(device));
    }
    ~DeviceScope() { cudaSetDevice(previous_); }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int previous_ = 0;
};

// One cuFFT plan with the shape it was made for.
struct CufftPlan {
    cufftHandle handle = 0;
    cufftType type = CUFFT_C2C;
    bool made = false;
    uint64_t work_bytes = 0;
};

// Strides (in elements) of a buffer laid out in `order` (input axes, outermost first) with
// `len[a]` elements along axis a.
std::vector<int64_t> strides_for(const std::vector<int64_t>& order, const std::vector<int64_t>& len) {
    std::vector<int64_t> strides(len.size(), 0);
    int64_t s = 1;
    for (size_t i = order.size(); i-- > 0;) {
        strides[order[i]] = s;
        s *= len[order[i]];
    }
    return strides;
}

int64_t product(const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

struct Plan {
    Transform t;
    int device = 0;
    bool empty = false;        // an empty output: nothing to do
    bool fill = false;         // the input is shorter than the transform somewhere: zero W/R first
    bool gather_real = false;  // the gather writes R (r2c input), else W
    std::vector<int64_t> gather_shape;
    std::vector<int64_t> w_strides, r_strides;  // per input axis, in elements
    uint64_t w_elements = 0, r_elements = 0;
    uint64_t w_offset = 0, r_offset = 0, work_offset = 0, scale_offset = 0;
    CufftPlan first, second;   // c2c / r2c: first only; c2r: first (complex axes, may be unused) and second (the c2r)
    int hermitian_points = 0;  // c2r: the imaginary parts of points 0 (and n/2) are zeroed
    int64_t half_axis_len = 0;
    bool c2r_as_cast = false;  // c2r of length 1: the real part
    std::mutex mutex;          // a cuFFT plan takes its stream and work area as state

    ~Plan() {
        if (!first.made && !second.made) return;
        int previous = 0;
        cudaGetDevice(&previous);
        cudaSetDevice(device);
        // Queued executions may still read the plans' tables (the engine's stream may already be
        // gone: wait for the device as a whole).
        cudaDeviceSynchronize();
        if (first.made) cufftDestroy(first.handle);
        if (second.made) cufftDestroy(second.handle);
        cudaSetDevice(previous);
    }
};

cufftType c2c_type(bool f64) { return f64 ? CUFFT_Z2Z : CUFFT_C2C; }

// Makes a cuFFT plan that runs on our work area (no allocation of its own).
void make(CufftPlan& p, cufftType type, std::vector<long long> n, long long stride, long long dist,
          std::vector<long long> in_embed, long long out_stride, long long out_dist, std::vector<long long> out_embed,
          long long batch) {
    cufftResult r = cufftCreate(&p.handle);
    if (r != CUFFT_SUCCESS) fail_cufft("cufftCreate", r);
    p.made = true;
    p.type = type;
    r = cufftSetAutoAllocation(p.handle, 0);
    if (r != CUFFT_SUCCESS) fail_cufft("cufftSetAutoAllocation", r);
    size_t work = 0;
    r = cufftMakePlanMany64(p.handle, static_cast<int>(n.size()), n.data(), in_embed.data(), stride, dist, out_embed.data(),
                            out_stride, out_dist, type, batch, &work);
    if (r != CUFFT_SUCCESS) {
        std::string shape;
        for (long long x : n) shape += (shape.empty() ? "" : " x ") + std::to_string(x);
        fail_cufft("cufftMakePlanMany64 (" + shape + ", batch " + std::to_string(batch) + ")", r);
    }
    p.work_bytes = work;
}

// Lays the plan out and makes its cuFFT plans (see the layouts at the top).
void lay_out(Plan& p) {
    const Transform& t = p.t;
    const size_t ndim = t.in_shape.size();
    const bool f64 = plugin::real_dtype(t.out_dtype) == FERRO_DTYPE_F64;
    const ferro_dtype complex = plugin::complex_dtype(t.out_dtype), real = plugin::real_dtype(t.out_dtype);
    std::vector<int64_t> batch_axes;
    for (size_t a = 0; a < ndim; ++a) {
        if (std::find(t.axes.begin(), t.axes.end(), static_cast<int64_t>(a)) == t.axes.end())
            batch_axes.push_back(static_cast<int64_t>(a));
    }
    std::vector<int64_t> len = t.in_shape;  // W's extent per axis
    for (size_t i = 0; i < t.axes.size(); ++i) len[t.axes[i]] = t.lengths[i];
    p.gather_shape = t.in_shape;
    for (int64_t a : t.axes) {
        p.gather_shape[a] = std::min(t.in_shape[a], t.fit_shape[a]);
        if (t.in_shape[a] < t.fit_shape[a]) p.fill = true;
    }
    const int64_t batch = [&] {
        int64_t b = 1;
        for (int64_t a : batch_axes) b *= t.in_shape[a];
        return b;
    }();
    // The transformed axes longer than 1, in the order given (length 1 is the identity).
    auto longer_than_one = [&](size_t count) {
        std::vector<long long> n;
        for (size_t i = 0; i < count; ++i) {
            if (t.lengths[i] > 1) n.push_back(t.lengths[i]);
        }
        return n;
    };
    if (t.kind == Kind::c2c || (t.kind == Kind::r2c && t.lengths.back() == 1)) {
        // c2c (and an r2c whose halved axis has length 1, whose transform is the identity: the
        // input, as complex, then c2c over the other axes).
        std::vector<int64_t> order = batch_axes;
        order.insert(order.end(), t.axes.begin(), t.axes.end());
        p.w_strides = strides_for(order, len);
        p.w_elements = static_cast<uint64_t>(product(len));
        if (t.kind == Kind::r2c) p.fill = true;  // the imaginary parts
        const std::vector<long long> n = longer_than_one(t.kind == Kind::c2c ? t.axes.size() : t.axes.size() - 1);
        if (!n.empty()) {
            const long long dist = product(std::vector<int64_t>(n.begin(), n.end()));
            make(p.first, c2c_type(f64), n, 1, dist, n, 1, dist, n, batch);
        }
    } else if (t.kind == Kind::r2c) {
        std::vector<int64_t> order = batch_axes;
        order.insert(order.end(), t.axes.begin(), t.axes.end());
        p.r_strides = strides_for(order, len);
        p.r_elements = static_cast<uint64_t>(product(len));
        std::vector<int64_t> half_len = len;
        half_len[t.axes.back()] = t.half_len();
        p.w_strides = strides_for(order, half_len);
        p.w_elements = static_cast<uint64_t>(product(half_len));
        p.gather_real = true;
        std::vector<long long> n = longer_than_one(t.axes.size() - 1);
        n.push_back(t.lengths.back());
        std::vector<long long> out_embed = n;
        out_embed.back() = t.half_len();
        make(p.first, f64 ? CUFFT_D2Z : CUFFT_R2C, n, 1, product(std::vector<int64_t>(n.begin(), n.end())), n, 1,
             product(std::vector<int64_t>(out_embed.begin(), out_embed.end())), out_embed, batch);
    } else {  // c2r
        std::vector<int64_t> order(t.axes.begin(), t.axes.end() - 1);
        order.insert(order.end(), batch_axes.begin(), batch_axes.end());
        order.push_back(t.axes.back());
        std::vector<int64_t> half_len = len;
        half_len[t.axes.back()] = t.half_len();
        p.w_strides = strides_for(order, half_len);
        p.w_elements = static_cast<uint64_t>(product(half_len));
        p.r_strides = strides_for(order, len);
        p.r_elements = static_cast<uint64_t>(product(len));
        const long long half = t.half_len(), n_last = t.lengths.back();
        const long long inner = batch * half;  // stride of the complex axes
        const std::vector<long long> n = longer_than_one(t.axes.size() - 1);
        if (!n.empty()) make(p.first, c2c_type(f64), n, inner, 1, n, inner, 1, n, inner);
        const long long rows = static_cast<long long>(p.w_elements) / half;
        p.half_axis_len = n_last;
        if (n_last == 1) {
            p.c2r_as_cast = true;
        } else {
            p.hermitian_points = n_last % 2 == 0 ? 2 : 1;
            make(p.second, f64 ? CUFFT_Z2D : CUFFT_C2R, {n_last}, 1, half, {half}, 1, n_last, {n_last}, rows);
        }
    }
    // The workspace: W, R, cuFFT's work area, one scale element.
    uint64_t at = 0;
    p.w_offset = at;
    at += aligned(p.w_elements * static_cast<uint64_t>(bytes_of(complex)));
    p.r_offset = at;
    at += aligned(p.r_elements * static_cast<uint64_t>(bytes_of(real)));
    p.work_offset = at;
    at += aligned(std::max(p.first.work_bytes, p.second.work_bytes));
    p.scale_offset = at;
    p.empty = product(t.out_shape) == 0;
}

uint64_t workspace_bytes(const Plan& p) { return p.scale_offset + kAlign; }

// A view of the workspace slice at `offset` with this dtype, shape and strides (borrowed: they
// must outlive the view).
ferro_tensor_view slice(const ferro_exec_args& args, uint64_t offset, ferro_dtype dtype, const std::vector<int64_t>& shape,
                        const std::vector<int64_t>& strides) {
    ferro_tensor_view v{};
    v.struct_size = sizeof v;
    v.dtype = dtype;
    v.ndim = static_cast<int32_t>(shape.size());
    v.shape = shape.data();
    v.strides = strides.data();
    v.buffer = args.workspace.buffer;
    v.byte_offset = args.workspace.byte_offset + offset;
    v.data = args.workspace.data != nullptr ? static_cast<char*>(args.workspace.data) + offset : nullptr;
    return v;
}

void* address(const ferro_exec_args& args, uint64_t offset) { return static_cast<char*>(args.workspace.data) + offset; }

// Enqueues one cuFFT plan on the engine's stream with `work` as its work area.
void run_cufft(CufftPlan& c, const ferro_cuda_context& ctx, void* work, void* in, void* out, int direction) {
    cufftResult r = cufftSetStream(c.handle, static_cast<cudaStream_t>(ctx.stream));
    if (r == CUFFT_SUCCESS) r = cufftSetWorkArea(c.handle, work);
    if (r != CUFFT_SUCCESS) fail_cufft("cufftSetStream/cufftSetWorkArea", r);
    switch (c.type) {
        case CUFFT_C2C:
            r = cufftExecC2C(c.handle, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), direction);
            break;
        case CUFFT_Z2Z:
            r = cufftExecZ2Z(c.handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out), direction);
            break;
        case CUFFT_R2C: r = cufftExecR2C(c.handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)); break;
        case CUFFT_D2Z:
            r = cufftExecD2Z(c.handle, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out));
            break;
        case CUFFT_C2R: r = cufftExecC2R(c.handle, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)); break;
        case CUFFT_Z2D:
            r = cufftExecZ2D(c.handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out));
            break;
        default: break;
    }
    if (r != CUFFT_SUCCESS) fail_cufft("executing the transform", r);
}

void execute(Plan& p, const ferro_host_api* host, const ferro_exec_args& args) {
    const Transform& t = p.t;
    const ferro_session session = args.session;
    const ferro_tensor_view& in = args.inputs[0];
    const ferro_tensor_view& out = args.outputs[0];
    if (p.empty) return;
    if (t.axes.empty()) {  // fftn over no axes: the input, as complex
        ferro_cast_args cast{sizeof cast, 0, in, out};
        plugin::check(host, host->session_cast(session, &cast));
        return;
    }
    const ferro_dtype complex = plugin::complex_dtype(t.out_dtype), real = plugin::real_dtype(t.out_dtype);
    // Gather: zeros where the input is shorter, then the part of the input that is read.
    if (p.fill) {  // (views borrow their shape and strides: these must outlive the call)
        const std::vector<int64_t> all{static_cast<int64_t>(p.gather_real ? p.r_elements : p.w_elements)}, unit{1};
        ferro_fill_args zero{
            sizeof zero,
            0,
            p.gather_real ? slice(args, p.r_offset, real, all, unit) : slice(args, p.w_offset, complex, all, unit),
            {}};
        plugin::check(host, host->session_fill(session, &zero));
    }
    const ferro_tensor_view dst = p.gather_real ? slice(args, p.r_offset, real, p.gather_shape, p.r_strides)
                                                : slice(args, p.w_offset, complex, p.gather_shape, p.w_strides);
    gather_input(host, session, t, in, p.gather_shape, dst);

    // The transforms, on the engine's stream after the gather.
    const void* native = nullptr;
    plugin::check(host, host->session_native_context(session, &native));
    const auto& ctx = *static_cast<const ferro_cuda_context*>(native);
    void* w = address(args, p.w_offset);
    void* r = address(args, p.r_offset);
    void* work = address(args, p.work_offset);
    const int direction = t.sign > 0 ? CUFFT_INVERSE : CUFFT_FORWARD;
    {
        const std::lock_guard<std::mutex> lock(p.mutex);
        if (t.kind == Kind::r2c && p.first.made && p.first.type != CUFFT_C2C && p.first.type != CUFFT_Z2Z) {
            run_cufft(p.first, ctx, work, r, w, direction);
        } else if (p.first.made) {
            run_cufft(p.first, ctx, work, w, w, direction);  // c2c in place; c2r's complex axes
        }
    }
    ferro_tensor_view result = slice(args, p.w_offset, t.out_dtype, t.out_shape, p.w_strides);
    if (t.kind == Kind::c2r) {
        std::vector<int64_t> line_shape = t.out_shape;
        line_shape[t.axes.back()] = 1;
        std::vector<int64_t> w_real_strides = p.w_strides;  // W seen as reals: twice the complex strides
        for (int64_t& s : w_real_strides) s *= 2;
        if (p.c2r_as_cast) {
            const ferro_tensor_view from = slice(args, p.w_offset, complex, t.out_shape, p.w_strides);
            const ferro_tensor_view to = slice(args, p.r_offset, real, t.out_shape, p.r_strides);
            ferro_cast_args cast{sizeof cast, 0, from, to};  // complex -> real keeps the real part
            plugin::check(host, host->session_cast(session, &cast));
        } else {
            for (int k = 0; k < p.hermitian_points; ++k) {  // numpy uses only their real parts
                const int64_t point = k == 0 ? 0 : p.half_axis_len / 2;
                ferro_tensor_view im = slice(args, p.w_offset + static_cast<uint64_t>((2 * point + 1) * bytes_of(real)), real,
                                             line_shape, w_real_strides);
                ferro_fill_args zero{sizeof zero, 0, im, {}};
                plugin::check(host, host->session_fill(session, &zero));
            }
            plugin::check(host, host->session_native_context(session, &native));
            const std::lock_guard<std::mutex> lock(p.mutex);
            run_cufft(p.second, ctx, work, w, r, direction);
        }
        result = slice(args, p.r_offset, t.out_dtype, t.out_shape, p.r_strides);
    }

    // Scatter, scaled for the norm; ihfft conjugates the result in place.
    if (t.scale != 1) {  // the scale: one element of the workspace, broadcast
        const std::vector<int64_t> zeros(t.out_shape.size(), 0);
        const ferro_tensor_view scale = slice(args, p.scale_offset, t.out_dtype, t.out_shape, zeros);
        ferro_tensor_view one = scale;
        one.ndim = 0;
        ferro_fill_args set{sizeof set, 0, one, {t.scale, 0, 0}};
        plugin::check(host, host->session_fill(session, &set));
        scatter_output(host, session, t, result, &scale, out);
    } else {
        scatter_output(host, session, t, result, nullptr, out);
    }
}

ferro_status execute_in_session(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] { execute(*static_cast<Plan*>(self), host, *args); });
}

void destroy_plan(void* self) { delete static_cast<Plan*>(self); }

constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, execute_in_session, nullptr, destroy_plan};

struct Module {
    plugin::FamilyBinding<Op> family;  // the fft family's ops, bound by name
    std::string engine;                // "cuda:0"
    int device = 0;                    // its CUDA ordinal
};

// Why this module cannot run the call, or empty: cuFFT plans have rank 1 to 3.
std::string decline_reason(const Transform& t) {
    size_t rank = 0;
    const size_t complex_axes = t.kind == Kind::c2c ? t.axes.size() : t.axes.size() - (t.axes.empty() ? 0 : 1);
    for (size_t i = 0; i < complex_axes; ++i) rank += t.lengths[i] > 1 ? 1 : 0;
    if (t.kind == Kind::r2c && !t.lengths.empty() && t.lengths.back() > 1) ++rank;
    if (rank > 3) {
        return "cuFFT transforms at most 3 axes at once; this call transforms " + std::to_string(rank) + " axes longer than 1";
    }
    return {};
}

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        const Module& m = *static_cast<Module*>(self);
        const std::optional<Op> op = m.family.op(args->op_index);
        if (!op) {
            plugin::write_reason(args->decline_reason, args->decline_capacity,
                                 "the cuFFT module does not know " + m.family.qualified(args->op_index) +
                                     " (fft family version " + kVersion + ")");
            return;
        }
        auto p = std::make_unique<Plan>();
        p->t = describe(*op, args->attrs, args->inputs[0]);
        p->device = m.device;
        if (const std::string why = decline_reason(p->t); !why.empty()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity, why);
            return;
        }
        if (!p->t.axes.empty() && product(p->t.out_shape) != 0) {
            const DeviceScope scope(m.device);  // cuFFT keeps its tables on the current device
            lay_out(*p);
        } else {
            p->empty = product(p->t.out_shape) == 0;
        }
        out->workspace_bytes = p->empty || p->t.axes.empty() ? 0 : workspace_bytes(*p);
        out->retained_bytes = 4096 + p->first.work_bytes + p->second.work_bytes;  // cuFFT's tables, roughly
        out->self = p.release();
        out->iface = &plan_iface;
    });
}

void destroy_module(void* self) { delete static_cast<Module*>(self); }

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, nullptr};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        const ferro_engine_target* target = args->target;
        const std::string why = plugin::context_decline(host, target, "the cuFFT module", FERRO_CUDA_CONTEXT_ABI, "cuda", 5,
                                                        "session_native_context");
        if (!why.empty()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity, why);
            return;
        }
        auto m = std::make_unique<Module>();
        if (const std::string unbound = m->family.bind(args, kId, kMajor, static_cast<uint32_t>(Op::count), op_name);
            !unbound.empty()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity, "the cuFFT module: " + unbound);
            return;
        }
        m->engine = target->name;
        const char* colon = std::strchr(target->name, ':');
        m->device = colon != nullptr ? std::atoi(colon + 1) : 0;
        out->self = m.release();
        out->iface = &module_iface;
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    // libcufft carries its own C++ runtime, whose emergency exception pool is never freed:
    // each unload and reload leaked one.
    plugin::stay_resident(reinterpret_cast<const void*>(&query));
    static const plugin::ModuleProviderPlugin desc("fft_cuda", "0.1.0", "fft family: cuFFT module for cuda engines", "fft",
                                                   "cuFFT module for cuda engines", create_module);
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::fft::cuda

FERRO_PLUGIN_EXPORT(ferro::fft::cuda::query)
