// ferro C++ API — capture and replay (docs/capture.md), over ferro.h's ferro_capture_* and
// ferro_program_*. Header-only.
//
//   ferro::Capture capture(rt, {x, w});        // this thread's calls are recorded from here
//   Tensor y = (x.matmul(w) + 1.0).sum();      // they run as usual
//   ferro::Program program = capture.end({y});
//   ferro::PreparedProgram step = program.prepare();  // for the captured dtypes and shapes
//   Tensor y2 = step({x2, w2})[0];              // replays the calls on new inputs
#pragma once

#include <ferro/ferro.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ferro {

// A program prepared for its inputs' signatures: call it on new inputs. Thread-safe.
class PreparedProgram {
public:
    std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const {
        const std::vector<ferro_tensor> in = detail::handles_of(inputs);
        std::vector<ferro_tensor> out(n_outputs_, nullptr);
        uint32_t n = 0;
        check(ferro_prepared_run(prepared_.get(), in.data(), static_cast<uint32_t>(in.size()), out.data(),
                                 static_cast<uint32_t>(out.size()), &n));
        std::vector<Tensor> result;
        result.reserve(n);
        for (uint32_t i = 0; i < n; ++i) result.emplace_back(rt_, out[i]);
        return result;
    }
    // The program as JSON: steps, plans, memory, gradients (ferro_prepared_describe).
    std::string describe() const {
        uint64_t size = 0;
        const ferro_status st = ferro_prepared_describe(prepared_.get(), nullptr, 0, &size);
        if (size == 0) check(st);
        ferro_status_free(st);
        std::string doc(size, '\0');
        check(ferro_prepared_describe(prepared_.get(), doc.data(), size, &size));
        doc.resize(size - 1);
        return doc;
    }
    // What a run keeps for the intermediates, against what the eager calls allocate.
    ferro_prepared_memory memory() const {
        ferro_prepared_memory m{};
        m.struct_size = sizeof m;
        check(ferro_prepared_memory_info(prepared_.get(), &m));
        return m;
    }

private:
    friend class Program;
    struct Destroy {
        void operator()(ferro_prepared p) const noexcept { ferro_prepared_destroy(p); }
    };
    PreparedProgram(detail::RuntimeRef rt, ferro_prepared prepared, uint32_t n_outputs)
        : rt_(std::move(rt)), prepared_(prepared, Destroy{}), n_outputs_(n_outputs) {}
    detail::RuntimeRef rt_;  // declared first: the program goes before its runtime
    std::shared_ptr<ferro_prepared_impl> prepared_;
    uint32_t n_outputs_;
};

// The op calls a Capture recorded, with the signatures of its inputs at capture.
class Program {
public:
    size_t n_inputs() const { return ferro_program_input_count(program_.get()); }
    size_t n_outputs() const { return ferro_program_output_count(program_.get()); }
    size_t n_steps() const { return ferro_program_step_count(program_.get()); }
    // Prepared for the dtypes and shapes it was captured with.
    PreparedProgram prepare() const { return prepare_for(inputs_); }
    // Prepared for inputs of these shapes (each input keeps its dtype and rank).
    PreparedProgram prepare(const std::vector<Shape>& shapes) const {
        std::vector<ferro_signature> sigs = inputs_;
        for (size_t i = 0; i < sigs.size() && i < shapes.size(); ++i) {
            sigs[i].ndim = static_cast<int32_t>(shapes[i].size());
            for (size_t d = 0; d < shapes[i].size() && d < FERRO_MAX_NDIM; ++d) sigs[i].shape[d] = shapes[i][d];
        }
        if (shapes.size() != sigs.size()) sigs.resize(shapes.size(), sigs.empty() ? ferro_signature{} : sigs.back());
        return prepare_for(sigs);
    }
    // Prepared for these shapes, with symbolic axes: `bounds[i][d] > 0` lets axis d of input i
    // take any size up to it at a run (an empty `bounds[i]`, or 0: that axis is fixed).
    PreparedProgram prepare(const std::vector<Shape>& shapes, const std::vector<Shape>& bounds) const {
        std::vector<ferro_signature> sigs = inputs_;
        std::vector<int64_t> max_shapes(sigs.size() * FERRO_MAX_NDIM, 0);
        for (size_t i = 0; i < sigs.size() && i < shapes.size(); ++i) {
            sigs[i].ndim = static_cast<int32_t>(shapes[i].size());
            for (size_t d = 0; d < shapes[i].size() && d < FERRO_MAX_NDIM; ++d) sigs[i].shape[d] = shapes[i][d];
        }
        for (size_t i = 0; i < sigs.size() && i < bounds.size(); ++i) {
            for (size_t d = 0; d < bounds[i].size() && d < FERRO_MAX_NDIM; ++d) max_shapes[i * FERRO_MAX_NDIM + d] = bounds[i][d];
        }
        ferro_prepared p = nullptr;
        check(ferro_program_prepare_bounded(program_.get(), sigs.data(), max_shapes.data(), static_cast<uint32_t>(sigs.size()),
                                            &p));
        return {rt_, p, static_cast<uint32_t>(n_outputs())};
    }

private:
    friend class Capture;
    PreparedProgram prepare_for(const std::vector<ferro_signature>& sigs) const {
        ferro_prepared p = nullptr;
        check(ferro_program_prepare(program_.get(), sigs.data(), static_cast<uint32_t>(sigs.size()), &p));
        return {rt_, p, static_cast<uint32_t>(n_outputs())};
    }
    struct Destroy {
        void operator()(ferro_program p) const noexcept { ferro_program_destroy(p); }
    };
    Program(detail::RuntimeRef rt, ferro_program program, std::vector<ferro_signature> inputs)
        : rt_(std::move(rt)), program_(program, Destroy{}), inputs_(std::move(inputs)) {}
    detail::RuntimeRef rt_;
    std::shared_ptr<ferro_program_impl> program_;
    std::vector<ferro_signature> inputs_;
};

// Records the op calls this thread makes on `rt` from construction to end(); `inputs` are the
// program's inputs, in order. Destroyed without end(), the capture is dropped.
class Capture {
public:
    Capture(const Runtime& rt, const std::vector<Tensor>& inputs) : rt_(rt.ref()) {
        for (const Tensor& t : inputs) {
            ferro_signature s{};
            s.struct_size = sizeof s;
            s.dtype = static_cast<ferro_dtype>(t.dtype());
            s.ndim = t.ndim();
            const Shape shape = t.shape();
            for (size_t d = 0; d < shape.size() && d < FERRO_MAX_NDIM; ++d) s.shape[d] = shape[d];
            inputs_.push_back(s);
        }
        const std::vector<ferro_tensor> in = detail::handles_of(inputs);
        check(ferro_capture_begin(rt.get(), in.data(), static_cast<uint32_t>(in.size())));
        active_ = true;
    }
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;
    ~Capture() {
        if (active_) ferro_capture_abort();
    }

    // Ends the capture: the program computing `outputs`. Throws the first call the capture
    // refused, if any.
    Program end(const std::vector<Tensor>& outputs) {
        active_ = false;
        const std::vector<ferro_tensor> out = detail::handles_of(outputs);
        ferro_program program = nullptr;
        check(ferro_capture_end(rt_.get(), out.data(), static_cast<uint32_t>(out.size()), &program));
        return {rt_, program, std::move(inputs_)};
    }

private:
    detail::RuntimeRef rt_;
    std::vector<ferro_signature> inputs_;
    bool active_ = false;
};

}  // namespace ferro
