// The tape and backward through the public API: gradients of simple compositions against
// their closed forms, accumulation, the errors DESIGN §8 names, and what is freed when.
#include "ferro_test.hpp"

#include <dlpack/dlpack.h>

#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("backward: gradients of a composition match the closed form", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({0.5, -1.0, 2.0}, {3});
    x.set_requires_grad();
    const Tensor w = rt.tensor<double>({1.0, 2.0, 3.0}, {3});
    // L = sum(w * exp(x) + x^2)  ->  dL/dx = w exp(x) + 2x
    const Tensor loss = (w * x.exp() + x * x).sum();
    CHECK(loss.requires_grad());
    loss.backward();
    const auto g = x.grad().to_vector<double>();
    const std::vector<double> xs{0.5, -1.0, 2.0}, ws{1, 2, 3};
    std::vector<double> want;
    for (size_t i = 0; i < 3; ++i) want.push_back(ws[i] * std::exp(xs[i]) + 2 * xs[i]);
    check_close(g, want, 1e-14, 1e-14);
    CHECK_FALSE(w.requires_grad());
    CHECK_FALSE(w.grad());
}

TEST_CASE("backward: broadcasting sums cotangents back to each input's shape", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    Tensor b = rt.tensor<double>({10, 20, 30}, {3});
    Tensor c = rt.tensor<double>({2.0}, {});
    a.set_requires_grad();
    b.set_requires_grad();
    c.set_requires_grad();
    ((a + b) * c).sum().backward();
    check_close(a.grad().to_vector<double>(), std::vector<double>(6, 2.0));
    CHECK(b.grad().shape() == Shape{3});
    check_close(b.grad().to_vector<double>(), std::vector<double>(3, 4.0));
    CHECK(c.grad().shape() == Shape{});
    check_close(c.grad().to_vector<double>(), std::vector<double>{21 + 6 * 20});
}

TEST_CASE("backward: leaf gradients accumulate across calls until cleared", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({3.0}, {1});
    x.set_requires_grad();
    (x * x).sum().backward();
    (x * x).sum().backward();
    check_close(x.grad().to_vector<double>(), std::vector<double>{12.0});
    x.clear_grad();
    CHECK_FALSE(x.grad());
    (x * 5.0).sum().backward();
    check_close(x.grad().to_vector<double>(), std::vector<double>{5.0});
}

TEST_CASE("backward: a non-scalar root needs a seed, and the seed must fit", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({1, 2}, {2});
    x.set_requires_grad();
    const Tensor y = x * 3.0;
    check_error([&] { y.backward(); }, FERRO_INVALID_ARGUMENT,
                "backward: the root has shape [2]; a seed (its cotangent) is required unless it has one element");
    check_error(
        [&] {
            y.backward(rt.tensor<double>({1, 2, 3}, {3}));
        },
        FERRO_INVALID_ARGUMENT, "backward: the seed of the root has shape [3], expected [2]");
    y.backward(rt.tensor<double>({1, -1}, {2}));
    check_close(x.grad().to_vector<double>(), std::vector<double>{3, -3});
}

TEST_CASE("backward: a second pass through freed saved tensors asks for retain_graph", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({2.0}, {1});
    x.set_requires_grad();
    const Tensor y = (x * x).sum();
    y.backward(Tensor(), /*retain_graph=*/true);
    y.backward();  // the retained graph is still whole
    check_close(x.grad().to_vector<double>(), std::vector<double>{8.0});
    check_error([&] { y.backward(); }, FERRO_FAILED_PRECONDITION,
                "backward: core.mul (node 2 of 2 from the root): its saved tensors were freed by an earlier "
                "backward; pass retain_graph");
}

TEST_CASE("backward: roots that do not require grad or are not differentiable are refused", "[autodiff]") {
    Runtime rt = make_runtime();
    const Tensor plain = rt.tensor<double>({1.0}, {1});
    check_error([&] { plain.sum().backward(); }, FERRO_INVALID_ARGUMENT, "backward: the root does not require grad");
    Tensor x = rt.tensor<double>({1.0, -2.0}, {2});
    x.set_requires_grad();
    const Tensor positive = x.call("core.gt", {}, {rt.scalar(0.0)});
    CHECK_FALSE(positive.requires_grad());
    check_error([&] { positive.to(DType::f64).sum().backward(); }, FERRO_INVALID_ARGUMENT, "does not require grad");
}

TEST_CASE("requires_grad: only floating and complex leaves", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor i = rt.tensor<int64_t>({1, 2}, {2});
    check_error([&] { i.set_requires_grad(); }, FERRO_INVALID_ARGUMENT,
                "requires_grad: only floating and complex tensors can require grad, this one is i64");
    Tensor x = rt.tensor<double>({1.0}, {1});
    x.set_requires_grad();
    Tensor y = x * 2.0;
    check_error([&] { y.set_requires_grad(false); }, FERRO_INVALID_ARGUMENT,
                "requires_grad: the tensor is the output of 'core.mul'; only leaves can change it");
    Tensor leaf = y.detach();
    CHECK_FALSE(leaf.requires_grad());
    leaf.set_requires_grad();
    (leaf * leaf).sum().backward();
    check_close(leaf.grad().to_vector<double>(), std::vector<double>{4.0});
    CHECK_FALSE(x.grad());  // detach cut the graph
}

