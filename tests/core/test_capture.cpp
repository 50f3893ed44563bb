// Capture and replay (ferro/capture.hpp, docs/capture.md): a replay equals the eager calls on
// the new inputs, for core and plugin ops, with gradients; what a program cannot replay is
// refused while capturing; mismatched inputs are refused by name.
#include "ferro_test.hpp"

#include <ferro/capture.hpp>
#include <ferro/einsum.hpp>
#include <ferro/fft.hpp>
#include <ferro/gradcheck.hpp>
#include <ferro/inventory.hpp>
#include <ferro/linalg.hpp>

#include <cmath>
#include <thread>

using namespace ferro;
using namespace ferro::test;

namespace {

Runtime runtime_with_plugins() { return make_runtime({build_dir() + "/lib/ferro/plugins"}); }

// Equal element by element, NaN equal to NaN.
bool same_values(const Tensor& a, const Tensor& b) {
    const auto x = detail::values_of(a), y = detail::values_of(b);
    const auto same = [](double u, double v) { return u == v || (std::isnan(u) && std::isnan(v)); };
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::equal(x.begin(), x.end(), y.begin(), y.end(),
                      [&](auto u, auto v) { return same(u.real(), v.real()) && same(u.imag(), v.imag()); });
}

// The computation captured below, as eager calls.
Tensor mlp_loss(const Tensor& x, const Tensor& w) { return ((x.matmul(w)).exp() * 0.5 + x.matmul(w)).sum(); }

}  // namespace

TEST_CASE("capture: a replay equals the eager calls on the new inputs", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({3, 4}, DType::f64, 1), w = rt.rand({4, 2}, DType::f64, 2);
    Capture capture(rt, {x, w});
    const Tensor loss = mlp_loss(x, w);
    const Tensor unused = x.abs();  // nothing the output needs: dropped
    const Program program = capture.end({loss});
    CHECK(program.n_inputs() == 2);
    CHECK(program.n_outputs() == 1);
    CHECK(program.n_steps() == 6);                                              // matmul, exp, mul, matmul, add, sum
    check_close(loss.to_vector<double>(), mlp_loss(x, w).to_vector<double>());  // the capture ran them too
    const PreparedProgram step = program.prepare();
    for (int64_t seed = 10; seed < 13; ++seed) {
        const Tensor x2 = rt.rand({3, 4}, DType::f64, seed), w2 = rt.rand({4, 2}, DType::f64, seed + 100);
        check_close(step({x2, w2}).at(0).to_vector<double>(), mlp_loss(x2, w2).to_vector<double>());
    }
    // Laid out otherwise (a transposed view): the usual path, the same values.
    const Tensor xt = rt.rand({4, 3}, DType::f64, 20).transpose();
    check_close(step({xt, w}).at(0).to_vector<double>(), mlp_loss(xt, w).to_vector<double>());
}

TEST_CASE("capture: plugin ops replay, and outside tensors are constants of the program", "[capture]") {
    Runtime rt = runtime_with_plugins();
    const Tensor a = rt.rand({4, 4}, DType::f64, 3) + rt.eye(4) * 4.0, b = rt.rand({4, 3}, DType::f64, 4);
    const Tensor c = rt.rand({3, 5}, DType::c128, 5);  // read, not declared: a constant
    const auto compute = [&](const Tensor& A, const Tensor& B) {
        const Tensor X = linalg::solve(A, B);
        return std::vector{einsum("ij,jk->ik", {X, fft::fft(c).real()}), linalg::inv(A)};
    };
    Capture capture(rt, {a, b});
    const std::vector<Tensor> outs = compute(a, b);
    const Program program = capture.end(outs);
    const Tensor a2 = rt.rand({4, 4}, DType::f64, 6) + rt.eye(4) * 4.0, b2 = rt.rand({4, 3}, DType::f64, 7);
    const std::vector<Tensor> replayed = program.prepare()({a2, b2}), eager = compute(a2, b2);
    REQUIRE(replayed.size() == 2);
    check_close(replayed[0].to_vector<double>(), eager[0].to_vector<double>());
    check_close(replayed[1].to_vector<double>(), eager[1].to_vector<double>());
}

