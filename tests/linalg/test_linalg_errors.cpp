// linalg error paths: every message names the op and the argument, and says what was expected
// and what came; numerical failures say which matrix of the batch failed and why. NaN and Inf
// never crash.
#include "linalg_test.hpp"

#include <ferro/family/linalg.hpp>

#include <algorithm>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("linalg errors: shapes and dtypes are checked before any work", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor rect = rt.zeros({3, 4});
    check_error([&] { linalg::inv(rect); }, FERRO_INVALID_ARGUMENT,
                "linalg.inv: input 0 must be square ([..., n, n]), got shape [3, 4]");
    check_error([&] { linalg::det(rt.zeros({4})); }, FERRO_INVALID_ARGUMENT,
                "linalg.det: input 0 must be a matrix or a batch of matrices ([..., m, n]), got shape [4]");
    check_error(
        [&] {
            linalg::svd(rt.zeros({2, 2}, DType::i64));
        },
        FERRO_INVALID_ARGUMENT, "linalg.svd: input 0 must be f32, f64, c64 or c128, got i64");
    check_error(
        [&] {
            linalg::solve(rt.eye(3), rt.zeros({4, 2}));
        },
        FERRO_INVALID_ARGUMENT,
        "linalg.solve: input 1 (B) has shape [4, 2], expected [..., 3, k] to match input 0 of shape [3, 3]");
    check_error([&] { linalg::solve(rt.eye(3), rt.zeros({4})); }, FERRO_INVALID_ARGUMENT,
                "linalg.solve: input 1 (b) has shape [4], expected [3]");
    check_error(
        [&] {
            linalg::solve(rt.zeros({2, 3, 3}), rt.zeros({4, 3, 1}));
        },
        FERRO_INVALID_ARGUMENT, "linalg.solve: the batch shapes of input 0 [2] and input 1 [4] do not broadcast");
    check_error(
        [&] {
            linalg::solve(rt.eye(3), rt.zeros({3, 1}, DType::f32));
        },
        FERRO_INVALID_ARGUMENT, "linalg.solve: input 1 (B) must have input 0's dtype f64, got f32");
    check_error([&] { linalg::qr(rect, "raw"); }, FERRO_INVALID_ARGUMENT,
                "linalg.qr: attribute mode must be \"reduced\", \"complete\" or \"r\", got \"raw\"");
    check_error([&] { linalg::eigh(rt.eye(2), "X"); }, FERRO_INVALID_ARGUMENT,
                "linalg.eigh: attribute uplo must be \"L\" or \"U\", got \"X\"");
}

TEST_CASE("linalg errors: singular and non-positive-definite matrices name the batch element and the pivot", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        // Batch [2, 2]: element [1, 0] is singular (its second row is twice its first).
        std::vector<double> v;
        for (int b = 0; b < 4; ++b) {
            const std::vector<double> good = {2, 1, 1, 3}, bad = {1, 2, 2, 4};
            const auto& m = b == 2 ? bad : good;
            v.insert(v.end(), m.begin(), m.end());
        }
        const Tensor A = rt.tensor<double>(v, {2, 2, 2, 2}).to(dt);
        check_error([&] { linalg::inv(A); }, FERRO_INVALID_ARGUMENT,
                    "linalg.inv: matrix [1, 0] of the batch is singular: U[1, 1] of its LU factorisation is exactly zero");
        check_error(
            [&] {
                linalg::solve(A, rt.zeros({2, 1}, dt));
            },
            FERRO_INVALID_ARGUMENT, "linalg.solve: matrix [1, 0] of the batch is singular");
        check_error([&] { linalg::solve(A.slice(0, 1, 2).slice(1, 0, 1).squeeze(), rt.zeros({2}, dt)); }, FERRO_INVALID_ARGUMENT,
                    "linalg.solve: the matrix is singular");
        check_error(
            [&] {
                linalg::solve_with_lu(A, rt.zeros({2, 1}, dt));
            },
            FERRO_INVALID_ARGUMENT,
            "linalg.solve_with_lu: matrix [1, 0] of the batch is singular: U[1, 1] of its LU factorisation");
        // Not positive definite at the leading minor of order 2.
        const Tensor N = rt.tensor<double>({1, 2, 2, 1}, {2, 2}).to(dt);
        check_error(
            [&] { linalg::cholesky(N); }, FERRO_INVALID_ARGUMENT,
            "linalg.cholesky: the matrix is not positive definite: its leading minor of order 2 is not positive definite");
    }
}

