// The LU ops: linalg.lu_factor (A = P L U packed as LAPACK's getrf leaves it, pivots 1-based),
// linalg.lu (P, L, U), linalg.lu_unpack (P, L, U from lu_factor's outputs), linalg.lu_solve
// (solves with them) and linalg.solve_with_lu (solve's X and lu_factor's outputs at once).
// getrf factors A itself, from a column-major copy: its pivoting acts on A's rows.
#include "../op_row.hpp"
#include "../rules.hpp"
#include "../triangular.hpp"

namespace ferro::linalg {

// ---- rules shared with solve_with_lu (rules.hpp)
// lu: A = P L U (L m x k unit lower, U k x n upper, P constant). Square: with
// C = L^-1 P^T dA U^-1, dL = L tril(C, -1) and dU = triu(C) U, so
//   gA = P L^-H [tril(L^H gL, -1) + triu(gU U^H)] U^-H.
// Wide (m < n), U = [U1 | U2]: U2 = L^-1 P^T A2. Tall (m > n), L = [L1; L2]: L2 = (P^T A)_2 U^-1.
// lu_factor packs L and U into one matrix: its cotangent splits into tril(., -1) and triu(.).
namespace {
// L^-H phi U^-H with phi = tril(L^H gL, -1) + triu(gU U^H), for square L and U.
TensorRef lu_core_vjp(const Ops& r, Arg L, Arg U, Arg gL, Arg gU) {
    TensorRef phi;
    if (gL.get()) phi = r.tril(r.matmul(r.mH(L), gL), -1);
    if (gU.get()) phi = r.plus(std::move(phi), r.triu(r.matmul(gU, r.mH(U))));
    if (!phi) return {};
    const TensorRef left = r.tri_solve(r.mH(L), phi, /*upper=*/true, /*left=*/true, /*unit=*/true);
    return r.tri_solve(r.mH(U), left, /*upper=*/false, /*left=*/false);
}
}  // namespace

TensorRef lu_backward(const Ops& r, const LuParts& p, TensorRef gL, TensorRef gU) {
    const int64_t m = r.dim(p.L, 2), n = r.dim(p.U, 1), k = r.dim(p.L, 1);
    if (!gL && !gU) return {};
    TensorRef permuted;  // P^T gA
    if (m == n) {
        permuted = lu_core_vjp(r, p.L, p.U, gL.get(), gU.get());
    } else if (m < n) {
        const TensorRef U1 = r.slice(p.U, -1, 0, k), U2 = r.slice(p.U, -1, k, n);
        TensorRef gU1 = gU ? r.slice(gU, -1, 0, k) : TensorRef();
        TensorRef gA2;
        if (gU) {
            const TensorRef gU2 = r.slice(gU, -1, k, n);
            gA2 = r.tri_solve(r.mH(p.L), gU2, true, true, true);  // L^-H gU2
            gL = r.plus(std::move(gL), r.neg(r.matmul(gA2, r.mH(U2))));
        } else {
            gA2 = r.zeros_shaped(p.U, {m, n - k});
        }
        TensorRef gA1 = lu_core_vjp(r, p.L, U1, gL.get(), gU1.get());
        if (!gA1) gA1 = r.zeros_shaped(p.U, {m, k});
        permuted = r.concat(gA1, gA2, -1);
    } else {
        const TensorRef L1 = r.slice(p.L, -2, 0, k), L2 = r.slice(p.L, -2, k, m);
        TensorRef gL1 = gL ? r.slice(gL, -2, 0, k) : TensorRef();
        TensorRef gA2;
        if (gL) {
            const TensorRef gL2 = r.slice(gL, -2, k, m);
            gA2 = r.tri_solve(r.mH(p.U), gL2, false, false);  // gL2 U^-H
            gU = r.plus(std::move(gU), r.neg(r.matmul(r.mH(L2), gA2)));
        } else {
            gA2 = r.zeros_shaped(p.L, {m - k, n});
        }
        TensorRef gA1 = lu_core_vjp(r, L1, p.U, gL1.get(), gU.get());
        if (!gA1) gA1 = r.zeros_shaped(p.L, {k, n});
        permuted = r.concat(gA1, gA2, -2);
    }
    return r.matmul(p.P, permuted);
}

// (dL, dU) from dA.
std::pair<TensorRef, TensorRef> lu_forward(const Ops& r, const LuParts& p, Arg dA) {
    const int64_t m = r.dim(p.L, 2), n = r.dim(p.U, 1), k = r.dim(p.L, 1);
    const TensorRef pdA = r.matmul(r.mH(p.P), dA);  // P^T dA (P is real)
    auto square = [&](Arg L, Arg U, Arg dA1) {
        const TensorRef C = r.tri_solve(U, r.tri_solve(L, dA1, false, true, true), true, false);  // L^-1 dA1 U^-1
        return std::pair{r.matmul(L, r.tril(C, -1)), r.matmul(r.triu(C), U)};
    };
    if (m == n) return square(p.L, p.U, pdA);
    if (m < n) {
        const TensorRef U2 = r.slice(p.U, -1, k, n);
        auto [dL, dU1] = square(p.L, r.slice(p.U, -1, 0, k), r.slice(pdA, -1, 0, k));
        const TensorRef dU2 = r.tri_solve(p.L, r.sub(r.slice(pdA, -1, k, n), r.matmul(dL, U2)), false, true, true);
        return {std::move(dL), r.concat(dU1, dU2, -1)};
    }
    const TensorRef L2 = r.slice(p.L, -2, k, m);
    auto [dL1, dU] = square(r.slice(p.L, -2, 0, k), p.U, r.slice(pdA, -2, 0, k));
    const TensorRef dL2 = r.tri_solve(p.U, r.sub(r.slice(pdA, -2, k, m), r.matmul(L2, dU)), true, false);
    return {r.concat(dL1, dL2, -2), std::move(dU)};
}

// lu_factor's packed LU from the parts that vary: tril(L, -1) and triu(U), m x n.
TensorRef pack_lu(const Ops& r, Arg strict_l, Arg upper_u, int64_t m, int64_t n) {
    const int64_t k = std::min(m, n);
    if (m == n) return r.add(strict_l, upper_u);
    if (m > n) return r.add(strict_l, r.concat(upper_u, r.zeros_shaped(upper_u, {m - k, n}), -2));
    return r.add(r.concat(strict_l, r.zeros_shaped(strict_l, {m, n - k}), -1), upper_u);
}
// (L part, U part) of a packed m x n matrix: tril(X[:, :k], -1) and triu(X[:k, :]).
std::pair<TensorRef, TensorRef> split_lu(const Ops& r, Arg x) {
    const int64_t m = r.dim(x, 2), n = r.dim(x, 1), k = std::min(m, n);
    return {r.tril(r.slice(x, -1, 0, k), -1), r.triu(r.slice(x, -2, 0, k))};
}

LuParts lu_unpacked(const Ops& r, ferro_tensor LU, ferro_tensor pivots) {
    auto plu = r.call_all(linalg_op("linalg.lu_unpack"), {LU, pivots});
    return {std::move(plu[0]), std::move(plu[1]), std::move(plu[2])};
}

namespace {

const ferro_attr_spec lu_solve_attrs[] = {plugin::spec_bool("left", true, "solve A X = B (else X A = B)"),
                                          plugin::spec_bool("adjoint", false, "solve with A^H instead of A")};

template <Op op> ferro_status infer_lu(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, op, false, [&](const MatrixInput& in) {
        if constexpr (op == Op::lu_factor) {
            a->outputs[0] = in.sig;
            a->outputs[1] = out_sig(FERRO_DTYPE_I64, in.batch, {in.k});
            return 2;
        }
        if constexpr (op == Op::lu_unpack) require_pivots(op, a->inputs[1], 1, in.batch, in.k);
        a->outputs[0] = out_sig(in.sig.dtype, in.batch, {in.m, in.m});
        a->outputs[1] = out_sig(in.sig.dtype, in.batch, {in.m, in.k});
        a->outputs[2] = out_sig(in.sig.dtype, in.batch, {in.k, in.n});
        return 3;
    });
}

ferro_status infer_lu_solve(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::lu_solve, true, [&](const MatrixInput& in) {
        require_pivots(Op::lu_solve, a->inputs[1], 1, in.batch, in.n);
        a->outputs[0] = solve_rhs(Op::lu_solve, in.sig, a->inputs[2], 2, a->attrs[0].v.boolean != 0);
        return 1;
    });
}

