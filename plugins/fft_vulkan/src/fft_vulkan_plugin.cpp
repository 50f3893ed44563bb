// libferro_fft_vulkan.so: a module of the fft family (defined by libferro_fft.so) for vulkan
// engines, on VkFFT. Each plan uses a buffer on the engine in VkFFT's layout: the transformed
// axes innermost in the order given, the other axes (the batch) outside them. Its session
// executor gathers the input into that buffer with the engine's primitives (padding with zeros,
// truncating, promoting real input, conjugating for hfft), records VkFFT's kernels through
// the engine's native context, and scatters the result into the output, scaled for the norm.
//
// VkFFT binds its buffers through descriptor sets written once; a buffer per call would rewrite
// them under command buffers that may still be pending. One persistent buffer per layout, with
// its kernels, shared by the plans of that layout, is what makes them reusable across sessions
// and threads: every use starts with a full barrier (session_native_context), which orders it
// after the previous use on the engine's one queue.
#include "vkfft_app.hpp"

#include <ferro/vulkan_context.h>
#include <ferro/family/fft.hpp>
#include <ferro/family_binding.hpp>
#include <ferro/plugin.hpp>
#include <ferro/rules.hpp>
#include <ferro/schema.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ferro::fft::vulkan {
namespace {

using namespace ferro::family::fft;

// VkFFT applications for one buffer layout and the buffer they are bound to, shared by every
// plan whose transform has that layout (fft in each norm, padded or truncated to the same
// length, ...): VkFFT compiles kernels once per layout. Made by the first execution, they run
// one after the other; the last of a c2r follows the zeroing of the imaginary parts of its
// points 0 and n/2.
struct Kernels {
    struct Stage {
        VkfftShape shape;
        bool inverse = false;
        std::unique_ptr<VkfftApp> app;
    };
    const ferro_host_api* host = nullptr;
    std::vector<Stage> stages;
    uint64_t work_elements = 0;  // complex elements of the buffer
    ferro_dtype complex = FERRO_DTYPE_INVALID;
    ferro_tensor work = nullptr;  // the buffer VkFFT is bound to
    std::mutex mutex;             // guards making the applications
    bool made = false;

    ~Kernels() {
        stages.clear();  // each waits for the queue before VkFFT's objects go
        if (work != nullptr) host->tensor_release(work);
    }
    std::string key() const {
        std::string k;
        const auto add = [&k](uint64_t v) {
            k += std::to_string(v);
            k += ' ';
        };
        add(work_elements);
        add(complex);
        for (const Stage& st : stages) {
            const VkfftShape& v = st.shape;
            for (uint64_t part : {uint64_t{v.dims}, v.size[0], v.size[1], v.size[2], v.batches, uint64_t{v.real},
                                  uint64_t{v.omit_first}, uint64_t{v.f64}, uint64_t{st.inverse}}) {
                add(part);
            }
        }
        return k;
    }
};

struct Module {
    plugin::FamilyBinding<Op> family;                       // the fft family's ops, bound by name
    std::string engine;                                     // "vulkan:0"
    bool f64 = false;                                       // the device computes in double precision
    std::mutex mutex;                                       // guards kernels (prepare may run concurrently)
    std::map<std::string, std::weak_ptr<Kernels>> kernels;  // by Kernels::key()
};

// A view of `t` (a tensor of the module: the shared buffer, a scale) with another dtype, shape and strides.
ferro_tensor_view view_of(const ferro_host_api* host, ferro_tensor t, ferro_dtype dtype, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& strides) {
    ferro_tensor_view v{};
    plugin::check(host, host->tensor_view(t, &v));
    v.dtype = dtype;
    v.ndim = static_cast<int32_t>(shape.size());
    v.shape = shape.data();
    v.strides = strides.data();
    return v;
}

struct Plan {
    const ferro_host_api* host = nullptr;
    Transform t;
    bool empty = false;  // nothing to compute (an empty output)
    bool fill = false;   // the input is shorter than the transform somewhere: zero first
    std::shared_ptr<Kernels> kernels;
    int hermitian_points = 0;              // c2r: 1 (point 0) or 2 (points 0 and n/2)
    std::vector<int64_t> gather_shape;     // the part of the input that is read
    std::vector<int64_t> complex_strides;  // the buffer, in complex elements, per input axis
    std::vector<int64_t> real_strides;     // the same in real elements (r2c input, c2r output)
    std::vector<int64_t> zero_strides;     // broadcasts the scale
    ferro_tensor scale = nullptr;          // t.scale as one element of the output dtype, or NULL

