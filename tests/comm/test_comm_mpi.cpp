// The comm family across processes: this suite runs under mpirun (ctest starts it with 2 ranks,
// and with 3 on 2 cores, oversubscribed). Every rank runs the same test cases in the same
// order; a rank that fails an assertion stops calling collectives, and the others then fail
// with DEADLINE_EXCEEDED after FERRO_COMM_TIMEOUT instead of hanging.
#include "comm_test.hpp"

#include <mpi.h>

#include <complex>
#include <cstdlib>

using namespace ferro;
using namespace ferro::test;

namespace {

int64_t env_rank(const char* name) {
    const char* v = std::getenv(name);
    REQUIRE(v != nullptr);
    return std::atoll(v);
}

struct World {
    Runtime rt = comm_runtime();
    int64_t rank = rt.rank_size().rank, size = rt.rank_size().size;
};

// Sum over ranks q of f(q), element by element.
std::vector<double> over_ranks(int64_t size, const std::function<std::vector<double>(int64_t)>& f) {
    std::vector<double> total = f(0);
    for (int64_t q = 1; q < size; ++q) {
        const std::vector<double> v = f(q);
        for (size_t i = 0; i < total.size(); ++i) total[i] += v[i];
    }
    return total;
}

}  // namespace

TEST_CASE("comm mpi: rank and size are the launcher's", "[comm]") {
    const World w;
    CHECK(w.rank == env_rank("OMPI_COMM_WORLD_RANK"));
    CHECK(w.size == env_rank("OMPI_COMM_WORLD_SIZE"));
    REQUIRE(w.size > 1);
    CHECK(w.rt.call("comm.info", {}).at(0).to_vector<int64_t>() == std::vector<int64_t>{w.rank, w.size});
    comm::barrier(w.rt);
}

TEST_CASE("comm mpi: every collective's values, every dtype, strided inputs", "[comm]") {
    const World w;
    const auto mine = [&](double scale = 1.0) { return w.rt.tensor(rank_values(w.rank, 6, scale), {2, 3}); };
    const std::vector<double> sum = over_ranks(w.size, [](int64_t q) { return rank_values(q, 6); });
    check_close(comm::allreduce(mine()).to_vector<double>(), sum, 0, 0);
    check_close(comm::allreduce(mine(), "max").to_vector<double>(), rank_values(w.size - 1, 6), 0, 0);
    check_close(comm::allreduce(mine(), "min").to_vector<double>(), rank_values(0, 6), 0, 0);
    check_close(comm::allreduce(mine().to(DType::f32)).to_vector<float>(), sum, 1e-6, 0);
    check_close(comm::allreduce(mine().to(DType::i64)).to_vector<int64_t>(), sum, 0, 0);
    const Tensor z = mine().to(DType::c128) * w.rt.tensor<std::complex<double>>({{1, -2}}, {});
    std::vector<std::complex<double>> zsum;
    for (double s : sum) zsum.emplace_back(s, -2 * s);
    check_close(comm::allreduce(z).to_vector<std::complex<double>>(), zsum, 1e-15, 0);
    const Tensor strided = mine().transpose(0, 1);
    check_close(comm::allreduce(strided).to_vector<double>(),
                w.rt.tensor(sum, {2, 3}).transpose(0, 1).contiguous().to_vector<double>(), 0, 0);

    const Tensor gathered = comm::allgather(mine());
    CHECK(gathered.shape() == Shape{w.size, 2, 3});
    std::vector<double> every;
    for (int64_t q = 0; q < w.size; ++q) {
        const std::vector<double> v = rank_values(q, 6);
        every.insert(every.end(), v.begin(), v.end());
    }
    check_close(gathered.to_vector<double>(), every, 0, 0);

    // Rank q sends row r of its [size, 3] input to rank r: y_r = sum over q of x_q[r].
    const Tensor x = w.rt.tensor(rank_values(w.rank, static_cast<size_t>(3 * w.size)), {w.size, 3});
    const std::vector<double> want = over_ranks(w.size, [&](int64_t q) {
        const std::vector<double> v = rank_values(q, static_cast<size_t>(3 * w.size));
        return std::vector<double>(v.begin() + 3 * w.rank, v.begin() + 3 * w.rank + 3);
    });
    check_close(comm::reduce_scatter(x).to_vector<double>(), want, 0, 0);

    const int64_t root = w.size - 1;
    check_close(comm::broadcast(mine(), root).to_vector<double>(), rank_values(root, 6), 0, 0);
    check_close(comm::reduce(mine(), 1).to_vector<double>(), w.rank == 1 ? sum : std::vector<double>(6, 0.0), 0, 0);
    comm::barrier(w.rt);
}