ferro_status infer_solve_with_lu(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::solve_with_lu, true, [&](const MatrixInput& in) {
        a->outputs[0] = solve_output(Op::solve_with_lu, in, a->inputs[1]);
        // lu_factor's outputs, over X's batch.
        const int x_item_dims = solve_vector_rhs(in.sig, a->inputs[1]) ? 1 : 2;
        const std::span<const int64_t> x_batch = batch_of(a->outputs[0], x_item_dims);
        a->outputs[1] = out_sig(in.sig.dtype, x_batch, {in.n, in.n});
        a->outputs[2] = out_sig(FERRO_DTYPE_I64, x_batch, {in.n});
        return 3;
    });
}

// P, L, U (outputs 0, 1, 2) from packed LU factors (strides lrs, lcs) and 1-based pivots.
template <class T>
void unpack(const MatrixCall<T>& call, Item& item, const T* lu, int64_t lrs, int64_t lcs, const lapack_int* piv) {
    const Plan& p = call.plan();
    const int64_t b = item.b;
    const int64_t m = p.m, n = p.n, k = p.k;
    lapack_int* perm = item.c.take<lapack_int>(m);
    for (int64_t i = 0; i < m; ++i) perm[i] = static_cast<lapack_int>(i);
    for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[piv[i] - 1]);
    T* P = output<T>(call, 0, b);
    const int64_t prs = call.out_stride(0, 2), pcs = call.out_stride(0, 1);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j) P[i * prs + j * pcs] = T(0);
    for (int64_t i = 0; i < m; ++i) P[perm[i] * prs + i * pcs] = T(1);  // row i of L U is row perm[i] of A
    T* L = output<T>(call, 1, b);
    const int64_t Lrs = call.out_stride(1, 2), Lcs = call.out_stride(1, 1);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) L[i * Lrs + j * Lcs] = i > j ? lu[i * lrs + j * lcs] : T(i == j ? 1 : 0);
    T* U = output<T>(call, 2, b);
    const int64_t Urs = call.out_stride(2, 2), Ucs = call.out_stride(2, 1);
    for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) U[i * Urs + j * Ucs] = j >= i ? lu[i * lrs + j * lcs] : T(0);
}