    ~Plan() {
        if (scale != nullptr) host->tensor_release(scale);
    }
};

// The buffer's layout: batch axes (those not transformed) outermost in input order, then the
// transformed axes in the order given, the last innermost. Real views of the halved axis have
// VkFFT's padded rows of 2 (n / 2 + 1) reals.
void lay_out(Plan& p, Kernels& k) {
    const Transform& t = p.t;
    const size_t ndim = t.in_shape.size();
    std::vector<int64_t> order;  // input axes, outermost first
    for (size_t a = 0; a < ndim; ++a) {
        if (std::find(t.axes.begin(), t.axes.end(), static_cast<int64_t>(a)) == t.axes.end())
            order.push_back(static_cast<int64_t>(a));
    }
    uint64_t batches = 1;
    for (int64_t a : order) batches *= static_cast<uint64_t>(t.in_shape[a]);
    order.insert(order.end(), t.axes.begin(), t.axes.end());
    const bool real = t.kind != Kind::c2c;
    auto complex_len = [&](int64_t a) {
        for (size_t i = 0; i < t.axes.size(); ++i) {
            if (t.axes[i] == a) return real && i + 1 == t.axes.size() ? t.half_len() : t.lengths[i];
        }
        return t.in_shape[a];
    };
    p.complex_strides.assign(ndim, 0);
    p.real_strides.assign(ndim, 0);
    int64_t stride = 1;
    for (size_t i = ndim; i-- > 0;) {
        p.complex_strides[order[i]] = stride;
        p.real_strides[order[i]] = 2 * stride;
        stride *= complex_len(order[i]);
    }
    if (real) p.real_strides[t.axes.back()] = 1;
    k.work_elements = static_cast<uint64_t>(stride);
    k.complex = plugin::complex_dtype(t.out_dtype);
    p.zero_strides.assign(ndim, 0);

    p.gather_shape = t.in_shape;
    for (int64_t a : t.axes) {
        p.gather_shape[a] = std::min(t.in_shape[a], t.fit_shape[a]);
        if (t.in_shape[a] < t.fit_shape[a]) p.fill = true;
    }
    // VkFFT has no radix 1: axes of length 1 are left out (their transform is the identity).
    // A halved axis of length 1 holds one complex point whose real transform is the identity
    // too: the rest is then complex to complex on the zero-filled buffer.
    const bool halved = real && t.lengths.back() > 1;
    std::vector<uint64_t> others;  // lengths > 1 of the complex axes, in the order given
    for (size_t i = 0; i + (halved ? 1 : 0) < t.axes.size(); ++i) {
        if (t.lengths[i] > 1) others.push_back(static_cast<uint64_t>(t.lengths[i]));
    }
    if (real && !halved) p.fill = true;  // the point's imaginary part must be 0
    const bool f64 = plugin::real_dtype(t.out_dtype) == FERRO_DTYPE_F64;
    const bool inverse = t.sign > 0;
    auto stage = [&](std::vector<uint64_t> sizes, uint64_t stage_batches, bool is_real, bool omit_first) {
        Kernels::Stage st;
        st.shape.dims = static_cast<uint32_t>(sizes.size());
        for (size_t i = 0; i < sizes.size(); ++i) st.shape.size[i] = sizes[sizes.size() - 1 - i];
        st.shape.batches = stage_batches;
        st.shape.real = is_real;
        st.shape.omit_first = omit_first;
        st.shape.f64 = f64;
        st.inverse = inverse;
        k.stages.push_back(std::move(st));
    };
    const auto n = static_cast<uint64_t>(t.lengths.empty() ? 1 : t.lengths.back());
    if (t.kind != Kind::c2r || !halved) {
        std::vector<uint64_t> sizes = others;
        if (halved) sizes.push_back(n);
        if (!sizes.empty()) stage(sizes, batches, halved, false);
    } else {
        // numpy's irfftn: the complex axes' inverse first, then the real one along the halved
        // axis, whose points 0 (and n/2 when n is even) count by their real parts only. VkFFT's
        // multidimensional c2r would not ignore their imaginary parts.
        const auto half = static_cast<uint64_t>(t.half_len());
        if (!others.empty()) {
            std::vector<uint64_t> sizes = others;
            sizes.push_back(half);  // innermost, not transformed
            stage(sizes, batches, false, true);
        }
        p.hermitian_points = n % 2 == 0 ? 2 : 1;
        stage({n}, k.work_elements / half, true, false);
    }
    int64_t out_elements = 1;
    for (int64_t d : t.out_shape) out_elements *= d;
    p.empty = out_elements == 0;
}

// Why this module cannot run the call, or empty.
std::string decline_reason(const Transform& t, const Module& m) {
    if (t.axes.size() > 3) {
        return "VkFFT transforms at most 3 axes at once; this call transforms " + std::to_string(t.axes.size());
    }
    if (plugin::real_dtype(t.out_dtype) == FERRO_DTYPE_F64 && !m.f64) {
        return "engine " + m.engine + " has no shaderFloat64, so no f64 or c128 transforms";
    }
    return {};
}

// Before the c2r along the halved axis: the imaginary parts of its point 0 (and n/2 when n is
// even) become 0, for every line.
void zero_hermitian_imag(const Plan& p, const ferro_host_api* host, ferro_session session) {
    const Transform& t = p.t;
    const ferro_dtype real = plugin::real_dtype(t.out_dtype);
    std::vector<int64_t> shape = t.out_shape;
    shape[t.axes.back()] = 1;
    for (int k = 0; k < p.hermitian_points; ++k) {
        ferro_tensor_view v = view_of(host, p.kernels->work, real, shape, p.real_strides);
        const int64_t point = k == 0 ? 0 : t.lengths.back() / 2;
        v.byte_offset += static_cast<uint64_t>((2 * point + 1) * (FERRO_DTYPE_BITS(real) / 8));
        ferro_fill_args zero{sizeof zero, 0, v, {}};
        plugin::check(host, host->session_fill(session, &zero));
    }
}

// Records the gather into the buffer, the transform and the scatter into the output.
void execute(Plan& p, const ferro_host_api* host, const ferro_exec_args& args) {
    const Transform& t = p.t;
    const ferro_session session = args.session;
    const ferro_tensor_view& in = args.inputs[0];
    const ferro_tensor_view& out = args.outputs[0];
    const ferro_dtype complex = plugin::complex_dtype(t.out_dtype);
    if (p.empty) return;
    if (t.axes.empty()) {  // fftn over no axes: the input, as complex
        ferro_cast_args cast{sizeof cast, 0, in, out};
        plugin::check(host, host->session_cast(session, &cast));
        return;
    }
    // A full barrier first: the buffer's previous use, in this session or an earlier one, is over.
    const void* native = nullptr;
    plugin::check(host, host->session_native_context(session, &native));
    const auto& ctx = *static_cast<const ferro_vulkan_context*>(native);
    Kernels& k = *p.kernels;
    plugin::check(host, host->session_use(session, k.work));
    if (p.scale != nullptr) plugin::check(host, host->session_use(session, p.scale));
    {
        const std::lock_guard<std::mutex> lock(k.mutex);
        if (!k.made) {
            ferro_tensor_view w{};
            plugin::check(host, host->tensor_view(k.work, &w));
            ferro_vulkan_buffer_info info{};
            plugin::check(host, ctx.buffer_info(&ctx, w.buffer, &info));
            const VkfftBuffer buffer{info.buffer, info.offset + w.byte_offset, k.work_elements * (FERRO_DTYPE_BITS(complex) / 8)};
            for (Kernels::Stage& st : k.stages) st.app = std::make_unique<VkfftApp>(ctx, st.shape, buffer, st.inverse);
            k.made = true;
        }
    }

    // Gather: zeros where the input is shorter, then the part of the input that is read.
    if (p.fill) {
        const std::vector<int64_t> all{static_cast<int64_t>(k.work_elements)}, unit{1};
        ferro_fill_args zero{sizeof zero, 0, view_of(host, k.work, complex, all, unit), {}};
        plugin::check(host, host->session_fill(session, &zero));
    }
    const bool real_work = t.kind == Kind::r2c;
    const ferro_tensor_view dst =
        view_of(host, k.work, real_work ? t.in_dtype : complex, p.gather_shape, real_work ? p.real_strides : p.complex_strides);
    gather_input(host, session, t, in, p.gather_shape, dst);

    // The transforms, each after a barrier that makes the previous writes visible.
    for (size_t i = 0; i < k.stages.size(); ++i) {
        if (i + 1 == k.stages.size() && p.hermitian_points > 0) zero_hermitian_imag(p, host, session);
        plugin::check(host, host->session_native_context(session, &native));
        k.stages[i].app->append(*static_cast<const ferro_vulkan_context*>(native));
    }

    // Scatter, scaled for the norm; ihfft conjugates the result in place.
    const ferro_tensor_view result =
        view_of(host, k.work, t.out_dtype, t.out_shape, t.kind == Kind::c2r ? p.real_strides : p.complex_strides);
    if (p.scale != nullptr) {
        const ferro_tensor_view scale = view_of(host, p.scale, t.out_dtype, t.out_shape, p.zero_strides);
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

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        Module& m = *static_cast<Module*>(self);
        const std::optional<Op> op = m.family.op(args->op_index);
        if (!op) {
            plugin::write_reason(args->decline_reason, args->decline_capacity,
                                 "the VkFFT module does not know " + m.family.qualified(args->op_index) +
                                     " (fft family version " + kVersion + ")");
            return;
        }
        auto p = std::make_unique<Plan>();
        p->host = host;
        p->t = describe(*op, args->attrs, args->inputs[0]);
        if (const std::string why = decline_reason(p->t, m); !why.empty()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity, why);
            return;
        }
        auto kernels = std::make_shared<Kernels>();
        kernels->host = host;
        lay_out(*p, *kernels);
        uint64_t retained = 1024;
        if (!p->empty && !p->t.axes.empty()) {
            // The buffer and kernels of another plan with this layout, or new ones.
            const std::string key = kernels->key();
            const std::lock_guard<std::mutex> lock(m.mutex);
            std::erase_if(m.kernels, [](const auto& entry) { return entry.second.expired(); });
            if (std::shared_ptr<Kernels> shared = m.kernels[key].lock()) {
                kernels = std::move(shared);
            } else {
                const auto elements = static_cast<int64_t>(kernels->work_elements);
                plugin::check(host, host->tensor_empty(host, m.engine.c_str(), kernels->complex, 1, &elements, &kernels->work));
                m.kernels[key] = kernels;
            }
            // Counted by every plan that shares it: the cache errs on the side of evicting.
            retained += kernels->work_elements * (FERRO_DTYPE_BITS(kernels->complex) / 8);
        }
        p->kernels = std::move(kernels);
        if (!p->empty && !p->t.axes.empty() && p->t.scale != 1) {
            const double value[2] = {p->t.scale, 0};
            const float value32[2] = {static_cast<float>(p->t.scale), 0};
            const bool single = plugin::real_dtype(p->t.out_dtype) == FERRO_DTYPE_F32;
            const int64_t one = 1;
            plugin::check(host, host->tensor_from_host(host, m.engine.c_str(), p->t.out_dtype, 1, &one,
                                                       single ? static_cast<const void*>(value32) : value, &p->scale));
        }
        out->workspace_bytes = 0;
        out->retained_bytes = retained;  // VkFFT's kernels and tables come on top, made at first use
        out->self = p.release();
        out->iface = &plan_iface;
    });
}