TEST_CASE("capture: gradients flow through a replay as through the eager calls", "[capture]") {
    Runtime rt = runtime_with_plugins();
    Tensor x = rt.rand({3, 4}, DType::f64, 1), w = rt.rand({4, 2}, DType::f64, 2);
    x.set_requires_grad();
    w.set_requires_grad();
    Capture capture(rt, {x, w});
    const Program program = capture.end({mlp_loss(x, w)});
    Tensor x2 = rt.rand({3, 4}, DType::f64, 8), w2 = rt.rand({4, 2}, DType::f64, 9);
    x2.set_requires_grad();
    w2.set_requires_grad();
    program.prepare()({x2, w2}).at(0).backward();
    Tensor xe = x2.detach(), we = w2.detach();
    xe.set_requires_grad();
    we.set_requires_grad();
    mlp_loss(xe, we).backward();
    check_close(x2.grad().to_vector<double>(), xe.grad().to_vector<double>());
    check_close(w2.grad().to_vector<double>(), we.grad().to_vector<double>());
}

TEST_CASE("capture: inputs of another count, dtype or shape are refused by name", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({2, 3}, DType::f64, 1);
    Capture capture(rt, {x});
    const PreparedProgram step = capture.end({x.exp()}).prepare();
    check_error([&] { step({}); }, FERRO_INVALID_ARGUMENT, "program run: 0 inputs, the program takes 1");
    check_error(
        [&] {
            step({rt.rand({2, 3}, DType::f32, 1)});
        },
        FERRO_INVALID_ARGUMENT, "program run: input 0 is f32 [2, 3], the program was prepared for f64 [2, 3]");
    check_error([&] { step({rt.rand({3}, DType::f64, 1)}); }, FERRO_INVALID_ARGUMENT,
                "program run: input 0 is f64 [3], the program was prepared for f64 [2, 3]");
    check_error([&] { step({Tensor()}); }, FERRO_INVALID_ARGUMENT, "program run: input 0 is NULL");
}

TEST_CASE("capture: a program prepared for other shapes replays them; what its ops refuse names the step", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({3, 4}, DType::f64, 1), w = rt.rand({4, 2}, DType::f64, 2);
    Capture capture(rt, {x, w});
    const Program program = capture.end({mlp_loss(x, w)});
    const PreparedProgram wider = program.prepare({{5, 4}, {4, 3}});
    const Tensor x2 = rt.rand({5, 4}, DType::f64, 3), w2 = rt.rand({4, 3}, DType::f64, 4);
    check_close(wider({x2, w2}).at(0).to_vector<double>(), mlp_loss(x2, w2).to_vector<double>());
    check_error(
        [&] {
            wider({x, w});
        },
        FERRO_INVALID_ARGUMENT, "program run: input 0 is f64 [3, 4], the program was prepared for f64 [5, 4]");
    // A transposed view of the prepared shape: the usual path, the same values.
    const Tensor x2t = rt.rand({4, 5}, DType::f64, 5).transpose();
    check_close(wider({x2t, w2}).at(0).to_vector<double>(), mlp_loss(x2t, w2).to_vector<double>());
    check_error(
        [&] {
            (void)program.prepare({{5, 7}, {4, 3}});
        },
        FERRO_INVALID_ARGUMENT, "program_prepare: step 0 (core.matmul): ");
    check_error(
        [&] {
            (void)program.prepare({{12}, {4, 3}});
        },
        FERRO_INVALID_ARGUMENT,
        "program_prepare: input 0 is f64 [12], the program was captured with f64 [3, 4] (a program keeps each input's "
        "dtype and rank; its shape may change)");
    check_error(
        [&] {
            (void)program.prepare({{3, 4}});
        },
        FERRO_INVALID_ARGUMENT, "program_prepare: 1 input signatures, the program has 2 inputs");
}

