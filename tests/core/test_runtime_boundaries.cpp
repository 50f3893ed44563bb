// Objects of one runtime used with another, and versioned structs whose struct_size does not
// cover what the host reads: each refused with a message naming both sides, never run.
#include "ferro_test.hpp"

#include <string>
#include <vector>

using namespace ferro;
using namespace ferro::test;

namespace {

std::string id(const Runtime& rt) { return std::to_string(ferro_runtime_id(rt.get())); }

// Takes the code and message of a status that must be an error, and frees it.
std::pair<uint32_t, std::string> failure(ferro_status st) {
    REQUIRE(st != nullptr);
    std::pair<uint32_t, std::string> out{ferro_status_code(st), ferro_status_message(st)};
    ferro_status_free(st);
    return out;
}

}  // namespace

TEST_CASE("runtimes: an op handle of one runtime is refused by another's op calls", "[core]") {
    const Runtime a = make_runtime(), b = make_runtime();
    REQUIRE(id(a) != id(b));
    ferro_op neg_of_b = nullptr;
    check(ferro_op_find(b.get(), "core.neg", &neg_of_b));
    const Tensor x = a.tensor<double>({1, 2}, {2});
    ferro_tensor in = x.get(), out = nullptr;
    ferro_op_call_args args{};
    args.struct_size = sizeof args;
    args.n_inputs = 1;
    args.inputs = &in;
    args.outputs_capacity = 1;
    args.outputs = &out;
    const auto [code, message] = failure(ferro_op_call(a.get(), neg_of_b, &args));
    CHECK(code == FERRO_INVALID_ARGUMENT);
    CHECK(message == "core.neg: the op handle belongs to runtime " + id(b) + ", not to runtime " + id(a) +
                         " that the call is made on (find the op on this runtime)");
    CHECK(out == nullptr);
}

TEST_CASE("runtimes: tensors of two runtimes are not mixed, nor used by the other's calls", "[core]") {
    const Runtime a = make_runtime(), b = make_runtime();
    const Tensor xa = a.tensor<double>({1, 2}, {2});
    const Tensor xb = b.tensor<double>({3, 4}, {2});
    // Both on an engine named "cpu": the message said "input 1 is on engine 'cpu' but input 0 is on 'cpu'".
    check_error([&] { (void)(xa + xb); }, FERRO_INVALID_ARGUMENT,
                "core.add: input 1 belongs to runtime " + id(b) + " but input 0 to runtime " + id(a));
    ferro_tensor in = xb.get(), out = nullptr;
    uint32_t n = 0;
    const auto [code, message] = failure(ferro_call(a.get(), "core.neg", nullptr, 0, &in, 1, &out, 1, &n));
    CHECK(code == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::StartsWith("core.neg: input 0 belongs to runtime " + id(b) + ", not to runtime " + id(a)));
    // An explicit copy through host memory is the way across.
    const Tensor moved = a.tensor<double>(xb.to_vector<double>(), {2});
    CHECK((xa + moved).to_vector<double>() == std::vector<double>{4, 6});
}

TEST_CASE("runtimes: backward and vjp of one runtime's graph are refused by another", "[core]") {
    const Runtime a = make_runtime(), b = make_runtime();
    Tensor w = a.tensor<double>({1, 2}, {2});
    w.set_requires_grad();
    const Tensor loss = (w * w).sum();
    auto [code, message] = failure(ferro_backward(b.get(), loss.get(), nullptr, 0, 0));
    CHECK(code == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::StartsWith("backward: output 0 belongs to runtime " + id(a) + ", not to runtime " + id(b)));
    CHECK_FALSE(static_cast<bool>(w.grad()));
    ferro_tensor outs[] = {loss.get()}, ins[] = {w.get()}, cotangent = nullptr;
    std::tie(code, message) = failure(ferro_vjp(b.get(), outs, nullptr, 1, ins, 1, 0, &cotangent));
    CHECK_THAT(message, Catch::StartsWith("vjp: output 0 belongs to runtime " + id(a)));
    // On its own runtime it works.
    check(ferro_backward(a.get(), loss.get(), nullptr, 0, 0));
    CHECK(w.grad().to_vector<double>() == std::vector<double>{2, 4});
}

