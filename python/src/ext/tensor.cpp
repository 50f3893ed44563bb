// ferro.Tensor: the handle, its properties, the operators' fast path, op calls by name, and
// autodiff.
#include "common.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <optional>

namespace ferro_py {
namespace {

// Work on fewer elements than this runs with the GIL held: releasing and taking it back would
// cost more than the call.
constexpr int64_t kReleaseGilElements = 1 << 15;

bool is_complex(ferro_dtype d) { return FERRO_DTYPE_CODE(d) == FERRO_DLPACK_COMPLEX; }
bool is_inexact(ferro_dtype d) { return is_complex(d) || FERRO_DTYPE_CODE(d) == FERRO_DLPACK_FLOAT; }
constexpr ferro_dtype kBool = FERRO_DTYPE_MAKE(FERRO_DLPACK_BOOL, 8u);

Tensor scalar(const Tensor& like, ferro_dtype dtype, std::complex<double> value) {
    union {
        float f32;
        double f64;
        std::complex<float> c64;
        std::complex<double> c128;
        int64_t i64;
        uint8_t b;
    } data{};
    if (dtype == FERRO_DTYPE_F32) data.f32 = static_cast<float>(value.real());
    else if (dtype == FERRO_DTYPE_F64) data.f64 = value.real();
    else if (dtype == FERRO_DTYPE_C64) data.c64 = std::complex<float>(value);
    else if (dtype == FERRO_DTYPE_C128) data.c128 = value;
    else if (dtype == FERRO_DTYPE_I64) data.i64 = static_cast<int64_t>(value.real());
    else data.b = value.real() != 0 ? 1 : 0;
    ferro_tensor out = nullptr;
    check(ferro_tensor_from_host(like.runtime()->get(), ferro_tensor_engine(like.get()), dtype, 0, nullptr, &data, &out));
    return {like.runtime(), out};
}

// A Python scalar as a 0-d tensor next to `like`, typed as numpy 2 types Python scalars (NEP 50:
// the scalar takes the array's dtype within its kind).
std::optional<Tensor> weak_scalar(const Tensor& like, nb::handle obj) {
    const ferro_dtype d = like.dtype();
    if (PyBool_Check(obj.ptr())) return scalar(like, d, obj.ptr() == Py_True ? 1.0 : 0.0);
    if (PyLong_Check(obj.ptr())) {
        const long long v = PyLong_AsLongLong(obj.ptr());
        if (v == -1 && PyErr_Occurred()) throw nb::python_error();
        return scalar(like, d == kBool ? FERRO_DTYPE_I64 : d, static_cast<double>(v));
    }
    if (PyFloat_Check(obj.ptr())) return scalar(like, is_inexact(d) ? d : FERRO_DTYPE_F64, PyFloat_AS_DOUBLE(obj.ptr()));
    if (PyComplex_Check(obj.ptr())) {
        const std::complex<double> z(PyComplex_RealAsDouble(obj.ptr()), PyComplex_ImagAsDouble(obj.ptr()));
        const ferro_dtype c = is_complex(d) ? d : d == FERRO_DTYPE_F32 ? FERRO_DTYPE_C64 : FERRO_DTYPE_C128;
        return scalar(like, c, z);
    }
    return std::nullopt;
}

// Another operand of a binary operator: a Tensor, a Python scalar, or anything ferro.asarray
// takes (numpy arrays, DLPack producers, nested lists).
Tensor operand(const Tensor& like, nb::handle obj) {
    if (nb::isinstance<Tensor>(obj)) return nb::cast<const Tensor&>(obj);
    if (auto s = weak_scalar(like, obj)) return std::move(*s);
    // Kept for the process's life: a static nb::object would be released after the interpreter.
    static nb::handle asarray = nb::object(nb::module_::import_("ferro").attr("asarray")).release();
    return nb::cast<Tensor>(asarray(obj, nb::arg("runtime") = like.runtime()));
}

Tensor call1(const RuntimeRef& rt, ferro_op op, std::initializer_list<ferro_tensor> inputs, bool release_gil) {
    ferro_tensor out = nullptr;
    ferro_op_call_args args{};
    args.struct_size = sizeof args;
    args.n_inputs = static_cast<uint32_t>(inputs.size());
    args.inputs = inputs.begin();
    args.outputs = &out;
    args.outputs_capacity = 1;
    if (release_gil) {
        ferro_status st = nullptr;
        {
            nb::gil_scoped_release unlocked;
            st = ferro_op_call(rt->get(), op, &args);
        }
        check(st);
    } else {
        check(ferro_op_call(rt->get(), op, &args));
    }
    return {rt, out};
}

Tensor binary(CoreOp op, const Tensor& a, nb::handle other, bool reflected) {
    const Tensor b = operand(a, other);
    const Tensor& lhs = reflected ? b : a;
    const Tensor& rhs = reflected ? a : b;
    const bool large = std::max(a.numel(), b.numel()) >= kReleaseGilElements || op == kMatmul;
    return call1(a.runtime(), a.runtime()->core(op), {lhs.get(), rhs.get()}, large);
}

nb::tuple shape_of(const Tensor& t) {
    const int64_t* s = ferro_tensor_shape(t.get());
    nb::list l;
    for (int32_t i = 0; i < t.ndim(); ++i) l.append(s[i]);
    return nb::tuple(l);
}

nb::tuple byte_strides_of(const Tensor& t) {
    const int64_t* s = ferro_tensor_strides(t.get());
    const auto size = static_cast<int64_t>(itemsize(t.dtype()));
    nb::list l;
    for (int32_t i = 0; i < t.ndim(); ++i) l.append(s[i] * size);
    return nb::tuple(l);
}

std::optional<Tensor> maybe(const RuntimeRef& rt, ferro_tensor t) {
    if (t == nullptr) return std::nullopt;
    return Tensor(rt, t);
}

RuntimeRef runtime_of(const std::vector<Tensor>& inputs, const std::optional<RuntimeRef>& rt) {
    if (rt) return *rt;
    if (!inputs.empty()) return inputs.front().runtime();
    return default_runtime();
}

std::vector<std::optional<Tensor>> vjp(const std::vector<Tensor>& outputs, const std::vector<std::optional<Tensor>>& cotangents,
                                       const std::vector<Tensor>& inputs, bool create_graph) {
    if (outputs.empty()) throw StatusError{FERRO_INVALID_ARGUMENT, FERRO_PHASE_NONE, "vjp: no outputs"};
    if (!cotangents.empty() && cotangents.size() != outputs.size()) {
        throw StatusError{
            FERRO_INVALID_ARGUMENT, FERRO_PHASE_NONE,
            "vjp: " + std::to_string(cotangents.size()) + " cotangents for " + std::to_string(outputs.size()) + " outputs"};
    }
    const RuntimeRef& rt = outputs.front().runtime();
    const std::vector<ferro_tensor> out = handles(outputs);
    const std::vector<ferro_tensor> in = handles(inputs);
    std::vector<ferro_tensor> cot;
    for (const auto& c : cotangents) cot.push_back(c ? c->get() : nullptr);
    std::vector<ferro_tensor> result(inputs.size(), nullptr);
    ferro_status st = nullptr;
    {
        nb::gil_scoped_release unlocked;
        st = ferro_vjp(rt->get(), out.data(), cot.empty() ? nullptr : cot.data(), static_cast<uint32_t>(out.size()), in.data(),
                       static_cast<uint32_t>(in.size()), create_graph, result.data());
    }
    check(st);
    std::vector<std::optional<Tensor>> grads;
    for (ferro_tensor g : result) grads.push_back(maybe(rt, g));
    return grads;
}

int64_t index_of(nb::handle v) {
    nb::object index = nb::steal(PyNumber_Index(v.ptr()));
    if (!index.is_valid()) throw nb::python_error();
    return nb::cast<int64_t>(index);
}

}  // namespace

std::vector<Tensor> call_op(const RuntimeRef& rt, ferro_op op, const std::vector<ferro_tensor>& inputs,
                            const std::vector<ferro_named_attr>& attrs, bool release_gil) {
    std::array<ferro_tensor, 64> out{};
    uint32_t n = 0;
    ferro_op_call_args args{};
    args.struct_size = sizeof args;
    args.n_attrs = static_cast<uint32_t>(attrs.size());
    args.attrs = attrs.data();
    args.n_inputs = static_cast<uint32_t>(inputs.size());
    args.inputs = inputs.data();
    args.outputs = out.data();
    args.outputs_capacity = static_cast<uint32_t>(out.size());
    ferro_status st = nullptr;
    if (release_gil) {
        nb::gil_scoped_release unlocked;
        st = ferro_op_call(rt->get(), op, &args);
    } else {
        st = ferro_op_call(rt->get(), op, &args);
    }
    check(st);
    n = args.n_outputs;
    std::vector<Tensor> result;
    result.reserve(n);
    for (uint32_t i = 0; i < n; ++i) result.emplace_back(rt, out[i]);
    return result;
}

AttrList::AttrList(const nb::dict& attrs) {
    const size_t n = attrs.size();
    names_.reserve(n);
    strings_.reserve(n);
    ints_.reserve(n);
    floats_.reserve(n);
    for (auto [key, value] : attrs) {
        names_.push_back(nb::cast<std::string>(key));
        ferro_named_attr a{};
        a.name = names_.back().c_str();
        nb::handle v = value;
        if (nb::isinstance<Tensor>(v)) {
            throw nb::type_error(("attribute '" + names_.back() + "': a Tensor is an input, not an attribute").c_str());
        }
        if (v.is_none()) {
            a.value.type = FERRO_ATTR_NONE;
        } else if (PyBool_Check(v.ptr())) {
            a.value.type = FERRO_ATTR_BOOL;
            a.value.v.boolean = v.ptr() == Py_True;
        } else if (PyLong_Check(v.ptr()) || (PyIndex_Check(v.ptr()) && !PyFloat_Check(v.ptr()))) {
            a.value.type = FERRO_ATTR_I64;
            a.value.v.i64 = index_of(v);
        } else if (PyFloat_Check(v.ptr()) || nb::hasattr(v, "__float__")) {
            a.value.type = FERRO_ATTR_F64;
            a.value.v.f64 = nb::cast<double>(nb::float_(v));
        } else if (nb::isinstance<nb::str>(v)) {
            strings_.push_back(nb::cast<std::string>(v));
            a.value.type = FERRO_ATTR_STR;
            a.value.v.str = strings_.back().c_str();
        } else if (nb::isinstance<nb::sequence>(v)) {
            bool all_ints = true;
            for (nb::handle item : v) all_ints = all_ints && !PyFloat_Check(item.ptr()) && PyIndex_Check(item.ptr());
            if (all_ints) {
                auto& ints = ints_.emplace_back();
                for (nb::handle item : v) ints.push_back(index_of(item));
                a.value.type = FERRO_ATTR_I64_ARRAY;
                a.value.count = static_cast<uint32_t>(ints.size());
                a.value.v.i64_array = ints.data();
            } else {
                auto& floats = floats_.emplace_back();
                for (nb::handle item : v) floats.push_back(nb::cast<double>(nb::float_(item)));
                a.value.type = FERRO_ATTR_F64_ARRAY;
                a.value.count = static_cast<uint32_t>(floats.size());
                a.value.v.f64_array = floats.data();
            }
        } else {
            throw nb::type_error(("attribute '" + names_.back() +
                                  "': expected None, bool, int, float, str or a sequence of "
                                  "numbers, got " +
                                  nb::cast<std::string>(nb::str(v.type().attr("__name__"))))
                                     .c_str());
        }
        named_.push_back(a);
    }
}

void bind_tensor(nb::module_& m) {
    nb::class_<Tensor> cls(m, "Tensor", nb::is_weak_referenceable(),
                           "An n-dimensional array on one engine: numpy's semantics (dtype, shape, broadcasting, "
                           "promotion), differentiable (requires_grad, backward, grad).");
    cls.def_prop_ro("shape", &shape_of, "The size of each axis.")
        .def_prop_ro("ndim", &Tensor::ndim)
        .def_prop_ro("size", &Tensor::numel, "The number of elements.")
        .def_prop_ro(
            "dtype", [](const Tensor& t) { return numpy_dtype(t.dtype()); }, "numpy's dtype of the elements.")
        .def_prop_ro("itemsize", [](const Tensor& t) { return itemsize(t.dtype()); })
        .def_prop_ro("nbytes", [](const Tensor& t) { return static_cast<int64_t>(itemsize(t.dtype())) * t.numel(); })
        .def_prop_ro("strides", &byte_strides_of, "Bytes to step along each axis (numpy's strides).")
        .def_prop_ro(
            "device", [](const Tensor& t) { return std::string(ferro_tensor_engine(t.get())); },
            "The engine holding the data: 'cpu', 'vulkan:0', 'cuda:0'.")
        .def_prop_ro("runtime", [](const Tensor& t) { return t.runtime(); })
        .def_prop_ro("_data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(ferro_tensor_data(t.get())); })
        .def_prop_rw(
            "requires_grad", [](const Tensor& t) { return ferro_tensor_requires_grad(t.get()) != 0; },
            [](Tensor& t, bool on) { check(ferro_tensor_set_requires_grad(t.get(), on)); },
            "Whether ops on it record for backward; settable on leaves of f32, f64, c64, c128.")
        .def_prop_rw(
            "grad",
            [](const Tensor& t) {
                ferro_tensor g = nullptr;
                check(ferro_tensor_grad(t.get(), &g));
                return maybe(t.runtime(), g);
            },
            [](Tensor& t, nb::handle value) {
                if (!value.is_none()) throw nb::value_error("grad: only None can be assigned (it clears the gradient)");
                check(ferro_tensor_clear_grad(t.get()));
            },
            nb::arg("value").none(), "The gradient accumulated by backward (a leaf's), or None.")
        .def_prop_ro(
            "grad_fn",
            [](const Tensor& t) -> std::optional<std::string> {
                const char* op = ferro_tensor_grad_fn(t.get());
                if (op == nullptr) return std::nullopt;
                return std::string(op);
            },
            "The op that recorded this tensor ('core.matmul', 'program'), None for a leaf.")
        .def_prop_ro(
            "tangent",
            [](const Tensor& t) {
                ferro_tensor out = nullptr;
                check(ferro_tensor_tangent(t.get(), &out));
                return maybe(t.runtime(), out);
            },
            "Forward mode: the tangent this tensor carries (ferro.jvp), or None.")
        .def(
            "backward",
            [](const Tensor& t, std::optional<Tensor> gradient, bool retain_graph, bool create_graph) {
                ferro_status st = nullptr;
                {
                    nb::gil_scoped_release unlocked;
                    st = ferro_backward(t.runtime()->get(), t.get(), gradient ? gradient->get() : nullptr, retain_graph,
                                        create_graph);
                }
                check(st);
            },
            nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = false, nb::arg("create_graph") = false,
            "Reverse mode from this tensor into the .grad of the leaves it depends on (gradient: the seed; "
            "omitted for one element).")
        .def(
            "detach",
            [](const Tensor& t) {
                ferro_tensor out = nullptr;
                check(ferro_tensor_detach(t.get(), &out));
                return Tensor(t.runtime(), out);
            },
            "The same memory without autograd state (a leaf).")
        .def(
            "to",
            [](const Tensor& t, const std::string& engine) {
                ferro_tensor out = nullptr;
                ferro_status st = nullptr;
                {
                    nb::gil_scoped_release unlocked;
                    st = ferro_tensor_to(t.runtime()->get(), t.get(), engine.c_str(), &out);
                }
                check(st);
                return Tensor(t.runtime(), out);
            },
            nb::arg("device"), "A copy on another engine (ops never move data between engines implicitly).");

    const auto op_slot = [&](const char* name, CoreOp op, bool reflected) {
        cls.def(
            name, [op, reflected](const Tensor& a, nb::handle b) { return binary(op, a, b, reflected); },
            nb::arg("other").none());
    };
    op_slot("__add__", kAdd, false);
    op_slot("__radd__", kAdd, true);
    op_slot("__sub__", kSub, false);
    op_slot("__rsub__", kSub, true);
    op_slot("__mul__", kMul, false);
    op_slot("__rmul__", kMul, true);
    op_slot("__truediv__", kDiv, false);
    op_slot("__rtruediv__", kDiv, true);
    op_slot("__matmul__", kMatmul, false);
    op_slot("__rmatmul__", kMatmul, true);
    op_slot("__pow__", kPow, false);
    op_slot("__rpow__", kPow, true);
    op_slot("__eq__", kEq, false);
    op_slot("__ne__", kNe, false);
    op_slot("__lt__", kLt, false);
    op_slot("__le__", kLe, false);
    op_slot("__gt__", kGt, false);
    op_slot("__ge__", kGe, false);
    cls.def("__neg__", [](const Tensor& a) {
        return call1(a.runtime(), a.runtime()->core(kNeg), {a.get()}, a.numel() >= kReleaseGilElements);
    });
    cls.def(
        "copy",
        [](const Tensor& a) { return call1(a.runtime(), a.runtime()->core(kCopy), {a.get()}, a.numel() >= kReleaseGilElements); },
        "A copy in new memory (differentiable).");
    cls.attr("__hash__") = nb::none();

    m.def(
        "call",
        [](const std::string& op, const std::vector<Tensor>& inputs, const nb::dict& attrs, std::optional<RuntimeRef> runtime) {
            const RuntimeRef rt = runtime_of(inputs, runtime);
            const ferro_op handle = rt->find(op);
            const AttrList list(attrs);
            return call_op(rt, handle, handles(inputs), list.get(), true);
        },
        nb::arg("op"), nb::arg("inputs"), nb::arg("attrs") = nb::dict(), nb::arg("runtime") = nb::none(),
        "Calls any op by qualified name ('linalg.svd') and returns its outputs as a list.");
    m.def(
        "_operand", [](const Tensor& like, nb::handle obj) { return operand(like, obj); }, nb::arg("like"), nb::arg("obj").none(),
        "`obj` as an operand next to `like` (Python scalars typed by numpy 2's rule).");
    m.def("vjp", &vjp, nb::arg("outputs"), nb::arg("cotangents"), nb::arg("inputs"), nb::arg("create_graph") = false,
          "The cotangents of `inputs` for `outputs` weighted by `cotangents` (None entries: ones for one-element outputs); "
          "None where no gradient reaches an input.");
    m.def(
        "make_dual",
        [](const Tensor& primal, const Tensor& tangent) {
            ferro_tensor out = nullptr;
            check(ferro_tensor_make_dual(primal.runtime()->get(), primal.get(), tangent.get(), &out));
            return Tensor(primal.runtime(), out);
        },
        nb::arg("primal"), nb::arg("tangent"), "Forward mode: `primal` carrying `tangent`.");
    m.def("grad_enabled", [] { return ferro_grad_enabled() != 0; });
    m.def("_no_grad_push", [] { ferro_no_grad_push(); });
    m.def("_no_grad_pop", [] { ferro_no_grad_pop(); });
}

}  // namespace ferro_py
