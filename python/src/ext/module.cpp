// The _ferro extension module: ferro's C API for the Python package (src/ferro), and the
// translation of failed calls into ferro.Error subclasses.
#include "common.hpp"

namespace ferro_py {
namespace {

// {code: class}, set by ferro/_errors.py at import; kept for the process's life (a static
// nb::object would be released after the interpreter has gone).
PyObject* error_classes = nullptr;

void translate(const std::exception_ptr& p, void*) {
    try {
        std::rethrow_exception(p);
    } catch (const StatusError& e) {
        nb::object cls;
        if (error_classes != nullptr) cls = nb::borrow(PyDict_GetItem(error_classes, nb::int_(e.code).ptr()));
        if (!cls.is_valid()) cls = nb::borrow(PyExc_RuntimeError);
        const char* name = ferro_status_code_name(e.code);
        nb::object error = cls(nb::str(e.message.c_str()));
        nb::setattr(error, "code", nb::int_(e.code));
        nb::setattr(error, "code_name", nb::str(name));
        nb::setattr(error, "phase", nb::int_(e.phase));
        PyErr_SetObject(cls.ptr(), error.ptr());
    }
}

}  // namespace
}  // namespace ferro_py

NB_MODULE(_ferro, m) {
    using namespace ferro_py;
    m.doc() = "ferro's C API for the ferro package";
    nb::register_exception_translator(&translate);
    m.def("_set_error_classes", [](nb::dict classes) {
        Py_XDECREF(error_classes);
        error_classes = classes.inc_ref().ptr();
    });
    bind_runtime(m);
    bind_tensor(m);
    bind_interop(m);
    bind_capture(m);
}