TEST_CASE("structs: an op call, a bound call and the host's out-structs check struct_size", "[core]") {
    const Runtime rt = make_runtime();
    ferro_op neg = nullptr;
    check(ferro_op_find(rt.get(), "core.neg", &neg));
    const Tensor x = rt.tensor<double>({1, 2}, {2});
    ferro_tensor in = x.get(), out = nullptr;
    ferro_op_call_args args{};  // struct_size 0: it was accepted and read as a whole struct
    args.n_inputs = 1;
    args.inputs = &in;
    args.outputs_capacity = 1;
    args.outputs = &out;
    const std::string minimum = std::to_string(FERRO_STRUCT_SIZE_UP_TO(ferro_op_call_args, reserved));
    auto [code, message] = failure(ferro_op_call(rt.get(), neg, &args));
    CHECK(code == FERRO_INVALID_ARGUMENT);
    CHECK(message == "core.neg: ferro_op_call_args.struct_size is 0, expected at least " + minimum +
                         " (set struct_size to the struct's sizeof)");
    ferro_bound_call bound = nullptr;
    check(ferro_op_bind(rt.get(), neg, nullptr, 0, &bound));
    std::tie(code, message) = failure(ferro_bound_call_run(bound, &args));
    CHECK_THAT(message, Catch::StartsWith("ferro_bound_call_run: args.struct_size is 0, expected at least " + minimum));
    ferro_bound_call_destroy(bound);
    CHECK(out == nullptr);

    ferro_plan_cache_stats stats{};
    std::tie(code, message) = failure(ferro_runtime_plan_cache_stats(rt.get(), &stats));
    CHECK_THAT(message, Catch::StartsWith("ferro_runtime_plan_cache_stats: out.struct_size is 0"));
    ferro_engine_memory_stats memory{};
    memory.struct_size = sizeof memory - 16;  // a struct from some other header, smaller than the first minor's
    std::tie(code, message) = failure(ferro_runtime_engine_memory(rt.get(), "cpu", &memory));
    CHECK_THAT(message,
               Catch::StartsWith("ferro_runtime_engine_memory: out.struct_size is " + std::to_string(sizeof memory - 16)));
    memory.struct_size = sizeof memory - 8;  // as ABI 1.14 had it: taken, and peak_bytes left alone
    memory.peak_bytes = 12345;
    check(ferro_runtime_engine_memory(rt.get(), "cpu", &memory));
    CHECK(memory.struct_size == sizeof memory - 8);
    CHECK(memory.peak_bytes == 12345);
    ferro_inventory* inv = nullptr;
    check(ferro_runtime_inventory(rt.get(), &inv));
    ferro_plugin_info plugin{};
    std::tie(code, message) = failure(ferro_inventory_plugin(inv, 0, &plugin));
    CHECK_THAT(message, Catch::StartsWith("ferro_inventory_plugin: out.struct_size is 0"));
    CHECK(plugin.name == nullptr);
    ferro_inventory_destroy(inv);
}

TEST_CASE("borrow: a view reaching outside the memory lent is refused, one inside it is used in place", "[core]") {
    const Runtime rt = make_runtime();
    std::vector<double> memory{0, 1, 2, 3, 4, 5, 6, 7};
    const int64_t shape[] = {2, 3};
    const int64_t strides[] = {4, 1};  // rows 4 apart: reaches element 6 from element 0
    ferro_borrow_args args{};
    args.struct_size = sizeof args;
    args.dtype = FERRO_DTYPE_F64;
    args.ndim = 2;
    args.shape = shape;
    args.strides = strides;
    args.data = memory.data() + 1;  // element 0 of the view is memory[1]: the view reaches memory[7]
    args.lent = memory.data();
    args.lent_bytes = memory.size() * sizeof(double);
    ferro_tensor t = nullptr;
    check(ferro_tensor_borrow(rt.get(), &args, &t));
    const Tensor view(rt.ref(), t);
    CHECK(view.to_vector<double>() == std::vector<double>{1, 2, 3, 5, 6, 7});
    memory[5] = 50;  // borrowed, not copied
    CHECK(view.to_vector<double>()[3] == 50);

    args.data = memory.data() + 2;  // now the view would read memory[8], one past the end
    t = nullptr;
    const auto [code, message] = failure(ferro_tensor_borrow(rt.get(), &args, &t));
    CHECK(code == FERRO_INVALID_ARGUMENT);
    CHECK(message == "ferro_tensor_borrow: the view reaches bytes [16, 72) of the memory lent, which holds 64 bytes");
    CHECK(t == nullptr);
    const int64_t backwards[] = {-4, -1};  // negative strides reach before element 0
    args.strides = backwards;
    args.data = memory.data() + 4;
    CHECK_THAT(failure(ferro_tensor_borrow(rt.get(), &args, &t)).second, Catch::Contains("reaches bytes [-16, 40)"));
    args.struct_size = 8;
    CHECK_THAT(failure(ferro_tensor_borrow(rt.get(), &args, &t)).second,
               Catch::StartsWith("ferro_tensor_borrow: args.struct_size is 8"));
}
