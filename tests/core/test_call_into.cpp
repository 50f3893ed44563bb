// Bound calls (ferro_op_bind) and calls that write into the caller's tensors
// (ferro_op_call_args.into): both are shortcuts of an ordinary call, so these tests check that
// they give its answers, on every layout of destination, and refuse what they cannot do with
// the op's name and the reason.
#include "ferro_test.hpp"

#include <cstring>

using namespace ferro;
using namespace ferro::test;

namespace {

Tensor sum_of(const Tensor& x, Shape axes) { return x.call("core.sum", {Attr("axes", std::move(axes))}); }

uint64_t allocations(const Runtime& rt) { return rt.engine_memory().allocations; }

}  // namespace

TEST_CASE("bound calls: the results of the eager call, each input signature planned once", "[core]") {
    Runtime rt = make_runtime();
    const BoundOp sum0(rt, "core.sum", {Attr("axes", Shape{0})});
    const Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor b = rt.tensor<double>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
    CHECK(sum0(a).to_vector<double>() == std::vector<double>{5, 7, 9});
    const auto planned = rt.plan_cache_stats();
    // Alternating signatures: each is prepared once; a transposed view is another signature.
    for (int i = 0; i < 3; ++i) {
        CHECK(sum0(a).to_vector<double>() == std::vector<double>{5, 7, 9});
        CHECK(sum0(b).to_vector<double>() == std::vector<double>{16, 20});
        CHECK(sum0(a.transpose(0, 1)).to_vector<double>() == std::vector<double>{6, 15});
    }
    CHECK(rt.plan_cache_stats().misses == planned.misses + 2);
    CHECK(sum0.all({a}).size() == 1);
    // Operators and ops without attributes bind too.
    const BoundOp add(rt, "core.add");
    CHECK(add(a, a).to_vector<double>() == std::vector<double>{2, 4, 6, 8, 10, 12});
}

TEST_CASE("bound calls: attributes are checked at bind, and fixed", "[core]") {
    Runtime rt = make_runtime();
    check_error([&] { BoundOp(rt, "core.sum", {Attr("axis", Shape{0})}); }, FERRO_INVALID_ARGUMENT,
                "core.sum: unknown attribute 'axis' (accepted: axes, keepdim)");
    check_error([&] { BoundOp(rt, "core.sum", {Attr("keepdim", "yes")}); }, FERRO_INVALID_ARGUMENT,
                "core.sum: attribute 'keepdim' expects bool, got str");
    check_error([&] { BoundOp(rt, "core.no_such_op"); }, FERRO_NOT_FOUND, "core.no_such_op");
    // The caller's strings and arrays may change after bind: the bound call keeps copies.
    int64_t axes[1] = {1};
    ferro_named_attr attr{};
    attr.name = "axes";
    attr.value.type = FERRO_ATTR_I64_ARRAY;
    attr.value.count = 1;
    attr.value.v.i64_array = axes;
    ferro_op op = nullptr;
    check(ferro_op_find(rt.get(), "core.sum", &op));
    ferro_bound_call bound = nullptr;
    check(ferro_op_bind(rt.get(), op, &attr, 1, &bound));
    axes[0] = 0;
    const Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    ferro_tensor in = a.get(), out = nullptr;
    ferro_op_call_args args{sizeof args, 0, nullptr, 1, 1, &in, &out, 0, 0};
    check(ferro_bound_call_run(bound, &args));
    CHECK(Tensor(a.runtime_ref(), out).to_vector<double>() == std::vector<double>{6, 15});
    args.n_attrs = 1;
    args.attrs = &attr;
    ferro_status st = ferro_bound_call_run(bound, &args);
    REQUIRE(st != nullptr);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("core.sum: a bound call's attributes are fixed at bind"));
    ferro_status_free(st);
    ferro_bound_call_destroy(bound);
    ferro_bound_call_destroy(nullptr);
    // A handle of another runtime is refused.
    Runtime other = make_runtime();
    st = ferro_op_bind(other.get(), op, nullptr, 0, &bound);
    REQUIRE(st != nullptr);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("ferro_op_bind: core.sum: the op handle belongs to runtime " +
                                                         std::to_string(ferro_runtime_id(rt.get())) + ", not to runtime " +
                                                         std::to_string(ferro_runtime_id(other.get()))));
    ferro_status_free(st);
}