TEST_CASE("linalg errors: NaN and Inf inputs never crash", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    for (double bad : {nan, inf}) {
        const Tensor A = rt.tensor<double>({1, bad, 0, 1}, {2, 2});
        check_error([&] { linalg::svd(A); }, FERRO_INVALID_ARGUMENT, "linalg.svd: the matrix contains NaN or Inf");
        check_error([&] { linalg::svdvals(A.unsqueeze(0)); }, FERRO_INVALID_ARGUMENT,
                    "linalg.svdvals: matrix [0] of the batch contains NaN or Inf");
        check_error([&] { linalg::eigh(A.mT()); }, FERRO_INVALID_ARGUMENT, "linalg.eigh: the matrix contains NaN or Inf");
        // The LU and Cholesky paths propagate NaN/Inf into their results or report a failure.
        for (const auto& run : std::vector<std::function<void()>>{[&] { linalg::det(A); }, [&] { linalg::slogdet(A); },
                                                                  [&] { linalg::inv(A); }, [&] { linalg::solve(A, rt.eye(2)); },
                                                                  [&] { linalg::cholesky(A); }, [&] { linalg::qr(A); }}) {
            try {
                run();
            } catch (const Error& e) {
                CHECK(e.code() == FERRO_INVALID_ARGUMENT);
            }
        }
    }
}

TEST_CASE("linalg errors: engines other than cpu get no module, and the call says why", "[linalg]") {
    Runtime rt = linalg_runtime();
    rt.load_plugin(corpus_file("good_engine"));  // engine fixture:0, host memory but no cpu context
    const Tensor A = rt.tensor<double>({1, 0, 0, 1}, {2, 2}, "fixture:0");
    check_error([&] { linalg::inv(A); }, FERRO_UNIMPLEMENTED, "linalg.inv: no module can run it on engine 'fixture:0'");
    check_error([&] { linalg::inv(A); }, FERRO_UNIMPLEMENTED,
                "the LAPACK module runs on host memory with the cpu engine's context (ferro.cpu.ctx.v1); engine fixture:0 has");
}

TEST_CASE("linalg errors: derivatives that do not exist say so", "[linalg]") {
    const Runtime rt = linalg_runtime();
    Tensor A = random_matrix(rt, {5, 3}, DType::f64, 40);
    A.set_requires_grad();
    const auto [Q, R] = linalg::qr(A, "complete");
    check_error([&] { Q.sum().backward(); }, FERRO_NOT_DIFFERENTIABLE,
                "linalg.qr: mode \"complete\" with more rows than columns has no derivative (the last 2 columns of Q are "
                "not determined by A); use mode \"reduced\"");
}

TEST_CASE("linalg errors: losses that depend on the phase of complex eigen- and singular vectors are refused", "[linalg]") {
    // PyTorch's test_invariance_error_spectral_decompositions, and the oracle database's error records.
    const Runtime rt = linalg_runtime();
    Tensor A = random_matrix(rt, {3, 3}, DType::c128, 41);
    A.set_requires_grad();
    const auto usv = linalg::svd(A, false);
    check_error([&] { (usv.U + usv.Vh).sum().abs().backward(); }, FERRO_NOT_DIFFERENTIABLE,
                "linalg.svd: the loss depends on the phase of the complex singular vectors");
    check_error([&] { linalg::eig(A).eigenvectors.sum().abs().backward(); }, FERRO_NOT_DIFFERENTIABLE,
                "linalg.eig: the loss depends on the phase of the complex eigenvectors");
    check_error([&] { linalg::eigh(A + mH(A)).eigenvectors.sum().abs().backward(); }, FERRO_NOT_DIFFERENTIABLE,
                "linalg.eigh: the loss depends on the phase of the complex eigenvectors");
    // Phase-invariant losses of the same outputs are fine.
    (linalg::svd(A, false).U.abs().sum() + linalg::eigh(A + mH(A)).eigenvectors.abs().sum()).backward();
    CHECK(A.grad().shape() == Shape{3, 3});
}

