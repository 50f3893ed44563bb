// The C API of capture and replay (capture/program.hpp).
#include "c_api/handles.hpp"
#include "capture/describe.hpp"
#include "capture/program.hpp"
#include "host_api/host_api.hpp"

#include <ferro/ferro.h>

#include <fmt/format.h>

struct ferro_program_impl {
    ferro::host::ProgramPtr program;
};
struct ferro_prepared_impl {
    ferro::host::PreparedProgram prepared;
};

using ferro::host::c_api::require;

namespace {

std::span<ferro_tensor_impl* const> tensors(const ferro_tensor* t, uint32_t n, const char* function, const char* what) {
    if (n > 0) require(t, function, what);
    return {t, n};
}

}  // namespace

FERRO_API ferro_status ferro_capture_begin(ferro_runtime* runtime, const ferro_tensor* inputs, uint32_t n_inputs) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_capture_begin", "runtime");
        ferro::host::capture_begin(runtime->runtime, tensors(inputs, n_inputs, "ferro_capture_begin", "inputs"));
    });
}

FERRO_API ferro_status ferro_capture_end(ferro_runtime* runtime, const ferro_tensor* outputs, uint32_t n_outputs,
                                         ferro_program* out_program) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_capture_end", "runtime");
        require(out_program, "ferro_capture_end", "out_program");
        const auto outs = tensors(outputs, n_outputs, "ferro_capture_end", "outputs");
        *out_program = new ferro_program_impl{ferro::host::capture_end(runtime->runtime, outs)};
    });
}

FERRO_API void ferro_capture_abort(void) { ferro::host::capture_abort(); }

FERRO_API uint32_t ferro_program_input_count(ferro_program program) {
    return program != nullptr ? static_cast<uint32_t>(program->program->inputs.size()) : 0;
}
FERRO_API uint32_t ferro_program_output_count(ferro_program program) {
    return program != nullptr ? static_cast<uint32_t>(program->program->outputs.size()) : 0;
}
FERRO_API uint32_t ferro_program_step_count(ferro_program program) {
    return program != nullptr ? static_cast<uint32_t>(program->program->steps.size()) : 0;
}
FERRO_API void ferro_program_destroy(ferro_program program) { delete program; }

FERRO_API ferro_status ferro_program_prepare(ferro_program program, const ferro_signature* inputs, uint32_t n_inputs,
                                             ferro_prepared* out_prepared) {
    return ferro::host::guard([&] {
        require(program, "ferro_program_prepare", "program");
        require(out_prepared, "ferro_program_prepare", "out_prepared");
        if (n_inputs > 0) require(inputs, "ferro_program_prepare", "inputs");
        for (uint32_t i = 0; i < n_inputs; ++i) {
            ferro::host::require_struct_size(inputs[i].struct_size, sizeof(ferro_signature),
                                             fmt::format("ferro_program_prepare: inputs[{}]", i), "ferro_signature");
        }
        *out_prepared = new ferro_prepared_impl{ferro::host::prepare_program(program->program, {inputs, n_inputs})};
    });
}

FERRO_API ferro_status ferro_program_prepare_bounded(ferro_program program, const ferro_signature* inputs,
                                                     const int64_t* max_shapes, uint32_t n_inputs, ferro_prepared* out_prepared) {
    return ferro::host::guard([&] {
        require(program, "ferro_program_prepare_bounded", "program");
        require(out_prepared, "ferro_program_prepare_bounded", "out_prepared");
        if (n_inputs > 0) {
            require(inputs, "ferro_program_prepare_bounded", "inputs");
            require(max_shapes, "ferro_program_prepare_bounded", "max_shapes");
        }
        for (uint32_t i = 0; i < n_inputs; ++i) {
            ferro::host::require_struct_size(inputs[i].struct_size, sizeof(ferro_signature),
                                             fmt::format("ferro_program_prepare_bounded: inputs[{}]", i), "ferro_signature");
        }
        *out_prepared = new ferro_prepared_impl{
            ferro::host::prepare_program(program->program, {inputs, n_inputs}, {max_shapes, size_t{n_inputs} * FERRO_MAX_NDIM})};
    });
}

FERRO_API ferro_status ferro_prepared_run(ferro_prepared prepared, const ferro_tensor* inputs, uint32_t n_inputs,
                                          ferro_tensor* outputs, uint32_t outputs_capacity, uint32_t* out_n_outputs) {
    return ferro::host::guard([&] {
        require(prepared, "ferro_prepared_run", "prepared");
        ferro::host::Outputs outs =
            ferro::host::run_program(prepared->prepared, tensors(inputs, n_inputs, "ferro_prepared_run", "inputs"));
        ferro_op_call_args args{};
        args.struct_size = sizeof args;
        args.outputs = outputs;
        args.outputs_capacity = outputs_capacity;
        ferro::host::give_outputs("ferro_prepared_run", outs, args);
        if (out_n_outputs != nullptr) *out_n_outputs = args.n_outputs;
    });
}

FERRO_API void ferro_prepared_destroy(ferro_prepared prepared) { delete prepared; }

FERRO_API ferro_status ferro_prepared_describe(ferro_prepared prepared, char* buffer, uint64_t capacity, uint64_t* out_size) {
    return ferro::host::guard([&] {
        require(prepared, "ferro_prepared_describe", "prepared");
        require(out_size, "ferro_prepared_describe", "out_size");
        if (capacity > 0) require(buffer, "ferro_prepared_describe", "buffer");
        const std::string doc = ferro::host::describe_prepared(prepared->prepared);
        *out_size = doc.size() + 1;
        if (capacity < doc.size() + 1) {
            throw ferro::host::Error(FERRO_OUT_OF_RANGE,
                                     fmt::format("ferro_prepared_describe: the description needs {} bytes, the buffer has {}",
                                                 doc.size() + 1, capacity));
        }
        std::copy(doc.begin(), doc.end(), buffer);
        buffer[doc.size()] = '\0';
    });
}

FERRO_API ferro_status ferro_prepared_memory_info(ferro_prepared prepared, ferro_prepared_memory* out) {
    return ferro::host::guard([&] {
        require(prepared, "ferro_prepared_memory_info", "prepared");
        require(out, "ferro_prepared_memory_info", "out");
        ferro::host::require_struct_size(out->struct_size, sizeof *out, "ferro_prepared_memory_info", "out");
        out->intermediate_bytes = prepared->prepared.memory.intermediate_bytes;
        out->run_bytes = prepared->prepared.memory.run_bytes;
    });
}
