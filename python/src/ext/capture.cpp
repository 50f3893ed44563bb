// Capture and replay (docs/capture.md): the calls a function makes, recorded once and replayed
// as a prepared program. ferro.compile builds on these.
#include "common.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace ferro_py {

thread_local bool capturing = false;

namespace {

// A captured program; its runtime lives at least as long.
struct Program {
    RuntimeRef rt;
    std::shared_ptr<ferro_program_impl> program;
};

struct Prepared {
    RuntimeRef rt;
    std::shared_ptr<ferro_prepared_impl> prepared;
    uint32_t n_outputs;

    std::vector<Tensor> run(const std::vector<Tensor>& inputs) const {
        const std::vector<ferro_tensor> in = handles(inputs);
        std::vector<ferro_tensor> out(n_outputs, nullptr);
        uint32_t n = 0;
        ferro_status st = nullptr;
        {
            nb::gil_scoped_release unlocked;
            st = ferro_prepared_run(prepared.get(), in.data(), static_cast<uint32_t>(in.size()), out.data(), n_outputs, &n);
        }
        check(st);
        std::vector<Tensor> result;
        for (uint32_t i = 0; i < n; ++i) result.emplace_back(rt, out[i]);
        return result;
    }
};

ferro_signature signature_of(const Tensor& t) {
    ferro_signature s{};
    s.struct_size = sizeof s;
    s.dtype = t.dtype();
    s.ndim = t.ndim();
    const int64_t* shape = ferro_tensor_shape(t.get());
    const int64_t* strides = ferro_tensor_strides(t.get());
    for (int32_t i = 0; i < s.ndim; ++i) {
        s.shape[i] = shape[i];
        s.strides[i] = strides[i];
    }
    return s;
}

Program capture_end(const RuntimeRef& rt, const std::vector<Tensor>& outputs) {
    const std::vector<ferro_tensor> out = handles(outputs);
    ferro_program program = nullptr;
    capturing = false;
    check(ferro_capture_end(rt->get(), out.data(), static_cast<uint32_t>(out.size()), &program));
    return {rt, std::shared_ptr<ferro_program_impl>(program, ferro_program_destroy)};
}

// `max_shapes`: per input, None (every axis as captured) or a bound per axis (0: not symbolic).
Prepared prepare(const Program& p, const std::vector<Tensor>& examples,
                 const std::optional<std::vector<std::vector<int64_t>>>& max_shapes) {
    std::vector<ferro_signature> sigs;
    for (const auto& t : examples) sigs.push_back(signature_of(t));
    ferro_prepared prepared = nullptr;
    if (max_shapes) {
        if (max_shapes->size() != examples.size()) throw nb::value_error("prepare: one max_shape per input");
        std::vector<int64_t> bounds(examples.size() * FERRO_MAX_NDIM, 0);
        for (size_t i = 0; i < examples.size(); ++i) {
            const auto& b = (*max_shapes)[i];
            if (b.size() > FERRO_MAX_NDIM) throw nb::value_error("prepare: too many dimensions in a max_shape");
            std::copy(b.begin(), b.end(), bounds.begin() + static_cast<std::ptrdiff_t>(i * FERRO_MAX_NDIM));
        }
        check(ferro_program_prepare_bounded(p.program.get(), sigs.data(), bounds.data(), static_cast<uint32_t>(sigs.size()),
                                            &prepared));
    } else {
        check(ferro_program_prepare(p.program.get(), sigs.data(), static_cast<uint32_t>(sigs.size()), &prepared));
    }
    return {p.rt, std::shared_ptr<ferro_prepared_impl>(prepared, ferro_prepared_destroy),
            ferro_program_output_count(p.program.get())};
}

std::string describe(const Prepared& p) {
    uint64_t size = 0;
    const ferro_status st = ferro_prepared_describe(p.prepared.get(), nullptr, 0, &size);
    if (size == 0) check(st);
    ferro_status_free(st);
    std::string doc(size, '\0');
    check(ferro_prepared_describe(p.prepared.get(), doc.data(), size, &size));
    doc.resize(size - 1);
    return doc;
}

}  // namespace

void bind_capture(nb::module_& m) {
    nb::class_<Program>(m, "Program", "The op calls one capture recorded (ferro.capture_begin / capture_end).")
        .def_prop_ro("n_inputs", [](const Program& p) { return ferro_program_input_count(p.program.get()); })
        .def_prop_ro("n_outputs", [](const Program& p) { return ferro_program_output_count(p.program.get()); })
        .def_prop_ro("n_steps", [](const Program& p) { return ferro_program_step_count(p.program.get()); })
        .def("prepare", &prepare, nb::arg("examples"), nb::arg("max_shapes") = nb::none(),
             "The program prepared for inputs like `examples` (dtype and shape; max_shapes: symbolic axes' bounds).");
    nb::class_<Prepared>(m, "PreparedProgram", "A program prepared for its inputs' signatures; call it on new inputs.")
        .def("__call__", &Prepared::run, nb::arg("inputs"))
        .def("describe", &describe, "The prepared program as JSON (steps, plans, memory; ferro-inspect program reads it).")
        .def(
            "memory",
            [](const Prepared& p) {
                ferro_prepared_memory mem{};
                mem.struct_size = sizeof mem;
                check(ferro_prepared_memory_info(p.prepared.get(), &mem));
                return nb::make_tuple(mem.intermediate_bytes, mem.run_bytes);
            },
            "(bytes of the intermediates as eager calls allocate them, bytes a run keeps for them).");
    m.def(
        "capture_begin",
        [](const RuntimeRef& rt, const std::vector<Tensor>& inputs) {
            const std::vector<ferro_tensor> in = handles(inputs);
            check(ferro_capture_begin(rt->get(), in.data(), static_cast<uint32_t>(in.size())));
            capturing = true;
        },
        nb::arg("runtime"), nb::arg("inputs"), "Starts recording this thread's calls on `runtime`; `inputs` are the program's.");
    m.def("capture_end", &capture_end, nb::arg("runtime"), nb::arg("outputs"));
    m.def("capture_abort", [] {
        capturing = false;
        ferro_capture_abort();
    });
}

}  // namespace ferro_py
