// The comm family in one process (the self module): rank and size, every collective's values
// and shapes, the errors infer gives, the adopted-communicator checks, and the rules, by
// gradcheck and second order. The multi-process behaviour is test_comm_mpi.cpp's.
#include "comm_test.hpp"

#include <ferro/gradcheck.hpp>

#include <complex>
#include <functional>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("comm: one process is rank 0 of 1, through the C++ and C APIs and comm.info", "[comm]") {
    const Runtime rt = comm_runtime();
    const Runtime::RankSize rs = rt.rank_size();
    CHECK(rs.rank == 0);
    CHECK(rs.size == 1);
    int64_t rank = -1, size = -1;
    REQUIRE(ferro_runtime_rank_size(rt.get(), &rank, &size) == nullptr);
    CHECK(rank == 0);
    CHECK(size == 1);
    const Tensor info = rt.call("comm.info", {}).at(0);
    CHECK(info.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
    comm::barrier(rt);
}

TEST_CASE("comm: without the comm plugin, rank_size says which op is missing", "[comm]") {
    const Runtime rt = make_runtime();
    check_error([&] { (void)rt.rank_size(); }, FERRO_NOT_FOUND, "comm.info");
}

TEST_CASE("comm: every collective of one process is its input, reshaped where the op says", "[comm]") {
    const Runtime rt = comm_runtime();
    const std::vector<double> v = rank_values(0, 6);
    const Tensor x = rt.tensor(v, {2, 3});
    for (const char* op : {"sum", "max", "min"}) {
        INFO(op);
        const Tensor y = comm::allreduce(x, op);
        CHECK(y.shape() == Shape{2, 3});
        check_close(y.to_vector<double>(), v, 0, 0);
    }
    const Tensor strided = x.transpose(0, 1);  // a view: packed in row-major order
    check_close(comm::allreduce(strided).to_vector<double>(), strided.contiguous().to_vector<double>(), 0, 0);
    const Tensor gathered = comm::allgather(x);
    CHECK(gathered.shape() == Shape{1, 2, 3});
    check_close(gathered.to_vector<double>(), v, 0, 0);
    const Tensor scattered = comm::reduce_scatter(x.reshape({1, 6}));
    CHECK(scattered.shape() == Shape{6});
    check_close(scattered.to_vector<double>(), v, 0, 0);
    check_close(comm::broadcast(x).to_vector<double>(), v, 0, 0);
    check_close(comm::reduce(x).to_vector<double>(), v, 0, 0);
    const Tensor z = rt.tensor<std::complex<double>>({{1, 2}, {3, -4}}, {2});
    CHECK(comm::allreduce(z).to_vector<std::complex<double>>() == z.to_vector<std::complex<double>>());
    const Tensor i = rt.tensor<int64_t>({5, -7}, {2});
    CHECK(comm::allreduce(i, "min").to_vector<int64_t>() == std::vector<int64_t>{5, -7});
    const Tensor f = rt.tensor<float>({1.5f}, {});
    CHECK(comm::allreduce(f).to_vector<float>() == std::vector<float>{1.5f});
}

TEST_CASE("comm: bad calls are errors naming the op, the argument and what came", "[comm]") {
    const Runtime rt = comm_runtime();
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    check_error([&] { comm::allreduce(rt.tensor<bool>({true}, {1})); }, FERRO_INVALID_ARGUMENT,
                "comm.allreduce: input x must be f32, f64, c64, c128 or i64; got bool");
    check_error([&] { comm::allreduce(x, "prod"); }, FERRO_INVALID_ARGUMENT,
                "comm.allreduce: op must be sum, max or min; got 'prod'");
    check_error([&] { comm::allreduce(x.to(DType::c128), "max"); }, FERRO_INVALID_ARGUMENT,
                "comm.allreduce: op max needs a real dtype; x is c128");
    check_error([&] { comm::broadcast(x, 1); }, FERRO_INVALID_ARGUMENT,
                "comm.broadcast: root 1 is not a rank of this communicator (size 1)");
    check_error([&] { comm::reduce(x, -1); }, FERRO_INVALID_ARGUMENT, "comm.reduce: root -1 is not a rank");
    check_error([&] { comm::reduce_scatter(x); }, FERRO_INVALID_ARGUMENT,
                "comm.reduce_scatter: input x must have a leading axis of length 1 (the communicator's size); got length 3");
    check_error([&] { comm::reduce_scatter(rt.scalar(1.0)); }, FERRO_INVALID_ARGUMENT, "got a scalar");
    check_error([&] { comm::allgather(x, -2); }, FERRO_INVALID_ARGUMENT,
                "comm.allgather: timeout must be a finite number of seconds >= 0; got -2");
}