TEST_CASE("grad mode: NoGrad records nothing, and scopes nest", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({1.0}, {1});
    x.set_requires_grad();
    CHECK(ferro_grad_enabled() == 1);
    {
        NoGrad outer;
        CHECK_FALSE((x * 2.0).requires_grad());
        {
            NoGrad inner;
            CHECK(ferro_grad_enabled() == 0);
        }
        CHECK(ferro_grad_enabled() == 0);
    }
    CHECK(ferro_grad_enabled() == 1);
    CHECK((x * 2.0).requires_grad());
    ferro_no_grad_pop();  // unmatched: ignored
    CHECK(ferro_grad_enabled() == 1);
}

TEST_CASE("vjp: cotangents of leaves and intermediates without touching .grad", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({1.0, 2.0}, {2});
    x.set_requires_grad();
    const Tensor h = x * x;  // intermediate
    const Tensor y = (h * 3.0).sum();
    const auto g = vjp({y}, {x, h});
    check_close(g[0].to_vector<double>(), std::vector<double>{6.0, 12.0});
    check_close(g[1].to_vector<double>(), std::vector<double>{3.0, 3.0});
    CHECK_FALSE(x.grad());
    // An input the outputs do not depend on gets an empty tensor.
    Tensor z = rt.tensor<double>({1.0}, {1});
    z.set_requires_grad();
    const auto unused = vjp({y}, {z});
    CHECK_FALSE(unused[0]);
    // The graph is kept: a second functional pass works.
    check_close(vjp({y}, {x})[0].to_vector<double>(), std::vector<double>{6.0, 12.0});
}

TEST_CASE("backward: complex gradients follow the PyTorch convention", "[autodiff]") {
    Runtime rt = make_runtime();
    using cd = std::complex<double>;
    Tensor z = rt.tensor<cd>({cd(1, 2), cd(-0.5, 0.25)}, {2});
    z.set_requires_grad();
    // L = sum |z|^2 = sum z conj(z): dL/dRe + i dL/dIm = 2 z.
    (z * z.conj()).real().sum().backward();
    check_close(z.grad().to_vector<cd>(), std::vector<cd>{cd(2, 4), cd(-1, 0.5)});
}

namespace {
struct Freed {
    int count = 0;
};
void count_free(void* context) { ++static_cast<Freed*>(context)->count; }

// A tensor over borrowed memory: its deleter runs when the last reference to the memory goes.
Tensor borrowed(const Runtime& rt, std::vector<double>& data, Freed& freed) {
    const int64_t shape[1] = {static_cast<int64_t>(data.size())};
    ferro_tensor t = nullptr;
    check(ferro_tensor_borrow_host(rt.get(), FERRO_DTYPE_F64, 1, shape, nullptr, data.data(), count_free, &freed, &t));
    return {rt.ref(), t};
}
}  // namespace

TEST_CASE("backward: saved tensors are freed after use unless the graph is retained", "[autodiff]") {
    Runtime rt = make_runtime();
    std::vector<double> data{1.0, 2.0};
    Freed freed;
    Tensor x = rt.tensor<double>({3.0, 4.0}, {2});
    x.set_requires_grad();
    Tensor loss;
    {
        const Tensor w = borrowed(rt, data, freed);
        loss = (x * w).sum();  // mul saves w for x's gradient
    }
    CHECK(freed.count == 0);  // the graph holds w
    loss.backward(Tensor(), /*retain_graph=*/true);
    CHECK(freed.count == 0);
    loss.backward();
    CHECK(freed.count == 1);  // released as the pass went
    check_close(x.grad().to_vector<double>(), std::vector<double>{2.0, 4.0});
}

TEST_CASE("backward: the engine's allocation stats drop by the saved buffers after backward", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.randn({1000});  // 8000 bytes: engine-allocated, not kept inside the handle
    x.set_requires_grad();
    const uint64_t base = rt.engine_memory().live_bytes;
    Tensor loss = (x.exp() * rt.randn({1000}, DType::f64, 3)).sum();  // saves exp(x) and the factor
    const uint64_t with_graph = rt.engine_memory().live_bytes;
    CHECK(with_graph >= base + 2 * 8000);
    loss.backward(Tensor(), /*retain_graph=*/true);
    const uint64_t retained = rt.engine_memory().live_bytes;
    CHECK(retained >= with_graph);  // plus x.grad; nothing saved was freed
    x.clear_grad();
    loss.backward();
    x.clear_grad();
    CHECK(rt.engine_memory().live_bytes + 2 * 8000 <= with_graph);  // the saved buffers are gone
    loss = Tensor();
    CHECK(rt.engine_memory().live_bytes == base);
    CHECK(rt.engine_memory().allocations > 0);
    check_error([&] { rt.engine_memory("nope"); }, FERRO_NOT_FOUND, "nope");
}