TEST_CASE("capture: what a program could not replay is refused while capturing", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({2, 2}, DType::f64, 1);
    const std::string replay = "while capturing; a program could not replay it";
    {
        Capture capture(rt, {x});
        const Tensor y = x.exp();
        check_error([&] { (void)y.to_vector<double>(); }, FERRO_FAILED_PRECONDITION,
                    "ferro_tensor_copy_to_host: a read of tensor data on the host " + replay);
        // The refusal stays with the capture: end() reports it again.
        check_error([&] { (void)capture.end({y}); }, FERRO_FAILED_PRECONDITION, "a read of tensor data on the host");
    }
    {
        Capture capture(rt, {x});
        check_error([&] { (void)rt.rand({2}); }, FERRO_FAILED_PRECONDITION,
                    "core.rand: a random sample without a seed (give `seed`) " + replay);
        (void)rt.rand({2}, DType::f64, 7);  // seeded: replayable
    }
    {
        Capture capture(rt, {x});
        const BoundOp exp(rt, "core.exp");
        check_error([&] { exp.into(x, x); }, FERRO_FAILED_PRECONDITION,
                    "core.exp: a write into existing tensors (into, out=) " + replay);
        check_error([&] { Capture again(rt, {x}); }, FERRO_FAILED_PRECONDITION, "captures do not nest");
    }
    {
        const Tensor xt = x.transpose();  // a view of the input made before the capture
        Capture capture(rt, {x});
        check_error([&] { (void)(xt * 2.0); }, FERRO_FAILED_PRECONDITION,
                    "core.mul: an input over the memory of a value of the capture that no recorded call made " + replay);
        (void)(x.transpose() * 2.0);  // made while capturing: replayable
    }
    {
        Capture capture(rt, {x});
        const Tensor outside = rt.tensor<double>({1.0, 2.0}, {2});  // made without a call
        check_error([&] { (void)capture.end({outside}); }, FERRO_INVALID_ARGUMENT,
                    "capture_end: output 0 is not a value of the capture");
    }
    // Each capture above ended (or was dropped): calls are not recorded any more.
    check_close(x.exp().to_vector<double>(), x.exp().to_vector<double>());
}

TEST_CASE("concurrency: one prepared program runs on several threads at once", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({8, 8}, DType::f64, 1), w = rt.rand({8, 8}, DType::f64, 2);
    Capture capture(rt, {x, w});
    const PreparedProgram step = capture.end({mlp_loss(x, w)}).prepare();
    std::vector<Tensor> inputs;
    for (int i = 0; i < 4; ++i) inputs.push_back(rt.rand({8, 8}, DType::f64, 30 + i));
    std::vector<double> got(4), want(4);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            for (int k = 0; k < 50; ++k) got[i] = step({inputs[i], w}).at(0).item<double>();
        });
    }
    for (auto& t : threads) t.join();
    for (int i = 0; i < 4; ++i) want[i] = mlp_loss(inputs[i], w).item<double>();
    check_close(got, want);
}

TEST_CASE("capture: a capture records its own thread's calls only, and ends with its thread", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({4}, DType::f64, 1);
    Capture capture(rt, {x});
    const Tensor y = x.exp();
    std::thread([&] {
        (void)x.sin();               // another thread: runs, is not recorded
        const Capture own(rt, {x});  // its own capture, dropped when the thread ends
        (void)x.cos();
    }).join();
    const Program program = capture.end({y.neg()});
    CHECK(program.n_steps() == 2);  // exp, neg
    check_close(program.prepare()({x}).at(0).to_vector<double>(), x.exp().neg().to_vector<double>());
}