void destroy_module(void* self) { delete static_cast<Module*>(self); }

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, nullptr};

bool has_dtype(const ferro_device_props* props, ferro_dtype dtype) {
    return props != nullptr && std::find(props->dtypes, props->dtypes + std::min<uint32_t>(props->n_dtypes, 16), dtype) !=
                                   props->dtypes + std::min<uint32_t>(props->n_dtypes, 16);
}

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        const ferro_engine_target* target = args->target;
        const std::string why = plugin::context_decline(host, target, "the VkFFT module", FERRO_VULKAN_CONTEXT_ABI, "vulkan", 5,
                                                        "session_native_context, session_use");
        if (!why.empty()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity, why);
            return;
        }
        auto m = std::make_unique<Module>();
        if (const std::string unbound = m->family.bind(args, kId, kMajor, static_cast<uint32_t>(Op::count), op_name);
            !unbound.empty()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity, "the VkFFT module: " + unbound);
            return;
        }
        m->engine = target->name;
        m->f64 = has_dtype(target->props, FERRO_DTYPE_F64);
        out->self = m.release();
        out->iface = &module_iface;
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    static const plugin::ModuleProviderPlugin desc("fft_vulkan", "0.1.0", "fft family: VkFFT module for vulkan engines", "fft",
                                                   "VkFFT module for vulkan engines", create_module);
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::fft::vulkan

FERRO_PLUGIN_EXPORT(ferro::fft::vulkan::query)
