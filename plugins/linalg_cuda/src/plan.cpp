// Prepare's half of the cuSOLVER module: which ops it runs, and each call's geometry and
// workspace (see plan.hpp for what each region holds per op).
#include "plan.hpp"

#include <algorithm>

namespace ferro::linalg::cuda {

bool supported(Op op) {
    switch (op) {
        case Op::solve:
        case Op::inv:
        case Op::det:
        case Op::slogdet:
        case Op::cholesky:
        case Op::qr:
        case Op::eigh:
        case Op::eigvalsh:
        case Op::svd:
        case Op::svdvals:
        case Op::triangular_solve:
        case Op::lu_factor:
        case Op::lu:
        case Op::lu_solve:
        case Op::solve_with_lu: return true;
        default: return false;
    }
}

std::string op_label(Op op) { return std::string("linalg.") + op_name(op); }

namespace {

int64_t item(ferro_dtype d) { return FERRO_DTYPE_BITS(d) / 8; }

// Hands out 256-byte aligned regions of the workspace.
struct Layout {
    uint64_t end = 0;
    Region take(int64_t elements, int64_t element_bytes) {
        const auto bytes = static_cast<uint64_t>(std::max<int64_t>(elements, 0) * element_bytes);
        Region r{end, bytes};
        end += (bytes + 255) / 256 * 256;
        return r;
    }
};

}  // namespace

CudaPlan make_cuda_plan(Op op, const ferro_prepare_args& args) {
    CudaPlan p;
    p.op = op;
    p.dtype = args.inputs[0].dtype;
    static_cast<Geometry&>(p) = read_geometry(op, args);

    const int64_t t = item(p.dtype), r = item(real_dtype(p.dtype)), c = p.count, m = p.m, n = p.n, k = p.k;
    Layout w;
    p.a = w.take(c * m * n, t);
    switch (op) {
        case Op::solve:
        case Op::lu_solve:
        case Op::solve_with_lu:
            p.b = w.take(c * n * k, t);
            p.c = w.take(c * n, 8);
            p.e = w.take(c * n, t);
            break;
        case Op::inv:
            p.b = w.take(c * n * n, t);
            p.c = w.take(c * n, 8);
            break;
        case Op::det:
        case Op::slogdet:
            p.c = w.take(c * n, 8);
            p.d = w.take(c, t);
            p.e = w.take(c, r);
            break;
        case Op::qr:
            p.b = w.take(c * m * (p.qr_mode == QrMode::complete ? m : k), t);
            p.c = w.take(c * k, t);
            break;
        case Op::eigh:
        case Op::eigvalsh:
            p.d = w.take(c * n, r);
            p.flags = w.take(c * m * n + c, 1);
            break;
        case Op::svd:
        case Op::svdvals: {
            const int64_t rows = std::max(m, n), cols = k;  // the factored matrix is rows x cols (A or A^H)
            const int64_t ucols = p.full ? rows : k, vrows = p.full ? cols : k;
            p.b = w.take(c * rows * ucols, t);
            p.c = w.take(c * vrows * cols, t);
            p.d = w.take(c * k, r);
            p.flags = w.take(c * m * n + c, 1);
            break;
        }
        case Op::triangular_solve:
            p.b = w.take(c * n * k, t);
            p.e = w.take(c * n, t);
            break;
        case Op::lu_factor: p.c = w.take(c * k, 8); break;
        case Op::lu:
            p.c = w.take(c * k, 8);
            p.b = w.take(c * m * k, t);
            p.d = w.take(c * k * n, t);
            p.e = w.take(c * m * m, t);
            p.flags = w.take(c * m, 8);  // the permutations
            break;
        default: break;
    }
    p.workspace_bytes = std::max<uint64_t>(w.end, 256);
    return p;
}

}  // namespace ferro::linalg::cuda