TEST_CASE("comm mpi: gradients of the ranks' summed losses", "[comm]") {
    // Each rank's loss is sum(w_r * op(x_r)); the gradient of their sum on rank r is what the
    // adjoint collective gives, computed here from every rank's known w.
    const World w;
    const auto weights = [](int64_t q) { return rank_values(q, 6, 0.5); };
    const auto x_of = [&](int64_t q) { return w.rt.tensor(rank_values(q, 6), {2, 3}).set_requires_grad(); };
    const Tensor wt = w.rt.tensor(weights(w.rank), {2, 3});
    const std::vector<double> all_w = over_ranks(w.size, weights);
    const auto grad_of = [&](const Tensor& x, const Tensor& y) {
        return ferro::grad({(wt * y).sum()}, {x}).at(0).to_vector<double>();
    };

    Tensor x = x_of(w.rank);
    check_close(grad_of(x, comm::allreduce(x)), all_w, 1e-15, 0);
    x = x_of(w.rank);
    check_close(grad_of(x, comm::allreduce(x, "max")), w.rank == w.size - 1 ? all_w : std::vector<double>(6, 0.0), 1e-15, 0);
    x = w.rt.tensor(rank_values(0, 6), {2, 3}).set_requires_grad();  // a tie on every rank
    std::vector<double> split = all_w;
    for (double& v : split) v /= static_cast<double>(w.size);
    check_close(grad_of(x, comm::allreduce(x, "min")), split, 1e-15, 0);
    x = x_of(w.rank);
    check_close(grad_of(x, comm::broadcast(x, 0)), w.rank == 0 ? all_w : std::vector<double>(6, 0.0), 1e-15, 0);
    x = x_of(w.rank);
    check_close(grad_of(x, comm::reduce(x, w.size - 1)), weights(w.size - 1), 1e-15, 0);

    // allgather: rank r's input reaches slot r of every rank's output.
    x = x_of(w.rank);
    const auto slot_weights = [&](int64_t q) {
        return w.rt.tensor(rank_values(q, static_cast<size_t>(6 * w.size), 0.25), {w.size, 2, 3});
    };
    const Tensor gathered = comm::allgather(x);
    const std::vector<double> g = ferro::grad({(slot_weights(w.rank) * gathered).sum()}, {x}).at(0).to_vector<double>();
    const std::vector<double> want = over_ranks(w.size, [&](int64_t q) {
        const std::vector<double> v = slot_weights(q).to_vector<double>();
        return std::vector<double>(v.begin() + 6 * w.rank, v.begin() + 6 * w.rank + 6);
    });
    check_close(g, want, 1e-15, 0);

    // reduce_scatter: row j of rank r's input reaches rank j's output.
    x = w.rt.tensor(rank_values(w.rank, static_cast<size_t>(3 * w.size)), {w.size, 3}).set_requires_grad();
    const Tensor row_w = w.rt.tensor(rank_values(w.rank, 3, 2.0), {3});
    std::vector<double> rows;
    for (int64_t j = 0; j < w.size; ++j) {
        const std::vector<double> v = rank_values(j, 3, 2.0);
        rows.insert(rows.end(), v.begin(), v.end());
    }
    check_close(ferro::grad({(row_w * comm::reduce_scatter(x)).sum()}, {x}).at(0).to_vector<double>(), rows, 1e-15, 0);

    // Forward mode: the tangent of a sum is the sum of the tangents.
    const Tensor t = w.rt.tensor(rank_values(w.rank, 6, -1.0), {2, 3});
    const auto [out, tangent] = ferro::jvp([](const std::vector<Tensor>& v) { return std::vector{comm::allreduce(v[0])}; },
                                           {w.rt.tensor(rank_values(w.rank, 6), {2, 3})}, {t});
    for (double& v : split) v = 0;
    check_close(tangent.at(0).to_vector<double>(), over_ranks(w.size, [](int64_t q) { return rank_values(q, 6, -1.0); }), 1e-15,
                0);
}

