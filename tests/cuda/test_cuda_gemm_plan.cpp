// The layout logic of the cuda engine's gemm_batched (engines/cuda/src/gemm_plan.hpp), on the
// host: for operands in every layout (row- and column-major, transposed views with padding,
// strides no BLAS can read, negative strides, conjugated, a batch stride of 0), the plan is run
// through a reference of cuBLAS's strided batched product — column-major storage, op N/T/C,
// leading dimensions, batch strides — and C must come out as alpha op(A) op(B) + beta C.
#include "gemm_plan.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <random>
#include <vector>

using ferro::cuda::BlasOp;
using ferro::cuda::GemmOperand;
using ferro::cuda::GemmPlan;
using ferro::cuda::MatrixLayout;
using Z = std::complex<double>;

namespace {

// An operand in host memory: element (p, i, j) at base + p*bs + i*rs + j*cs.
struct Stored {
    MatrixLayout layout;
    std::vector<Z> memory;
    int64_t base = 0;
    Z& at(int64_t p, int64_t i, int64_t j) {
        return memory[static_cast<size_t>(base + p * layout.bs + i * layout.rs + j * layout.cs)];
    }
};

enum class Kind { row_major, column_major, padded_transpose, strided, negative, broadcast };

// A rows x cols operand of `batch` matrices laid out as `kind`, filled with seeded values.
Stored make(Kind kind, int64_t rows, int64_t cols, int64_t batch, bool conj, std::mt19937& gen) {
    Stored s;
    MatrixLayout& l = s.layout;
    l.rows = rows;
    l.cols = cols;
    l.conj = conj;
    switch (kind) {
        case Kind::row_major:
            l.rs = cols;
            l.cs = 1;
            break;
        case Kind::column_major:
            l.rs = 1;
            l.cs = rows;
            break;
        case Kind::padded_transpose:
            l.rs = 1;
            l.cs = rows + 3;
            break;  // column-major with a leading dimension > rows
        case Kind::strided:
            l.rs = 2 * cols;
            l.cs = 2;
            break;  // every other element: no unit stride
        case Kind::negative:
            l.rs = -cols;
            l.cs = 1;
            break;  // rows in reverse
        case Kind::broadcast:
            l.rs = cols;
            l.cs = 1;
            break;
    }
    const int64_t matrix = (std::abs(l.rs) * rows + std::abs(l.cs) * cols) + 1;
    l.bs = kind == Kind::broadcast ? 0 : matrix;
    s.memory.assign(static_cast<size_t>(matrix * batch + 2 * matrix), Z(0));
    s.base = kind == Kind::negative ? std::abs(l.rs) * rows : 0;
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& z : s.memory) z = Z(u(gen), u(gen));
    return s;
}

MatrixLayout as_read(MatrixLayout x, bool transposed) {
    if (transposed) {
        std::swap(x.rows, x.cols);
        std::swap(x.rs, x.cs);
    }
    return x;
}

// What cuBLAS would read for one plan operand: its memory (a copy when the plan copies) and
// the element (p, r, c) of op(X) through the op and leading dimension.
struct Read {
    std::vector<Z>* memory;
    int64_t base;
    const GemmOperand* o;
    Z get(int64_t p, int64_t r, int64_t c) const {
        const int64_t at = o->op == BlasOp::N ? r + c * o->ld : c + r * o->ld;
        const Z v = (*memory)[static_cast<size_t>(base + p * o->layout.bs + at)];
        return o->op == BlasOp::C ? std::conj(v) : v;
    }
};

// The plan's temporaries, filled as the engine fills them.
std::vector<Z> copy_in(Stored& src, const GemmOperand& o, int64_t batch, bool conj) {
    const MatrixLayout from = as_read(src.layout, o.transposed);
    const int64_t copies = o.layout.bs == 0 ? 1 : batch;
    std::vector<Z> temp(static_cast<size_t>(std::max<int64_t>(1, o.layout.rows * o.layout.cols) * copies));
    for (int64_t p = 0; p < copies; ++p) {
        for (int64_t i = 0; i < o.layout.rows; ++i) {
            for (int64_t j = 0; j < o.layout.cols; ++j) {
                const Z v = src.memory[static_cast<size_t>(src.base + p * from.bs + i * from.rs + j * from.cs)];
                temp[static_cast<size_t>(p * o.layout.bs + i * o.layout.rs + j * o.layout.cs)] = conj ? std::conj(v) : v;
            }
        }
    }
    return temp;
}