TEST_CASE("capture: a run keeps its intermediates in memory reused by liveness", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({1000}, DType::f64, 1), y = rt.rand({1000}, DType::f64, 2);
    const auto chain = [](const Tensor& a, const Tensor& b) {
        Tensor t = a;
        for (int i = 0; i < 10; ++i) t = (t * b + a).tanh();  // 30 steps, each value read once
        return t;
    };
    Capture capture(rt, {x, y});
    const Program program = capture.end({chain(x, y)});
    REQUIRE(program.n_steps() == 30);
    setenv("FERRO_FUSE", "0", 1);  // one step per call (fused, nothing would reach memory)
    const PreparedProgram step = program.prepare();
    unsetenv("FERRO_FUSE");
    const ferro_prepared_memory m = step.memory();
    CHECK(m.intermediate_bytes == 29 * 8000);  // every step's output but the last, the program's
    CHECK(m.run_bytes == 2 * 8000);            // a step's input and its output at a time
    for (int64_t seed = 3; seed < 6; ++seed) {
        const Tensor x2 = rt.rand({1000}, DType::f64, seed), y2 = rt.rand({1000}, DType::f64, seed + 10);
        check_close(step({x2, y2}).at(0).to_vector<double>(), chain(x2, y2).to_vector<double>());
    }
}

TEST_CASE("capture: what a run returns is its own, views of intermediates included", "[capture]") {
    Runtime rt = make_runtime();
    const auto compute = [](const Tensor& a) {
        const Tensor t = (a * 2.0).exp();  // an intermediate, then a view of it returned
        return std::vector{t.reshape({6}), (t + 1.0).sum(), a.transpose()};
    };
    const Tensor x = rt.rand({2, 3}, DType::f64, 1);
    Capture capture(rt, {x});
    const PreparedProgram step = capture.end(compute(x)).prepare();
    const Tensor x1 = rt.rand({2, 3}, DType::f64, 2), x2 = rt.rand({2, 3}, DType::f64, 3);
    const std::vector<Tensor> first = step({x1});
    const std::vector<double> view_before = first[0].to_vector<double>();
    const std::vector<Tensor> second = step({x2});  // must not write over what the first run returned
    CHECK(first[0].to_vector<double>() == view_before);
    const std::vector<Tensor> eager1 = compute(x1), eager2 = compute(x2);
    for (size_t k = 0; k < 3; ++k) {
        check_close(first[k].to_vector<double>(), eager1[k].to_vector<double>());
        check_close(second[k].to_vector<double>(), eager2[k].to_vector<double>());
    }
}

TEST_CASE("capture: symbolic axes take any size up to their bound; beyond it a run is refused by name", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.rand({3, 4}, DType::f64, 1), w = rt.rand({4, 2}, DType::f64, 2);
    Capture capture(rt, {x, w});
    const Program program = capture.end({mlp_loss(x, w)});
    const PreparedProgram step = program.prepare({{3, 4}, {4, 2}}, {{8, 0}, {}});  // x's rows: 0 to 8
    for (int64_t rows : {3, 5, 8, 1, 5}) {
        const Tensor x2 = rt.rand({rows, 4}, DType::f64, 10 + rows), w2 = rt.rand({4, 2}, DType::f64, 20 + rows);
        check_close(step({x2, w2}).at(0).to_vector<double>(), mlp_loss(x2, w2).to_vector<double>());
    }
    // Gradients through a size of its own.
    Tensor x5 = rt.rand({5, 4}, DType::f64, 30), w5 = rt.rand({4, 2}, DType::f64, 31);
    w5.set_requires_grad();
    const Tensor gw = grad({step({x5, w5}).at(0)}, {w5}).at(0);
    Tensor we = w5.detach().set_requires_grad();
    check_close(gw.to_vector<double>(), grad({mlp_loss(x5, we)}, {we}).at(0).to_vector<double>());
    check_error(
        [&] {
            (void)step({rt.rand({9, 4}, DType::f64, 3), w});
        },
        FERRO_INVALID_ARGUMENT, "program run: input 0 has size 9 on axis 0, beyond its bound 8");
    check_error(
        [&] {
            (void)step({rt.rand({5, 3}, DType::f64, 3), w});
        },
        FERRO_INVALID_ARGUMENT, "program run: input 0 is f64 [5, 3], the program was prepared for f64 [3, 4]");
    check_error(
        [&] {
            (void)program.prepare({{9, 4}, {4, 2}}, {{8, 0}, {}});
        },
        FERRO_INVALID_ARGUMENT, "program_prepare: input 0 has size 9 on axis 0, beyond the bound 8 declared for it");
}