// lu_factor and lu: getrf on A column-major (a zero pivot is a valid, singular, factorisation).
struct LuKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = call.gather_column_major(item);
        lapack_int* piv = item.c.take<lapack_int>(std::max(m, k));
        lapack::getrf(lm, ln, a, std::max<lapack_int>(lm, 1), piv);
        if (p.op == Op::lu) return unpack(call, item, a, 1, m, piv);
        call.store_matrix(0, b, a, 1, m, m, n);
        int64_t* out = output<int64_t>(call, 1, b);
        const int64_t stride = call.out_stride(1, 1);
        for (int64_t i = 0; i < k; ++i) out[i * stride] = piv[i];
    }
};

// lu_unpack: straight from the input views.
struct LuUnpackKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        lapack_int* piv = item.c.take<lapack_int>(std::max(p.m, p.k));
        if (!call.read_pivots(item, 1, p.k, p.m, piv)) return;
        unpack(call, item, input<T>(call, 0, item.b), call.in_stride(0, 2), call.in_stride(0, 1), piv);
    }
};

struct LuSolveKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = call.gather_column_major(item);
        T* x = item.c.take<T>(n * k);
        lapack_int* piv = item.c.take<lapack_int>(n);
        if (!call.read_pivots(item, 1, n, n, piv)) return;
        for (int64_t i = 0; i < n; ++i) {
            if (a[i + i * n] == T(0)) {
                return item.fail(FERRO_INVALID_ARGUMENT, "is singular: U[" + std::to_string(i) + ", " + std::to_string(i) +
                                                             "] of its LU factorisation is exactly zero");
            }
        }
        const ferro_tensor_view& B = call.args().inputs[2];
        const int64_t brs = B.strides[B.ndim - 2], bcs = B.strides[B.ndim - 1];
        if (p.left) {  // op(A) X = B
            copy2d(input<T>(call, 2, b), brs, bcs, x, 1, n, n, k);
            tri::lu_solve(p.adjoint ? 'C' : 'N', n, k, a, ldn, piv, x, ldn);
            return call.store_matrix(0, b, x, 1, n, n, k);
        }
        // X A = B is A^T X^T = B^T; X A^H = B is A conj(X^T) = conj(B^T).
        copy2d(input<T>(call, 2, b), bcs, brs, x, 1, n, n, k, p.adjoint);
        tri::lu_solve(p.adjoint ? 'N' : 'T', n, k, a, ldn, piv, x, ldn);
        return call.store_matrix(0, b, x, n, 1, k, n, p.adjoint);
    }
};