void check_plan(Stored a, Stored b, Stored c, int64_t batch, Z alpha, Z beta) {
    const GemmPlan plan = ferro::cuda::plan_gemm(a.layout, b.layout, c.layout, batch);
    const int64_t m = a.layout.rows, n = b.layout.cols, k = a.layout.cols;
    // The reference, from the operands as ferro defines them.
    std::vector<Z> want(static_cast<size_t>(batch * m * n));
    for (int64_t p = 0; p < batch; ++p) {
        for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
                Z sum = 0;
                for (int64_t l = 0; l < k; ++l) {
                    const Z x = a.at(p, i, l), y = b.at(p, l, j);
                    sum += (a.layout.conj ? std::conj(x) : x) * (b.layout.conj ? std::conj(y) : y);
                }
                want[static_cast<size_t>((p * m + i) * n + j)] = alpha * sum + beta * c.at(p, i, j);
            }
        }
    }
    // The engine's way: temporaries, then the cuBLAS call, then C back.
    Stored* sources[3] = {&a, &b, &c};
    const GemmOperand* ops[3] = {&plan.a, &plan.b, &plan.c};
    std::vector<Z> temps[3];
    Read reads[3];
    for (int i = 0; i < 3; ++i) {
        Stored& src = *sources[ops[i]->source];
        if (ops[i]->copy) {
            temps[i] = copy_in(src, *ops[i], batch, i < 2 && src.layout.conj);
            reads[i] = {&temps[i], 0, ops[i]};
        } else {
            reads[i] = {&src.memory, src.base, ops[i]};
        }
    }
    CHECK(plan.c.op == BlasOp::N);
    std::vector<Z>& cm = *reads[2].memory;
    for (int64_t p = 0; p < batch; ++p) {
        for (int64_t i = 0; i < plan.m; ++i) {
            for (int64_t j = 0; j < plan.n; ++j) {
                Z sum = 0;
                for (int64_t l = 0; l < plan.k; ++l) sum += reads[0].get(p, i, l) * reads[1].get(p, l, j);
                Z& out = cm[static_cast<size_t>(reads[2].base + p * plan.c.layout.bs + i + j * plan.c.ld)];
                out = alpha * sum + beta * out;
            }
        }
    }
    if (plan.c.copy) {
        const MatrixLayout to = as_read(c.layout, plan.c.transposed);
        for (int64_t p = 0; p < batch; ++p) {
            for (int64_t i = 0; i < plan.m; ++i) {
                for (int64_t j = 0; j < plan.n; ++j) {
                    c.memory[static_cast<size_t>(c.base + p * to.bs + i * to.rs + j * to.cs)] =
                        temps[2][static_cast<size_t>(p * plan.c.layout.bs + i * plan.c.layout.rs + j * plan.c.layout.cs)];
                }
            }
        }
    }
    for (int64_t p = 0; p < batch; ++p) {
        for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
                INFO("p " << p << " i " << i << " j " << j);
                CHECK(std::abs(c.at(p, i, j) - want[static_cast<size_t>((p * m + i) * n + j)]) < 1e-12);
            }
        }
    }
}

}  // namespace

TEST_CASE("cuda gemm plan: every operand layout gives alpha op(A) op(B) + beta C through cuBLAS's conventions", "[cuda-probe]") {
    std::mt19937 gen(7);
    const Kind kinds[] = {Kind::row_major, Kind::column_major, Kind::padded_transpose,
                          Kind::strided,   Kind::negative,     Kind::broadcast};
    int cases = 0;
    for (int64_t m : {1, 3}) {
        for (int64_t n : {1, 4}) {
            for (int64_t k : {1, 5}) {
                for (Kind ka : kinds) {
                    for (Kind kb : kinds) {
                        for (Kind kc :
                             {Kind::row_major, Kind::column_major, Kind::padded_transpose, Kind::strided, Kind::negative}) {
                            for (bool conj : {false, true}) {
                                INFO("m " << m << " n " << n << " k " << k << " kinds " << int(ka) << int(kb) << int(kc)
                                          << " conj " << conj);
                                const int64_t batch = 2;
                                check_plan(make(ka, m, k, batch, conj, gen), make(kb, k, n, batch, !conj && ka == kb, gen),
                                           make(kc, m, n, batch, false, gen), batch, Z(0.5, -1), Z(conj ? 0 : 2, 0.25));
                                ++cases;
                            }
                        }
                    }
                }
            }
        }
    }
    CHECK(cases == 8 * 6 * 6 * 5 * 2);
}

TEST_CASE("cuda gemm plan: readable operands are read in place and a row-major C is computed transposed", "[cuda-probe]") {
    // Row-major A (m x k) and B (k x n) and C: C^T = B^T A^T, every operand read as it is.
    MatrixLayout a{3, 5, 15, 5, 1, false}, b{5, 4, 20, 4, 1, false}, c{3, 4, 12, 4, 1, false};
    GemmPlan p = ferro::cuda::plan_gemm(a, b, c, 2);
    CHECK(p.m == 4);
    CHECK(p.n == 3);
    CHECK(p.a.source == 1);
    CHECK(p.b.source == 0);
    CHECK(!p.a.copy);
    CHECK(!p.b.copy);
    CHECK(!p.c.copy);
    CHECK(p.a.op == BlasOp::N);
    CHECK(p.a.ld == 4);
    CHECK(p.c.ld == 4);
    // A conjugate without transpose cannot be read: copied.
    a = {3, 5, 15, 1, 3, true};
    c = {3, 4, 12, 1, 3, false};
    p = ferro::cuda::plan_gemm(a, b, c, 2);
    CHECK(p.a.copy);
    CHECK(p.a.op == BlasOp::N);
    CHECK(!p.b.copy);
    CHECK(p.b.op == BlasOp::T);
}