TEST_CASE("linalg errors: triangular and LU solves check pivots, shapes and zero diagonals", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor A = rt.tensor<double>({2, 0, 1, 0}, {2, 2});  // lower triangular, zero at [1, 1]
    check_error([&] { linalg::triangular_solve(A, rt.eye(2), false); }, FERRO_INVALID_ARGUMENT,
                "linalg.triangular_solve: the matrix is singular: its diagonal entry [1, 1] is exactly zero");
    check_error([&] { rt.call("linalg.triangular_solve", {A, rt.eye(2)}); }, FERRO_INVALID_ARGUMENT, "upper");
    check_error(
        [&] {
            linalg::triangular_solve(A, rt.zeros({3, 2}), true);
        },
        FERRO_INVALID_ARGUMENT,
        "linalg.triangular_solve: input 1 (B) has shape [3, 2], expected [..., 2, k] to match input 0 of shape [2, 2]");
    check_error(
        [&] {
            linalg::triangular_solve(A, rt.zeros({2, 3}), true, false);
        },
        FERRO_INVALID_ARGUMENT, "expected [..., k, 2] to match input 0");
    const auto [LU, piv] = linalg::lu_factor(rt.tensor<double>({1, 2, 2, 4}, {2, 2}));  // singular: a valid factorisation
    check_error([&] { linalg::lu_solve(LU, piv, rt.eye(2)); }, FERRO_INVALID_ARGUMENT,
                "linalg.lu_solve: the matrix is singular: U[1, 1] of its LU factorisation is exactly zero");
    const Tensor bad = rt.tensor<int64_t>({3, 2}, {2});
    check_error([&] { linalg::lu_solve(LU, bad, rt.eye(2)); }, FERRO_INVALID_ARGUMENT,
                "linalg.lu_solve: the matrix has pivot 0 = 3 (input 1), expected a value in [1, 2]");
    check_error([&] { linalg::lu_unpack(LU, bad); }, FERRO_INVALID_ARGUMENT, "linalg.lu_unpack: the matrix has pivot 0 = 3");
    check_error([&] { linalg::lu_solve(LU, piv.to(DType::f64), rt.eye(2)); }, FERRO_INVALID_ARGUMENT,
                "linalg.lu_solve: input 1 (pivots) must be i64 of shape [2], got f64 [2]");
    // Pivots are not differentiable.
    Tensor X = rt.tensor<double>({1, 2, 3, 4}, {2, 2});
    X.set_requires_grad();
    const auto f = linalg::lu_factor(X);
    CHECK_FALSE(f.pivots.requires_grad());
    check_error([&] { vjp({f.LU.sum()}, {f.pivots}); }, FERRO_NOT_DIFFERENTIABLE,
                "vjp: input 0 is linalg.lu_factor output 1, which is not differentiable");
    const auto plu = linalg::lu(X);
    check_error([&] { vjp({plu.L.sum()}, {plu.P}); }, FERRO_NOT_DIFFERENTIABLE,
                "vjp: input 0 is linalg.lu output 0, which is not differentiable");
}

TEST_CASE("linalg errors: the wrappers' cached op handles follow the runtime, and output counts are checked", "[linalg]") {
    // A runtime without the plugin: the handle lookup fails and says so, and caches nothing.
    const Runtime bare = make_runtime();
    check_error([&] { linalg::cholesky(bare.eye(2)); }, FERRO_NOT_FOUND,
                "no op named 'linalg.cholesky': no loaded plugin provides family 'linalg'");
    check_error([&] { linalg::qr(bare.eye(2)); }, FERRO_NOT_FOUND, "no op named 'linalg.qr'");
    for (int round = 0; round < 2; ++round) {  // each new runtime resolves its own handles
        const Runtime rt = linalg_runtime();
        const Tensor A = rt.tensor<double>({4, 2, 2, 5}, {2, 2});
        check_close(linalg::cholesky(A).to_vector<double>(), std::vector<double>{2, 0, 1, 2});
        const auto [Q, R] = linalg::qr(A);
        check_close(matmul(Q, R).to_vector<double>(), A.to_vector<double>(), 1e-14, 1e-14);
    }
    check_error([&] { linalg::cholesky(bare.eye(2)); }, FERRO_NOT_FOUND, "linalg.cholesky");
    Runtime late = make_runtime();  // the plugin loaded after a failed lookup
    check_error([&] { linalg::det(late.eye(2)); }, FERRO_NOT_FOUND, "no op named 'linalg.det'");
    late.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_linalg.so");
    check_close(linalg::det(late.eye(2) * 3.0).to_vector<double>(), std::vector<double>{9});

    const Runtime rt = linalg_runtime();
    const Tensor A = rt.eye(3);
    check_error([&] { detail::call_n<"linalg.qr", 3>(A, {A.get()}); }, FERRO_INTERNAL, "linalg.qr: expected 3 outputs, got 2");
    check_error([&] { detail::call_n<"linalg.svd", 2>(A, {A.get()}); }, FERRO_OUT_OF_RANGE, "linalg.svd: 3 outputs, capacity 2");
}

TEST_CASE("linalg: the family's ops and version are its public contract's (ferro/family/linalg.hpp)", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Inventory inv = rt.inventory();
    size_t ops = 0;
    for (const OpInfo& op : inv.ops) ops += op.family == "linalg";
    CHECK(ops == static_cast<size_t>(ferro::family::linalg::Op::count));
    for (uint32_t i = 0; i < static_cast<uint32_t>(ferro::family::linalg::Op::count); ++i) {
        const std::string name =
            std::string("linalg.") + ferro::family::linalg::op_name(static_cast<ferro::family::linalg::Op>(i));
        INFO(name);
        CHECK(std::any_of(inv.ops.begin(), inv.ops.end(), [&](const OpInfo& op) { return op.name == name; }));
    }
    for (const FamilyInfo& f : inv.families) {
        if (f.id == "linalg") CHECK(f.version == ferro::family::linalg::kVersion);
    }
}