void configure_lu(Plan& p, const ferro_prepare_args& args) {
    const int64_t t = itemsize(p.dtype), i = sizeof(lapack_int), m = p.m;
    p.scratch_bytes = scratch_array(m * p.n, t) + scratch_array(std::max(m, p.k), i) + scratch_array(m, i);
    p.threaded_routine = ThreadedRoutine::getrf;
    if (p.op == Op::lu_factor) ask_column_major(args, 0);
}

void configure_lu_unpack(Plan& p, const ferro_prepare_args&) {
    p.matrix_dims[1] = 1;  // the pivots
    const int64_t i = sizeof(lapack_int);
    p.scratch_bytes = scratch_array(std::max(p.m, p.k), i) + scratch_array(p.m, i);  // pivots, permutation
}

void configure_lu_solve(Plan& p, const ferro_prepare_args&) {
    p.matrix_dims[1] = 1;  // the pivots
    const int64_t t = itemsize(p.dtype), n = p.n;
    p.scratch_bytes = scratch_array(n * n, t) + scratch_array(n * p.k, t) + scratch_array(n, sizeof(lapack_int));
    p.threaded_routine = ThreadedRoutine::getrf;
}

constexpr CpuExecutor kLuExecutor{.configure = configure_lu, .kernels = kernels<LuKernel>()};

// ---- rules
ferro_status lu_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (a.n_outputs == 2) {  // lu_factor: (LU, pivots)
            if (!a.cotangents[0]) return;
            auto [gL, gU] = split_lu(r, a.cotangents[0]);
            a.input_cotangents[0] =
                lu_backward(r, lu_unpacked(r, a.outputs[0], a.outputs[1]), std::move(gL), std::move(gU)).release();
            return;
        }
        const LuParts p{r.borrow(a.outputs[0]), r.borrow(a.outputs[1]), r.borrow(a.outputs[2])};
        a.input_cotangents[0] = lu_backward(r, p, r.borrow(a.cotangents[1]), r.borrow(a.cotangents[2])).release();
    });
}
ferro_status lu_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        if (a.n_outputs == 2) {
            auto [dL, dU] = lu_forward(r, lu_unpacked(r, a.outputs[0], a.outputs[1]), a.input_tangents[0]);
            const int64_t m = r.dim(a.outputs[0], 2), n = r.dim(a.outputs[0], 1);
            a.output_tangents[0] = pack_lu(r, r.tril(dL, -1), r.triu(dU), m, n).release();
            return;
        }
        const LuParts p{r.borrow(a.outputs[0]), r.borrow(a.outputs[1]), r.borrow(a.outputs[2])};
        auto [dL, dU] = lu_forward(r, p, a.input_tangents[0]);
        a.output_tangents[1] = dL.release();
        a.output_tangents[2] = dU.release();
    });
}

