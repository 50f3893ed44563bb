// Zero-copy exchange: numpy's array interface, DLPack (versioned and not) both ways, and
// memory lent by Python objects to ferro tensors.
#include "common.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <dlpack/dlpack.h>

#include <atomic>

namespace ferro_py {
namespace {

constexpr ferro_dtype kBool = FERRO_DTYPE_MAKE(FERRO_DLPACK_BOOL, 8u);

struct DTypeEntry {
    ferro_dtype dtype;
    const char* ferro_name;
    const char* numpy_name;
};
constexpr std::array<DTypeEntry, 6> kDTypes = {{{FERRO_DTYPE_F32, "f32", "float32"},
                                                {FERRO_DTYPE_F64, "f64", "float64"},
                                                {FERRO_DTYPE_C64, "c64", "complex64"},
                                                {FERRO_DTYPE_C128, "c128", "complex128"},
                                                {FERRO_DTYPE_I64, "i64", "int64"},
                                                {kBool, "bool", "bool"}}};

// ---- owners of lent memory, released with the GIL --------------------------------------------
// A tensor over memory a Python object lends may be released on any thread, inside a ferro call
// that runs without the GIL and may hold the runtime's locks. Taking the GIL there could
// deadlock against a thread that holds the GIL and waits for those locks, so the owner is
// queued and dropped by the interpreter (a pending call) or by the next borrow.
std::mutex pending_mutex;
std::vector<nb::ndarray<nb::ro>*> pending_owners;
std::atomic<bool> pending_scheduled{false};

void drop_pending_owners() {
    std::vector<nb::ndarray<nb::ro>*> owners;
    {
        std::lock_guard lock(pending_mutex);
        owners.swap(pending_owners);
        pending_scheduled = false;
    }
    for (auto* owner : owners) delete owner;
}

int drop_pending_owners_call(void*) {
    drop_pending_owners();
    return 0;
}

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

void release_owner(void* context) {
    auto* owner = static_cast<nb::ndarray<nb::ro>*>(context);
    if (!Py_IsInitialized() || finalizing()) return;  // the interpreter is going: nothing to give back to
    if (PyGILState_Check() != 0) {
        delete owner;
        return;
    }
    std::lock_guard lock(pending_mutex);
    pending_owners.push_back(owner);
    if (!pending_scheduled.exchange(true) && Py_AddPendingCall(drop_pending_owners_call, nullptr) != 0) {
        pending_scheduled = false;  // the interpreter's queue is full: the next borrow drops it
    }
}

ferro_dtype dtype_of(const nb::dlpack::dtype& dt) {
    if (dt.lanes != 1) return FERRO_DTYPE_INVALID;
    const auto code = static_cast<uint32_t>(dt.code);
    for (const auto& e : kDTypes) {
        if (FERRO_DTYPE_CODE(e.dtype) == code && FERRO_DTYPE_BITS(e.dtype) == dt.bits) return e.dtype;
    }
    return FERRO_DTYPE_INVALID;
}

std::string describe_dtype(const nb::dlpack::dtype& dt) {
    static constexpr const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    const auto code = static_cast<size_t>(dt.code);
    return std::string(code < 7 ? codes[code] : "code " + std::to_string(code)) + std::to_string(dt.bits) +
           (dt.lanes != 1 ? "x" + std::to_string(dt.lanes) : "");
}

// The bytes a strided view reaches: [lo, hi) around element 0.
std::pair<int64_t, int64_t> extent(const int64_t* shape, const int64_t* strides, int32_t ndim, int64_t item) {
    int64_t lo = 0, hi = item;
    for (int32_t i = 0; i < ndim; ++i) {
        if (shape[i] == 0) return {0, 0};
        const int64_t span = (shape[i] - 1) * strides[i] * item;
        (span < 0 ? lo : hi) += span;
    }
    return {lo, hi};
}

// A ferro tensor on the memory a CPU array lends, kept alive until ferro lets it go.
Tensor borrow_cpu(const RuntimeRef& rt, const nb::ndarray<nb::ro>& array) {
    drop_pending_owners();
    if (array.device_type() != nb::device::cpu::value) {
        throw nb::value_error("ferro.asarray: the array is not in CPU memory (ferro.from_dlpack takes device arrays)");
    }
    const ferro_dtype dtype = dtype_of(array.dtype());
    if (dtype == FERRO_DTYPE_INVALID) {
        throw nb::type_error(("ferro.asarray: dtype " + describe_dtype(array.dtype()) +
                              " has no ferro dtype (float32, float64, complex64, complex128, int64, bool)")
                                 .c_str());
    }
    const auto ndim = static_cast<int32_t>(array.ndim());
    if (ndim > FERRO_MAX_NDIM) {
        throw nb::value_error(
            ("ferro.asarray: " + std::to_string(ndim) + " dimensions, at most " + std::to_string(FERRO_MAX_NDIM)).c_str());
    }
    std::vector<int64_t> shape(static_cast<size_t>(ndim)), strides(static_cast<size_t>(ndim));
    for (int32_t i = 0; i < ndim; ++i) {
        shape[static_cast<size_t>(i)] = static_cast<int64_t>(array.shape(static_cast<size_t>(i)));
        strides[static_cast<size_t>(i)] = array.stride(static_cast<size_t>(i));
    }
    const auto item = static_cast<int64_t>(itemsize(dtype));
    const auto [lo, hi] = extent(shape.data(), strides.data(), ndim, item);
    auto* data = static_cast<char*>(const_cast<void*>(array.data()));
    ferro_borrow_args args{};
    args.struct_size = sizeof args;
    args.dtype = dtype;
    args.ndim = ndim;
    args.shape = shape.data();
    args.strides = strides.data();
    args.data = data;
    args.lent = data + lo;
    args.lent_bytes = static_cast<uint64_t>(hi - lo);
    args.deleter = release_owner;
    auto* owner = new nb::ndarray<nb::ro>(array);
    args.context = owner;
    ferro_tensor out = nullptr;
    const ferro_status st = ferro_tensor_borrow(rt->get(), &args, &out);
    if (st != nullptr) delete owner;  // nothing was borrowed: the deleter will not run
    check(st);
    return {rt, out};
}

// A ferro tensor from an unversioned DLPack capsule (devices other than the CPU: the engine
// that owns the device takes it, e.g. kDLCUDA n -> "cuda:n").
Tensor from_capsule(const RuntimeRef& rt, nb::capsule capsule) {
    if (std::string(capsule.name()) != "dltensor") {
        throw nb::value_error("ferro.from_dlpack: expected a 'dltensor' capsule (a used one cannot be taken twice)");
    }
    auto* managed = static_cast<DLManagedTensor*>(capsule.data());
    ferro_tensor out = nullptr;
    check(ferro_tensor_from_dlpack(rt->get(), managed, &out));
    PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // ferro owns it now: the capsule must not delete it
    return {rt, out};
}

int dlpack_device_type(const std::string& engine, int* id) {
    const auto colon = engine.find(':');
    *id = colon == std::string::npos ? 0 : std::stoi(engine.substr(colon + 1));
    const std::string kind = engine.substr(0, colon);
    if (kind == "cpu") return kDLCPU;
    if (kind == "cuda") return kDLCUDA;
    if (kind == "vulkan") return kDLVulkan;
    return kDLExtDev;
}

// The tensor as nanobind's ndarray over ferro's DLPack export, whose __dlpack__ speaks both
// protocol versions.
nb::object exported(const Tensor& t) {
    DLManagedTensor* managed = nullptr;
    check(ferro_tensor_to_dlpack(t.get(), &managed));
    nb::capsule owner(managed, [](void* p) noexcept {
        auto* m = static_cast<DLManagedTensor*>(p);
        if (m->deleter != nullptr) m->deleter(m);
    });
    const DLTensor& dl = managed->dl_tensor;
    std::vector<size_t> shape(static_cast<size_t>(dl.ndim));
    for (int32_t i = 0; i < dl.ndim; ++i) shape[static_cast<size_t>(i)] = static_cast<size_t>(dl.shape[i]);
    nb::dlpack::dtype dtype{dl.dtype.code, dl.dtype.bits, dl.dtype.lanes};
    nb::ndarray<nb::array_api> array(static_cast<char*>(dl.data) + dl.byte_offset, static_cast<size_t>(dl.ndim), shape.data(),
                                     owner, dl.strides, dtype, dl.device.device_type, dl.device.device_id);
    return nb::cast(array);
}

nb::dict array_interface(const Tensor& t) {
    if (capturing) {
        throw StatusError{FERRO_FAILED_PRECONDITION, FERRO_PHASE_NONE,
                          "reading a tensor's values on the host while capturing: a replay could not repeat it "
                          "(compute with ferro ops, or read the values outside the captured function)"};
    }
    void* data = ferro_tensor_data(t.get());
    if (data == nullptr && t.numel() > 0) {
        throw nb::attribute_error("__array_interface__: the tensor's memory is not host addressable (use .to('cpu'))");
    }
    const ferro_dtype d = t.dtype();
    static constexpr const char* typestrs[] = {"<f4", "<f8", "<c8", "<c16", "<i8", "|b1"};
    const char* typestr = "";
    for (size_t i = 0; i < kDTypes.size(); ++i) {
        if (kDTypes[i].dtype == d) typestr = typestrs[i];
    }
    nb::list shape, strides;
    const int64_t* s = ferro_tensor_shape(t.get());
    const int64_t* st = ferro_tensor_strides(t.get());
    const auto item = static_cast<int64_t>(itemsize(d));
    for (int32_t i = 0; i < t.ndim(); ++i) {
        shape.append(s[i]);
        strides.append(st[i] * item);
    }
    nb::dict out;
    out["version"] = 3;
    out["shape"] = nb::tuple(shape);
    out["typestr"] = typestr;
    out["strides"] = nb::tuple(strides);
    // Read-only: ferro tensors are values that views, the tape and plans may share.
    out["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(data), true);
    return out;
}

}  // namespace

nb::object numpy_dtype(ferro_dtype dtype) {
    // Kept for the process's life: static nb::objects would be released after the interpreter.
    static const std::array<nb::handle, kDTypes.size()> objects = [] {
        nb::object np_dtype = nb::module_::import_("numpy").attr("dtype");
        std::array<nb::handle, kDTypes.size()> v;
        for (size_t i = 0; i < kDTypes.size(); ++i) v[i] = np_dtype(kDTypes[i].numpy_name).release();
        return v;
    }();
    for (size_t i = 0; i < kDTypes.size(); ++i) {
        if (kDTypes[i].dtype == dtype) return nb::borrow(objects[i]);
    }
    throw StatusError{FERRO_INTERNAL, FERRO_PHASE_NONE, "a tensor of an unknown dtype"};
}

ferro_dtype dtype_from_name(const std::string& name) {
    for (const auto& e : kDTypes) {
        if (name == e.ferro_name || name == e.numpy_name) return e.dtype;
    }
    return FERRO_DTYPE_INVALID;
}

const char* dtype_name(ferro_dtype dtype) {
    for (const auto& e : kDTypes) {
        if (e.dtype == dtype) return e.ferro_name;
    }
    return "?";
}

size_t itemsize(ferro_dtype dtype) { return FERRO_DTYPE_BITS(dtype) / 8 * FERRO_DTYPE_LANES(dtype); }

void bind_interop(nb::module_& m) {
    nb::class_<Tensor> cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
    cls.def_prop_ro("__array_interface__", &array_interface);
    cls.def("_dlpack_export", &exported, "nanobind's ndarray over the tensor's memory (its __dlpack__ makes the capsule).");
    cls.def("__dlpack_device__", [](const Tensor& t) {
        int id = 0;
        const int type = dlpack_device_type(ferro_tensor_engine(t.get()), &id);
        return nb::make_tuple(type, id);
    });
    m.def("_borrow_cpu", &borrow_cpu, nb::arg("runtime"), nb::arg("array"),
          "A tensor over the memory of a CPU array (buffer protocol or DLPack), without copying.");
    m.def("_from_capsule", &from_capsule, nb::arg("runtime"), nb::arg("capsule"));
    m.def("_drop_pending_owners", &drop_pending_owners);
    m.def("_dtype_name", [](const std::string& name) -> std::optional<std::string> {
        const ferro_dtype d = dtype_from_name(name);
        if (d == FERRO_DTYPE_INVALID) return std::nullopt;
        return std::string(dtype_name(d));
    });
}

}  // namespace ferro_py
