// linalg.solve: X with A X = B (b of shape [..., n]: one vector), by LU with partial pivoting.
// Its kernel also serves solve_with_lu (ops/lu.cpp), which returns the factors as well.
#include "../op_row.hpp"
#include "../rules.hpp"
#include "../triangular.hpp"

namespace ferro::linalg {
namespace {

ferro_status infer_solve(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::solve, true, [&](const MatrixInput& in) {
        a->outputs[0] = solve_output(Op::solve, in, a->inputs[1]);
        return 1;
    });
}

// M = A^T factored, then M^T X = A X = B (for solve_with_lu: A itself, whose factors are
// lu_factor's LU).
struct SolveKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        const bool factors = p.op == Op::solve_with_lu;
        T* a = factors ? call.gather_column_major(item) : call.gather_transposed(item);
        T* x = item.c.take<T>(n * k);
        lapack_int* piv = item.c.take<lapack_int>(n);
        const ferro_tensor_view& B = call.args().inputs[1];
        const int64_t brs = p.vector_rhs ? B.strides[B.ndim - 1] : B.strides[B.ndim - 2];
        const int64_t bcs = p.vector_rhs ? 0 : B.strides[B.ndim - 1];
        copy2d(input<T>(call, 1, b), brs, bcs, x, 1, n, n, k);  // B column-major
        if (const lapack_int info = lapack::getrf(ln, ln, a, ldn, piv); info > 0) {
            return item.fail(FERRO_INVALID_ARGUMENT, singular(info));
        }
        if (p.op == Op::solve_with_lu) {  // `a` holds A column-major: lu_factor's LU
            tri::lu_solve('N', n, k, a, ldn, piv, x, ldn);
            call.store_matrix(1, b, a, 1, n, n, n);
            int64_t* pivots = output<int64_t>(call, 2, b);
            for (int64_t i = 0; i < n; ++i) pivots[i * call.out_stride(2, 1)] = piv[i];
        } else {
            tri::lu_solve('T', n, k, a, ldn, piv, x, ldn);  // M^T X = A X = B
        }
        const ferro_tensor_view& X = call.args().outputs[0];
        const int64_t xrs = p.vector_rhs ? X.strides[X.ndim - 1] : X.strides[X.ndim - 2];
        const int64_t xcs = p.vector_rhs ? 0 : X.strides[X.ndim - 1];
        copy2d(x, 1, n, output<T>(call, 0, b), xrs, xcs, n, k);
    }
};

void configure_solve(Plan& p, const ferro_prepare_args& args) {
    p.matrix_dims[1] = p.vector_rhs ? 1 : 2;
    const int64_t t = itemsize(p.dtype), n = p.n;
    p.scratch_bytes = scratch_array(n * n, t) + scratch_array(n * p.k, t) + scratch_array(n, sizeof(lapack_int));
    p.threaded_routine = ThreadedRoutine::getrf;
    if (p.op == Op::solve_with_lu) ask_column_major(args, 1);  // LU, as lu_factor returns it
}

// ---- rules: solve_cotangents and solve_tangent (rules.hpp) with A^-1 G as a solve.
ferro_status solve_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0];
        auto [gA, gB] =
            solve_cotangents(r, a, [&](const TensorRef& G, bool adjoint) { return r.solve(adjoint ? r.mH(A) : r.borrow(A), G); });
        if (a.needs_input_grad[0] && gA) a.input_cotangents[0] = gA.release();
        if (a.needs_input_grad[1] && gB) a.input_cotangents[1] = gB.release();
    });
}
ferro_status solve_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor A = a.inputs[0];
        TensorRef dX = solve_tangent(r, a, [&](const TensorRef& G, bool) { return r.solve(A, G); });
        if (dX) a.output_tangents[0] = dX.release();
    });
}

}  // namespace

// b as solve reads it: a vector [..., n] (solve_vector_rhs) or a matrix [..., n, k]; returns
// X's signature, over the broadcast batch.
ferro_signature solve_output(Op op, const MatrixInput& in, const ferro_signature& b) {
    require_float(op, b, 1);
    require_same_dtype(op, in.sig, b, 1, "B");
    if (solve_vector_rhs(in.sig, b)) {
        if (b.shape[b.ndim - 1] != in.n) {
            invalid(op, "input 1 (b) has shape " + shape_str(dims(b)) + ", expected [" + std::to_string(in.n) + "]");
        }
        return out_sig(in.sig.dtype, broadcast_batch(op, in.batch, batch_of(b, 1)), {in.n});
    }
    require_matrix(op, b, 1, false);
    if (rows(b) != in.n) {
        invalid(op, "input 1 (B) has shape " + shape_str(dims(b)) + ", expected [..., " + std::to_string(in.n) +
                        ", k] to match input 0 of shape " + shape_str(dims(in.sig)));
    }
    return out_sig(in.sig.dtype, broadcast_batch(op, in.batch, batch_of(b)), {in.n, cols(b)});
}

CpuExecutor solve_executor() { return {.configure = configure_solve, .kernels = kernels<SolveKernel>()}; }

OpRow op_rows::solve() {
    return {.op = Op::solve,
            .doc = "X with A X = B (b of shape [n]: one vector)",
            .n_inputs = 2,
            .infer = infer_solve,
            .diff_inputs = bit(0) | bit(1),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .save_outputs = bit(0),
            .vjp = solve_vjp,
            .jvp = solve_jvp,
            .cpu = solve_executor()};
}

}  // namespace ferro::linalg
