// See gemm_plan.hpp.
#include "gemm_plan.hpp"

#include <algorithm>
#include <utility>

namespace ferro::cuda {
namespace {

MatrixLayout transposed(MatrixLayout x) {
    std::swap(x.rows, x.cols);
    std::swap(x.rs, x.cs);
    return x;
}

// Whether x is column-major with a valid leading dimension (which it returns in ld).
bool column_major(const MatrixLayout& x, int64_t& ld) {
    if (x.rows != 1 && x.rs != 1) return false;
    ld = x.cols == 1 ? std::max<int64_t>(1, x.rows) : x.cs;
    return ld >= std::max<int64_t>(1, x.rows);
}

// How cuBLAS reads x as it is: N when column-major, T/C when its transpose is.
bool readable(const MatrixLayout& x, BlasOp& op, int64_t& ld) {
    if (x.bs < 0) return false;
    if (!x.conj && column_major(x, ld)) {
        op = BlasOp::N;
        return true;
    }
    if (column_major(transposed(x), ld)) {
        op = x.conj ? BlasOp::C : BlasOp::T;
        return true;
    }
    return false;
}

// The dense column-major temporary x is copied into (one matrix when x's batch stride is 0).
MatrixLayout dense_copy(const MatrixLayout& x) {
    MatrixLayout d;
    d.rows = x.rows;
    d.cols = x.cols;
    d.bs = x.bs == 0 ? 0 : std::max<int64_t>(1, x.rows * x.cols);
    d.rs = 1;
    d.cs = std::max<int64_t>(1, x.rows);
    return d;
}

GemmOperand operand(int source, bool transposed_source, const MatrixLayout& layout) {
    GemmOperand o;
    o.source = source;
    o.transposed = transposed_source;
    o.layout = layout;
    if (!readable(layout, o.op, o.ld)) {
        o.copy = true;
        o.layout = dense_copy(layout);
        o.layout.conj = false;
        readable(o.layout, o.op, o.ld);
    }
    return o;
}

}  // namespace

GemmPlan plan_gemm(const MatrixLayout& a, const MatrixLayout& b, const MatrixLayout& c, int64_t batch) {
    GemmPlan p;
    p.k = a.cols;
    int64_t ld = 0;
    const bool swap = !column_major(c, ld) && column_major(transposed(c), ld);
    const MatrixLayout cc = swap ? transposed(c) : c;
    p.m = cc.rows;
    p.n = cc.cols;
    p.a = operand(swap ? 1 : 0, swap, swap ? transposed(b) : a);
    p.b = operand(swap ? 0 : 1, swap, swap ? transposed(a) : b);
    p.c.source = 2;
    p.c.transposed = swap;
    p.c.layout = cc;
    // C is written in place when column-major with a batch stride of its own for each product.
    if (cc.bs >= 0 && column_major(cc, p.c.ld) && !(cc.bs == 0 && batch > 1)) return p;
    p.c.copy = true;
    p.c.layout = dense_copy(cc);
    p.c.layout.bs = std::max<int64_t>(1, cc.rows * cc.cols);  // one product per batch entry
    p.c.ld = std::max<int64_t>(1, cc.rows);
    return p;
}

}  // namespace ferro::cuda