// solve_with_lu: solve's and lu_factor's rules at once, with the forward's (LU, pivots) in
// place of a second factorisation of A: A^-H G is lu_solve(LU, pivots, G, adjoint). LU is a
// differentiable output (as lu_factor's), so where these rules are themselves differentiated (a
// backward with create_graph, a VJP on duals) the derivative through LU reaches A.
TensorRef lu_solve_with(const Ops& r, ferro_tensor LU, ferro_tensor pivots, Arg G, bool adjoint) {
    return r.call(linalg_op("linalg.lu_solve"), {LU, pivots, G},
                  {plugin::attr_bool("left", true), plugin::attr_bool("adjoint", adjoint)});
}
ferro_status solve_with_lu_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor LU = a.outputs[1], pivots = a.outputs[2];
        auto [gA, gB] =
            solve_cotangents(r, a, [&](const TensorRef& G, bool adjoint) { return lu_solve_with(r, LU, pivots, G, adjoint); });
        if (a.needs_input_grad[0] && a.cotangents[1]) {  // LU's part: lu_factor's rule
            auto [gL, gU] = split_lu(r, a.cotangents[1]);
            gA = r.plus(std::move(gA), lu_backward(r, lu_unpacked(r, LU, pivots), std::move(gL), std::move(gU)));
        }
        if (a.needs_input_grad[0] && gA) a.input_cotangents[0] = gA.release();
        if (a.needs_input_grad[1] && gB) a.input_cotangents[1] = gB.release();
    });
}
ferro_status solve_with_lu_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor LU = a.outputs[1], pivots = a.outputs[2];
        TensorRef dX = solve_tangent(r, a, [&](const TensorRef& G, bool) { return lu_solve_with(r, LU, pivots, G, false); });
        if (dX) a.output_tangents[0] = dX.release();
        if (!a.input_tangents[0]) return;
        auto [dL, dU] = lu_forward(r, lu_unpacked(r, LU, pivots), a.input_tangents[0]);
        const int64_t n = r.dim(LU, 1);
        a.output_tangents[1] = pack_lu(r, r.tril(dL, -1), r.triu(dU), n, n).release();
    });
}

// lu_unpack: L = tril(LU[:, :k], -1) + I, U = triu(LU[:k, :]); P does not depend on LU.
ferro_status lu_unpack_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_signature& s = a.input_sigs[0];
        const int64_t m = s.shape[s.ndim - 2], n = s.shape[s.ndim - 1], k = std::min(m, n);
        if (!a.cotangents[1] && !a.cotangents[2]) return;
        const TensorRef gL = a.cotangents[1] ? r.tril(a.cotangents[1], -1) : r.zeros_shaped(a.cotangents[2], {m, k});
        const TensorRef gU = a.cotangents[2] ? r.triu(a.cotangents[2]) : r.zeros_shaped(a.cotangents[1], {k, n});
        a.input_cotangents[0] = pack_lu(r, gL, gU, m, n).release();
    });
}
ferro_status lu_unpack_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        auto [dL, dU] = split_lu(r, a.input_tangents[0]);
        a.output_tangents[1] = dL.release();
        a.output_tangents[2] = dU.release();
    });
}

// lu_solve: X = op(A)^-1 B (left) or B op(A)^-1 (right), op = identity or ^H, A = P L U.
// The cotangent of A comes from the solve formulas; LU's from A's: with gA,
// gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA), gLU = gL + gU (square).
ferro_status lu_solve_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const bool left = a.attrs[0].v.boolean != 0, adjoint = a.attrs[1].v.boolean != 0;
        const ferro_tensor LU = a.inputs[0], piv = a.inputs[1], X = a.outputs[0];
        TensorRef gB = r.call(linalg_op("linalg.lu_solve"), {LU, piv, a.cotangents[0]},
                              {plugin::attr_bool("left", left), plugin::attr_bool("adjoint", !adjoint)});
        if (a.needs_input_grad[0]) {
            const TensorRef g_op = r.neg(left ? r.matmul(gB, r.mH(X)) : r.matmul(r.mH(X), gB));  // of op(A)
            const TensorRef gA = adjoint ? r.mH(g_op) : r.borrow(g_op.get());
            const LuParts p = lu_unpacked(r, LU, piv);
            const TensorRef ptg = r.matmul(r.mH(p.P), gA);
            a.input_cotangents[0] = r.add(r.tril(r.matmul(ptg, r.mH(p.U)), -1), r.triu(r.matmul(r.mH(p.L), ptg))).release();
        }
        if (a.needs_input_grad[2]) a.input_cotangents[2] = gB.release();
    });
}
ferro_status lu_solve_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const bool left = a.attrs[0].v.boolean != 0, adjoint = a.attrs[1].v.boolean != 0;
        const ferro_tensor LU = a.inputs[0], piv = a.inputs[1], X = a.outputs[0];
        TensorRef rhs = a.input_tangents[2] ? r.borrow(a.input_tangents[2]) : TensorRef();
        if (a.input_tangents[0]) {
            const LuParts p = lu_unpacked(r, LU, piv);
            auto [dL, dU] = split_lu(r, a.input_tangents[0]);
            const TensorRef dA = r.matmul(p.P, r.add(r.matmul(dL, p.U), r.matmul(p.L, dU)));
            const TensorRef d_op = adjoint ? r.mH(dA) : r.borrow(dA.get());
            const TensorRef term = left ? r.matmul(d_op, X) : r.matmul(X, d_op);
            rhs = rhs ? r.sub(rhs, term) : r.neg(term);
        }
        if (!rhs) return;
        a.output_tangents[0] = r.call(linalg_op("linalg.lu_solve"), {LU, piv, rhs},
                                      {plugin::attr_bool("left", left), plugin::attr_bool("adjoint", adjoint)})
                                   .release();
    });
}

}  // namespace