TEST_CASE("into: a destination laid out as the output is written in place, allocating nothing", "[core]") {
    Runtime rt = make_runtime();
    // Large enough for the engine to allocate outputs (smaller ones live in the tensor's block).
    const Tensor a = rt.randn({8, 8}, DType::f64, 1);
    const Tensor b = rt.randn({8}, DType::f64, 2);
    const std::vector<double> want = (a + b).to_vector<double>();
    const BoundOp add(rt, "core.add");
    Tensor out = rt.zeros({8, 8});
    add.into(out, a, b);  // plans on the first run
    CHECK(out.to_vector<double>() == want);
    const uint64_t before = allocations(rt);
    add.into(out, b, a);
    CHECK(allocations(rt) == before);
    CHECK(out.to_vector<double>() == want);
    // A view of a destination at its start is written in place too; the eager call through
    // the C API takes destinations as well.
    Tensor sums = rt.zeros({64});
    call_into(rt, "core.sum", {a}, {sums.slice(0, 0, 8)}, {Attr("axes", Shape{0})});
    std::vector<double> got = sums.to_vector<double>();
    const std::vector<double> column_sums = sum_of(a, {0}).to_vector<double>();
    CHECK(std::vector<double>(got.begin(), got.begin() + 8) == column_sums);
    CHECK(std::vector<double>(got.begin() + 8, got.end()) == std::vector<double>(56, 0.0));
}