TEST_CASE("backward: the engine's peak bytes count from their reset, across threads", "[autodiff]") {
    Runtime rt = make_runtime();
    CHECK(rt.engine_memory().peak_bytes == 0);  // no peak kept before the first reset
    Tensor kept = rt.randn({1000});
    const uint64_t live = rt.engine_memory().live_bytes;
    rt.reset_engine_memory_peak();
    CHECK(rt.engine_memory().peak_bytes == live);
    {
        const Tensor a = rt.randn({2000}), b = rt.randn({3000});  // 16000 + 24000 bytes at once
    }
    const Tensor c = rt.randn({1000});
    CHECK(rt.engine_memory().peak_bytes == live + 40000);
    std::thread([&] { const Tensor d = rt.randn({10000}); }).join();  // 80000 bytes on another thread
    CHECK(rt.engine_memory().peak_bytes == live + 8000 + 80000);
    rt.reset_engine_memory_peak();  // restarts at what is live now: kept and c
    CHECK(rt.engine_memory().peak_bytes == live + 8000);
    kept = Tensor();  // a buffer allocated before the reset, freed after it
    const Tensor e = rt.randn({1000});
    CHECK(rt.engine_memory().peak_bytes == live + 8000);
    check_error([&] { rt.reset_engine_memory_peak("nope"); }, FERRO_NOT_FOUND, "nope");
}

TEST_CASE("backward: a .grad recorded with create_graph does not keep its leaf alive", "[autodiff]") {
    Runtime rt = make_runtime();
    std::vector<double> data{1.0, 2.0};
    Freed freed;
    {
        Tensor x = borrowed(rt, data, freed).detach();
        x.set_requires_grad();
        (x * x * x).sum().backward(Tensor(), false, /*create_graph=*/true);
        CHECK(x.grad().requires_grad());  // 3 x^2, recorded: refers back to x
    }
    CHECK(freed.count == 1);  // no cycle through x -> .grad -> graph -> x
}

TEST_CASE("backward: a chain of 10^6 tiny ops back-propagates and is destroyed", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({1.0}, {1});
    x.set_requires_grad();
    Tensor y = x;
    const Tensor scale = rt.scalar(1.0);
    for (int i = 0; i < 1000000; ++i) y = y * scale;
    y.sum().backward();
    check_close(x.grad().to_vector<double>(), std::vector<double>{1.0});
    y = Tensor();  // dropping the last reference frees the whole chain without recursion
}

TEST_CASE("requires_grad: a tensor that requires grad is not exported for writing", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({1.0, 2.0}, {2});
    x.set_requires_grad();
    DLManagedTensor* managed = nullptr;
    const ferro_status st = ferro_tensor_to_dlpack(x.get(), &managed);
    REQUIRE(st != nullptr);
    CHECK(ferro_status_code(st) == FERRO_FAILED_PRECONDITION);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("the tensor requires grad; export a detached tensor"));
    ferro_status_free(st);
    check(ferro_tensor_to_dlpack(x.detach().get(), &managed));
    managed->deleter(managed);
}

TEST_CASE("c api: autodiff entry points check their arguments", "[autodiff]") {
    Runtime rt = make_runtime();
    auto code_of = [](ferro_status st) {
        const uint32_t code = ferro_status_code(st);
        ferro_status_free(st);
        return code;
    };
    ferro_tensor out = nullptr;
    CHECK(code_of(ferro_tensor_set_requires_grad(nullptr, 1)) == FERRO_INVALID_ARGUMENT);
    CHECK(code_of(ferro_tensor_grad(nullptr, &out)) == FERRO_INVALID_ARGUMENT);
    CHECK(code_of(ferro_backward(rt.get(), nullptr, nullptr, 0, 0)) == FERRO_INVALID_ARGUMENT);
    CHECK(code_of(ferro_vjp(rt.get(), nullptr, nullptr, 0, nullptr, 0, 0, &out)) == FERRO_INVALID_ARGUMENT);
    CHECK(code_of(ferro_tensor_make_dual(rt.get(), nullptr, nullptr, &out)) == FERRO_INVALID_ARGUMENT);
    CHECK(ferro_tensor_requires_grad(nullptr) == 0);
    const Tensor x = rt.tensor<double>({1.0}, {1});
    ferro_tensor in[1] = {x.get()};
    const ferro_status st = ferro_vjp(rt.get(), in, nullptr, 1, in, 1, 0, &out);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("vjp: input 0 does not require grad (mark leaves with requires_grad"));
    ferro_status_free(st);
}