OpRow op_rows::lu_factor() {
    return {.op = Op::lu_factor,
            .doc = "(LU, pivots): A = P L U packed as in LAPACK, pivots 1-based (torch.linalg.lu_factor)",
            .n_outputs = 2,
            .infer = infer_lu<Op::lu_factor>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_outputs = bit(0) | bit(1),
            .vjp = lu_vjp,
            .jvp = lu_jvp,
            .cpu = kLuExecutor};
}

OpRow op_rows::lu() {
    return {.op = Op::lu,
            .doc = "(P, L, U): A = P L U, L unit lower triangular, U upper triangular",
            .n_outputs = 3,
            .infer = infer_lu<Op::lu>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(1) | bit(2),
            .save_outputs = bit(0) | bit(1) | bit(2),
            .vjp = lu_vjp,
            .jvp = lu_jvp,
            .cpu = kLuExecutor};
}

OpRow op_rows::lu_unpack() {
    return {.op = Op::lu_unpack,
            .doc = "(P, L, U) from lu_factor's (LU, pivots)",
            .n_inputs = 2,
            .n_outputs = 3,
            .infer = infer_lu<Op::lu_unpack>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(1) | bit(2),
            .vjp = lu_unpack_vjp,
            .jvp = lu_unpack_jvp,
            .cpu = {.configure = configure_lu_unpack, .kernels = kernels<LuUnpackKernel>()}};
}

OpRow op_rows::lu_solve() {
    return {.op = Op::lu_solve,
            .doc = "X with A X = B (or X A = B, or with A^H) from lu_factor's (LU, pivots)",
            .n_inputs = 3,
            .attrs = lu_solve_attrs,
            .infer = infer_lu_solve,
            .diff_inputs = bit(0) | bit(2),
            .diff_outputs = bit(0),
            .save_inputs = bit(0) | bit(1),
            .save_outputs = bit(0),
            .vjp = lu_solve_vjp,
            .jvp = lu_solve_jvp,
            .cpu = {.configure = configure_lu_solve, .kernels = kernels<LuSolveKernel>()}};
}

OpRow op_rows::solve_with_lu() {
    return {.op = Op::solve_with_lu,
            .doc =
                "(X, LU, pivots): solve's X and lu_factor's (LU, pivots) of A, for more solves with lu_solve; its "
                "backward solves with them instead of factoring A^H",
            .n_inputs = 2,
            .n_outputs = 3,
            .infer = infer_solve_with_lu,
            .diff_inputs = bit(0) | bit(1),
            .diff_outputs = bit(0) | bit(1),
            .save_outputs = bit(0) | bit(1) | bit(2),
            .vjp = solve_with_lu_vjp,
            .jvp = solve_with_lu_jvp,
            .cpu = solve_executor()};
}

}  // namespace ferro::linalg