TEST_CASE("comm mpi: second order: the Hessian of sum_r sum(allreduce(x)^2) applied to v", "[comm]") {
    // Each rank's gradient is 2 size y with y = sum_q x_q, and the Hessian-vector product is
    // 2 size sum_q v_q.
    const World w;
    const Tensor x = w.rt.tensor(rank_values(w.rank, 6), {2, 3}).set_requires_grad();
    const Tensor v = w.rt.tensor(rank_values(w.rank, 6, 0.1), {2, 3});
    const Tensor y = comm::allreduce(x);
    const Tensor gx = ferro::grad({(y * y).sum()}, {x}, {}, true).at(0);
    const double s = static_cast<double>(w.size);
    std::vector<double> want = over_ranks(w.size, [](int64_t q) { return rank_values(q, 6); });
    for (double& e : want) e *= 2 * s;
    check_close(gx.to_vector<double>(), want, 1e-15, 0);
    want = over_ranks(w.size, [](int64_t q) { return rank_values(q, 6, 0.1); });
    for (double& e : want) e *= 2 * s;
    check_close(ferro::grad({(gx * v).sum()}, {x}).at(0).to_vector<double>(), want, 1e-14, 0);
}

TEST_CASE("comm mpi: distributed einsum gives every rank the single-process values, gradients and tangents", "[comm]") {
    const World w;
    struct Case {
        const char* subscripts;
        std::vector<Shape> shapes;
        int64_t memory_limit;
        const char* what;
    };
    const Case cases[] = {
        {"ij,jk->ik", {{12, 9}, {9, 10}}, 0, "a matrix product: output labels sliced"},
        {"abc,bcd,cde,dea->ae", {{5, 6, 7}, {6, 7, 5}, {7, 5, 6}, {5, 6, 5}}, 0, "a ring: summed labels sliced"},
        {"abc,bcd,cde,dea->", {{5, 6, 7}, {6, 7, 5}, {7, 5, 6}, {5, 6, 5}}, 2000, "a closed ring under a memory limit"},
        {"ab,bc,cd,da,ae->e", {{6, 7}, {7, 8}, {8, 6}, {6, 6}, {6, 4}}, 600, "a loop and an open leg under a limit"},
    };
    uint32_t seed = 100;
    for (const Case& c : cases) {
        for (DType dt : {DType::f64, DType::c128}) {
            INFO(c.what << ", " << dtype_name(dt));
            std::vector<Tensor> operands;  // the same on every rank
            for (const Shape& s : c.shapes) {
                size_t n = 1;
                for (int64_t d : s) n *= static_cast<size_t>(d);
                Tensor t = w.rt.tensor(random_values(n, seed++), s);
                if (dt == DType::c128) t = t.to(DType::c128) * w.rt.tensor<std::complex<double>>({{0.5, 1.5}}, {});
                operands.push_back(t.set_requires_grad());
            }
            EinsumOptions distributed;
            distributed.distribute = true;
            distributed.memory_limit = c.memory_limit;
            const EinsumPath plan = einsum_path(c.subscripts, operands, distributed);
            CHECK(plan.slices >= w.size);
            const Tensor plain = einsum(c.subscripts, operands), spread = einsum(c.subscripts, operands, distributed);
            check_close(spread.to_vector<std::complex<double>>(), plain.to_vector<std::complex<double>>(), 1e-12, 1e-12);
            // The same loss on every rank: its gradient is the single-process one.
            const Tensor weights = w.rt.tensor(random_values(static_cast<size_t>(plain.numel()), 7), plain.shape()).to(dt);
            const std::vector<Tensor> want = ferro::grad({(plain * weights).sum().real()}, operands);
            const std::vector<Tensor> got = ferro::grad({(spread * weights).sum().real()}, operands);
            for (size_t i = 0; i < operands.size(); ++i) {
                check_close(got[i].to_vector<std::complex<double>>(), want[i].to_vector<std::complex<double>>(), 1e-12, 1e-12);
            }
            std::vector<Tensor> tangents;
            for (const Tensor& o : operands) tangents.push_back(o.detach() * 0.5);
            const auto f = [&](const EinsumOptions& o) {
                return [&, o](const std::vector<Tensor>& v) { return std::vector{einsum(c.subscripts, v, o)}; };
            };
            const auto plain_jvp = ferro::jvp(f({}), operands, tangents);
            const auto spread_jvp = ferro::jvp(f(distributed), operands, tangents);
            check_close(spread_jvp.second.at(0).to_vector<std::complex<double>>(),
                        plain_jvp.second.at(0).to_vector<std::complex<double>>(), 1e-12, 1e-12);
        }
    }
}