TEST_CASE("into: views, strided and overlapping destinations get the eager call's values", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    const BoundOp neg(rt, "core.neg");
    // A view at an offset, a transposed view and a strided slice: written through a copy, the
    // rest of the buffer untouched.
    Tensor buffer = rt.full({4, 3}, 7.0);
    neg.into(buffer.slice(0, 1, 3), a);
    CHECK(buffer.to_vector<double>() == std::vector<double>{7, 7, 7, -1, -2, -3, -4, -5, -6, 7, 7, 7});
    Tensor t = rt.zeros({3, 2});
    neg.into(t.transpose(0, 1), a);
    CHECK(t.to_vector<double>() == std::vector<double>{-1, -4, -2, -5, -3, -6});
    Tensor wide = rt.full({2, 6}, 9.0);
    neg.into(wide.slice(1, 0, 6, 2), a);
    CHECK(wide.to_vector<double>() == std::vector<double>{-1, 9, -2, 9, -3, 9, -4, 9, -5, 9, -6, 9});
    // In place: the destination is the input.
    Tensor x = a.neg().neg();
    neg.into(x, x);
    CHECK(x.to_vector<double>() == std::vector<double>{-1, -2, -3, -4, -5, -6});
    const BoundOp matmul(rt, "core.matmul");
    Tensor m = rt.tensor<double>({1, 2, 3, 4}, {2, 2});
    matmul.into(m, m, m);
    CHECK(m.to_vector<double>() == std::vector<double>{7, 10, 15, 22});
    // A host op (a view) copies its result in.
    Tensor tr = rt.zeros({3, 2});
    call_into(rt, "core.transpose", {a}, {tr}, {Attr("dim0", 0), Attr("dim1", 1)});
    CHECK(tr.to_vector<double>() == std::vector<double>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("into: destinations that do not fit are refused with the op and the reason", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    const BoundOp neg(rt, "core.neg");
    const uint32_t bad = FERRO_INVALID_ARGUMENT;
    check_error([&] { neg.into(rt.zeros({2, 3}, DType::f32), a); }, bad, "core.neg: out tensor 0 is f32, the output is f64");
    check_error(
        [&] {
            neg.into(rt.zeros({3, 2}), a);
        },
        bad, "core.neg: out tensor 0 has shape [3, 2], the output has shape [2, 3]");
    check_error(
        [&] {
            neg.into(rt.zeros({3}).expand({2, 3}), a);
        },
        bad, "core.neg: out tensor 0 (strides [0, 1]) holds some elements more than once");
    check_error(
        [&] {
            neg.into({rt.zeros({2, 3}), rt.zeros({2, 3})}, {a});
        },
        bad, "core.neg: 2 out tensor(s) given, the op has 1 output(s)");
    check_error(
        [&] {
            call_into(rt, "core.transpose", {a}, {rt.zeros({2, 3})}, {Attr("dim0", 0), Attr("dim1", 1)});
        },
        bad, "core.transpose: out tensor 0 has shape [2, 3], the output has shape [3, 2]");
    // into given with no count.
    ferro_op op = nullptr;
    check(ferro_op_find(rt.get(), "core.neg", &op));
    ferro_tensor in = a.get(), dst = rt.zeros({2, 3}).get();
    ferro_op_call_args args{sizeof args, 0, nullptr, 1, 0, &in, nullptr, 0, 0, &dst, 0, 0};
    ferro_status st = ferro_op_call(rt.get(), op, &args);
    REQUIRE(st != nullptr);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("core.neg: into is given but n_into is 0"));
    ferro_status_free(st);
    // A caller built against 1.6 (a shorter struct) is an ordinary call, whatever follows it.
    ferro_tensor out = nullptr;
    ferro_op_call_args old{FERRO_STRUCT_SIZE_UP_TO(ferro_op_call_args, reserved), 0, nullptr, 1, 1, &in, &out, 0, 0, &dst, 1, 0};
    check(ferro_op_call(rt.get(), op, &old));
    REQUIRE(old.n_outputs == 1);
    CHECK(Tensor(a.runtime_ref(), out).to_vector<double>() == std::vector<double>{-1, -2, -3, -4, -5, -6});
}

TEST_CASE("into: no gradient is recorded, so calls that would record or propagate one are refused", "[core][autodiff]") {
    Runtime rt = make_runtime();
    Tensor w = rt.tensor<double>({1, 2, 3}, {3});
    w.set_requires_grad();
    const BoundOp neg(rt, "core.neg");
    Tensor out = rt.zeros({3});
    const uint32_t bad = FERRO_INVALID_ARGUMENT;
    check_error([&] { neg.into(out, w); }, bad,
                "core.neg: input 0 requires grad, and a call with out tensors records no gradient");
    check_error([&] { neg.into(out, w * 2.0); }, bad, "core.neg: input 0 requires grad");
    {
        NoGrad guard;
        neg.into(out, w);
    }
    CHECK(out.to_vector<double>() == std::vector<double>{-1, -2, -3});
    check_error([&] { neg.into(w, out); }, bad,
                "core.neg: out tensor 0 requires grad, was computed by a recorded op or carries a tangent");
    const Tensor dual = make_dual(rt.tensor<double>({1, 2, 3}, {3}), rt.tensor<double>({1, 0, 0}, {3}));
    check_error([&] { neg.into(out, dual); }, bad, "core.neg: input 0 carries a tangent");
    // Without out tensors the bound call records as the eager call does.
    const Tensor y = sum_of(neg(w), {0});
    CHECK(grad({y}, {w})[0].to_vector<double>() == std::vector<double>{-1, -1, -1});
}

TEST_CASE("into: a tensor a grad node saved for its backward is not written into, nor its views", "[core][autodiff]") {
    Runtime rt = make_runtime();
    Tensor w = rt.tensor<double>({1, 2, 3, 4}, {2, 2});
    w.set_requires_grad();
    const Tensor x = rt.tensor<double>({5, 6, 7, 8}, {2, 2});  // plain: mul saves it for w's gradient
    const Tensor y = (x * w).sum();
    const BoundOp neg(rt, "core.neg");
    const Tensor other = rt.ones({2, 2});
    const std::string saved =
        "core.neg: out tensor 0 (or a tensor sharing its memory) is saved by a grad node for a "
        "backward pass not run yet";
    check_error([&] { neg.into(x, other); }, FERRO_INVALID_ARGUMENT, saved);
    check_error([&] { neg.into(x.transpose(), other); }, FERRO_INVALID_ARGUMENT, saved);  // a view: the same memory
    CHECK(x.to_vector<double>() == std::vector<double>{5, 6, 7, 8});
    y.backward();  // releases what the graph saved
    CHECK(w.grad().to_vector<double>() == std::vector<double>{5, 6, 7, 8});
    neg.into(x, other);
    CHECK(x.to_vector<double>() == std::vector<double>{-1, -1, -1, -1});
    {
        const Tensor dropped = (x * w).sum();  // saves x again
        check_error([&] { neg.into(x, other); }, FERRO_INVALID_ARGUMENT, saved);
    }  // the graph goes with its root: nothing saves x any more
    neg.into(x, x);
    CHECK(x.to_vector<double>() == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("into: a destination that is also an input gets the values computed from the input as it was", "[core]") {
    Runtime rt = make_runtime();
    // A view op writing into its own input: its result is a view of the destination.
    Tensor x = rt.tensor<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
    call_into(rt, "core.transpose", {x}, {x}, {Attr("dim0", 0), Attr("dim1", 1)});
    CHECK(x.to_vector<double>() == std::vector<double>{1, 4, 7, 2, 5, 8, 3, 6, 9});
    // A product into one of its factors, large enough that the gemm reads A after writing C.
    const int64_t n = 300;
    const Tensor a = rt.randn({n, n}, DType::f64, 5);
    const Tensor b = rt.randn({n, n}, DType::f64, 6);
    const std::vector<double> want = a.matmul(b).to_vector<double>();
    Tensor c = a.neg().neg();  // a copy of a
    BoundOp(rt, "core.matmul").into(c, c, b);
    check_close(c.to_vector<double>(), want, 1e-12, 1e-12);
}

TEST_CASE("bound calls: a plugin's executor writes into destinations within the host's bounds checks", "[core]") {
    Runtime rt = make_runtime();
    rt.load_plugin(corpus_file("bad_family"));
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    const BoundOp scale(rt, "fixture_bad.scale");
    Tensor out = rt.zeros({3});
    scale.into(out, x);
    CHECK(out.to_vector<double>() == std::vector<double>{2, 4, 6});
    // The session knows the destination's buffer and nothing beyond it.
    check_error([&] { BoundOp(rt, "fixture_bad.out_of_bounds").into(rt.zeros({3}), x); }, FERRO_INVALID_ARGUMENT,
                "session copy_strided: operand 'out' reaches outside its buffer");
}

TEST_CASE("bound calls: one that ran keeps its plugin loaded until it is destroyed", "[core]") {
    Runtime rt = make_runtime();
    rt.load_plugin(corpus_file("bad_family"));
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    {
        const BoundOp scale(rt, "fixture_bad.scale");
        CHECK(scale(x).to_vector<double>() == std::vector<double>{2, 4, 6});
        check_error([&] { rt.unload_plugin("fixture_bad"); }, FERRO_FAILED_PRECONDITION,
                    "plugin 'fixture_bad' still has 1 live object(s) (tensors on its engines, plans of calls in "
                    "flight or of bound calls that ran its ops)");
    }
    rt.unload_plugin("fixture_bad");
    check_error([&] { BoundOp(rt, "fixture_bad.scale"); }, FERRO_NOT_FOUND, "fixture_bad.scale");
}