TEST_CASE("capture: every plugin op's examples replay exactly as they ran eagerly", "[capture]") {
    Runtime rt = runtime_with_plugins();
    const Inventory inv = rt.inventory();
    size_t replayed = 0;
    std::vector<std::string> refused;
    for (const OpInfo& op : inv.ops) {
        if (op.family == "core") continue;
        for (DType dt : {DType::f64, DType::c128}) {
            if (std::find(op.dtypes.begin(), op.dtypes.end(), dt) == op.dtypes.end()) continue;
            for (const Runtime::Example& ex : rt.op_examples(op.name, dt)) {
                INFO(op.name << " " << dtype_name(dt) << " " << ex.what);
                const std::vector<Tensor> eager = call_all(rt.ref(), op.name.c_str(), ex.inputs, ex.attrs);
                std::vector<Tensor> program_outputs;
                Capture capture(rt, ex.inputs);
                try {
                    program_outputs = call_all(rt.ref(), op.name.c_str(), ex.inputs, ex.attrs);
                } catch (const Error& e) {  // what a program cannot replay is refused, by name
                    CHECK(e.code() == FERRO_FAILED_PRECONDITION);
                    CHECK_THAT(e.what(), Catch::Contains("while capturing"));
                    refused.push_back(op.name + ": " + e.what());
                    continue;
                }
                const PreparedProgram step = capture.end(program_outputs).prepare();
                std::vector<Tensor> copies;  // new tensors, the same values
                for (const Tensor& t : ex.inputs) copies.push_back(t.detach());
                const std::vector<Tensor> got = step(copies);
                REQUIRE(got.size() == eager.size());
                for (size_t k = 0; k < got.size(); ++k) CHECK(detail::values_of(got[k]) == detail::values_of(eager[k]));
                ++replayed;
            }
        }
    }
    for (const std::string& r : refused) WARN(r);
    CHECK(replayed > 100);
}

TEST_CASE("capture: every core op callable without attributes replays as it ran eagerly on new inputs", "[capture]") {
    Runtime rt = make_runtime();
    const Inventory inv = rt.inventory();
    size_t replayed = 0;
    for (const OpInfo& op : inv.ops) {
        if (op.family != "core" || op.n_inputs < 1 || op.n_inputs > 3) continue;
        if (std::any_of(op.attrs.begin(), op.attrs.end(),
                        [](const OpAttrInfo& a) { return (a.flags & FERRO_ATTR_FLAG_REQUIRED) != 0; })) {
            continue;
        }
        if (op.name == "core.rand" || op.name == "core.randn") continue;  // unseeded: refused, tested above
        for (const Shape& shape : {Shape{3, 4}, Shape{4}}) {
            INFO(op.name << " on [" << shape.size() << "-d]");
            const auto inputs_for = [&](uint32_t seed) {
                std::vector<Tensor> in;
                for (int32_t i = 0; i < op.n_inputs; ++i) {
                    const Tensor t = rt.rand(shape, DType::f64, seed + static_cast<uint32_t>(i)) * 0.5 + 0.25;
                    in.push_back(op.name == "core.where" && i == 0 ? t.to(DType::boolean) : t);
                }
                return in;
            };
            const std::vector<Tensor> first = inputs_for(1), second = inputs_for(11);
            std::vector<Tensor> eager;
            try {
                eager = call_all(rt.ref(), op.name.c_str(), second, {});
            } catch (const Error&) {
                continue;  // not callable on these inputs (a matmul of [3, 4] by [3, 4])
            }
            Capture capture(rt, first);
            const std::vector<Tensor> captured = call_all(rt.ref(), op.name.c_str(), first, {});
            const PreparedProgram step = capture.end(captured).prepare();
            const std::vector<Tensor> got = step(second);
            REQUIRE(got.size() == eager.size());
            for (size_t k = 0; k < got.size(); ++k) CHECK(same_values(got[k], eager[k]));
            ++replayed;
        }
    }
    CHECK(replayed > 60);
}