TEST_CASE("comm: the adopted communicator is checked: its kind, its handle, its size", "[comm]") {
    const int64_t handle = 0;
    SECTION("a kind that is not a short lower-case name") {
        check_error(
            [&] {
                comm_runtime({sizeof(ferro_communicator), 0, "MPI!", &handle, sizeof handle});
            },
            FERRO_INVALID_ARGUMENT, "options->communicator.kind must be a short lower-case name");
    }
    SECTION("no handle") {
        check_error(
            [&] {
                comm_runtime({sizeof(ferro_communicator), 0, "mpi", nullptr, 8});
            },
            FERRO_INVALID_ARGUMENT, "options->communicator.handle");
    }
    SECTION("no bytes") {
        check_error(
            [&] {
                comm_runtime({sizeof(ferro_communicator), 0, "mpi", &handle, 0});
            },
            FERRO_INVALID_ARGUMENT, "options->communicator.bytes must be the size of the communicator handle");
    }
    SECTION("a kind the plugin does not know: no module, and the reason in the error") {
        const Runtime rt = comm_runtime({sizeof(ferro_communicator), 0, "nccl", &handle, sizeof handle});
        check_error([&] { (void)rt.rank_size(); }, FERRO_FAILED_PRECONDITION,
                    "comm.info: this runtime has no communicator: comm: the runtime was given a communicator of kind "
                    "'nccl'; this plugin knows 'mpi'");
    }
}

namespace {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

void check_grad(const std::string& what, const Fn& f, const Tensor& x) {
    INFO(what);
    const GradcheckResult r = gradcheck(f, {x});
    INFO(r.report);
    CHECK(r.ok);
}

}  // namespace

TEST_CASE("comm grad: every collective's VJP and JVP against finite differences, f64 and c128", "[comm]") {
    const Runtime rt = comm_runtime();
    for (DType dt : {DType::f64, DType::c128}) {
        const Tensor x = rt.tensor(random_values(6, 7), {2, 3}).to(dt);
        const std::string d = dtype_name(dt);
        check_grad(
            "allreduce sum " + d, [](const std::vector<Tensor>& v) { return std::vector{comm::allreduce(v[0])}; }, x);
        check_grad(
            "allgather " + d, [](const std::vector<Tensor>& v) { return std::vector{comm::allgather(v[0])}; }, x);
        check_grad(
            "reduce_scatter " + d,
            [](const std::vector<Tensor>& v) {
                return std::vector{comm::reduce_scatter(v[0].reshape({1, 6}))};
            },
            x);
        check_grad(
            "broadcast " + d, [](const std::vector<Tensor>& v) { return std::vector{comm::broadcast(v[0])}; }, x);
        check_grad(
            "reduce " + d, [](const std::vector<Tensor>& v) { return std::vector{comm::reduce(v[0])}; }, x);
        if (dt == DType::f64) {
            check_grad(
                "allreduce max", [](const std::vector<Tensor>& v) { return std::vector{comm::allreduce(v[0], "max")}; }, x);
            check_grad(
                "allreduce min", [](const std::vector<Tensor>& v) { return std::vector{comm::allreduce(v[0], "min")}; }, x);
        }
    }
}

TEST_CASE("comm grad: second order through the rules", "[comm]") {
    const Runtime rt = comm_runtime();
    const Tensor A = rt.tensor(random_values(6, 11), {2, 3});
    const Tensor V = rt.tensor(random_values(6, 12), {2, 3}), W = rt.tensor(random_values(6, 13), {2, 3});
    check_second_order(
        [](const Tensor& a) {
            const Tensor y = comm::allgather(comm::allreduce(a * a));
            return (comm::reduce_scatter(y) * comm::broadcast(a)).sum();
        },
        A, V, W, 1e-6);
    check_second_order([](const Tensor& a) { return (comm::allreduce(a * a, "max") * a).sum(); }, A, V, W, 1e-6);
}