TEST_CASE("comm mpi: distributed einsum refuses ranks that planned differently", "[comm]") {
    const World w;
    std::vector<Tensor> operands;
    for (uint32_t i = 0; i < 3; ++i) operands.push_back(w.rt.tensor(random_values(64, 300 + i), {8, 8}));
    EinsumOptions o;
    o.distribute = true;
    o.path = w.rank == 0 ? std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {0, 1}}
                         : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {0, 1}};
    check_error([&] { einsum("ij,jk,kl->il", operands, o); }, FERRO_FAILED_PRECONDITION,
                "einsum: distribute: the ranks planned different sliced contractions");
    o.path = {{1, 2}, {0, 1}};  // agreed: the communicator is still usable
    check_close(einsum("ij,jk,kl->il", operands, o).to_vector<double>(), einsum("ij,jk,kl->il", operands).to_vector<double>(),
                1e-13, 1e-13);
}

TEST_CASE("comm mpi: ranks that disagree on a call's shape all get an error, and the communicator stays usable", "[comm]") {
    const World w;
    const Tensor x = w.rt.tensor(rank_values(w.rank, w.rank == 0 ? 3 : 4), {w.rank == 0 ? 3 : 4});
    check_error([&] { comm::allreduce(x); }, FERRO_INVALID_ARGUMENT,
                "the ranks called it with different arguments (dtype, shape or attributes)");
    check_error([&] { comm::broadcast(w.rt.tensor(rank_values(0, 2), {2}), w.rank == 0 ? 0 : 1); }, FERRO_INVALID_ARGUMENT,
                "different arguments");
    check_close(comm::allreduce(w.rt.scalar(1.0)).to_vector<double>(), std::vector<double>{static_cast<double>(w.size)}, 0, 0);
}

TEST_CASE("comm mpi: a runtime adopts a communicator the application created", "[comm]") {
    const World w;                  // MPI is initialised (by the first runtime) from here on
    MPI_Comm half = MPI_COMM_NULL;  // the even ranks and the odd ranks
    REQUIRE(MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(w.rank % 2), static_cast<int>(w.rank), &half) == MPI_SUCCESS);
    int half_rank = 0, half_size = 0;
    MPI_Comm_rank(half, &half_rank);
    MPI_Comm_size(half, &half_size);
    {
        const Runtime rt = comm_runtime({sizeof(ferro_communicator), 0, FERRO_COMMUNICATOR_MPI, &half, sizeof half});
        const Runtime::RankSize rs = rt.rank_size();
        CHECK(rs.rank == half_rank);
        CHECK(rs.size == half_size);
        const std::vector<double> want =
            over_ranks(w.size, [&](int64_t q) { return q % 2 == w.rank % 2 ? rank_values(q, 4) : std::vector<double>(4, 0.0); });
        check_close(comm::allreduce(rt.tensor(rank_values(w.rank, 4), {4})).to_vector<double>(), want, 0, 0);
        // The world runtime's collectives are on their own communicator, unaffected.
        check_close(comm::allreduce(w.rt.scalar(1.0)).to_vector<double>(), std::vector<double>{static_cast<double>(w.size)}, 0,
                    0);
    }
    MPI_Comm_free(&half);
    const char wrong[2] = {};
    check_error(
        [&] {
            (void)comm_runtime({sizeof(ferro_communicator), 0, FERRO_COMMUNICATOR_MPI, wrong, sizeof wrong}).rank_size();
        },
        FERRO_FAILED_PRECONDITION,
        "comm.info: this runtime has no communicator: comm: the runtime's MPI communicator handle is 2 bytes; an "
        "MPI_Comm of this MPI is 8");
}

TEST_CASE("comm mpi: a rank that stops calling gives the others DEADLINE_EXCEEDED, not a hang", "[comm]") {
    const World w;
    const int64_t failing = w.size - 1;
    const Tensor x = w.rt.scalar(1.0);
    if (w.rank == failing) return;  // as if it had crashed or hung before the collective
    check_error([&] { comm::allreduce(x, "sum", 2.0); }, FERRO_DEADLINE_EXCEEDED,
                "comm.allreduce timed out on rank " + std::to_string(w.rank) + " of " + std::to_string(w.size) +
                    " after 2.000000 s: not every rank joined it");
    check_error([&] { comm::barrier(w.rt, 1.0); }, FERRO_FAILED_PRECONDITION,
                "comm.barrier: this communicator is unusable: comm.allreduce timed out");
}
