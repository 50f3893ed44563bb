// The linalg family's op schemas: attributes, dtypes, shape inference and what each op's rules
// need saved. numpy/PyTorch semantics: batch dimensions lead, matrix dimensions are the last
// two, batch dimensions broadcast between operands.
#include "linalg.hpp"

#include <ferro/rules.hpp>
#include <ferro/schema.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ferro::linalg {
namespace {

constexpr ferro_dtype float_dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64, FERRO_DTYPE_C64, FERRO_DTYPE_C128};
constexpr ferro_dtype real_dtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64};

constexpr const char* eps_doc =
    "regulariser of the degenerate-spectrum terms of the derivative: 1/d becomes d/(d^2 + eps) "
    "(0: exact, as PyTorch)";
const ferro_attr_spec cholesky_attrs[] = {plugin::spec_bool("upper", false, "return U with A = U^H U instead of L")};
const ferro_attr_spec qr_attrs[] = {plugin::spec_str("mode", "reduced", "reduced | complete | r (R only)")};
const ferro_attr_spec eigh_attrs[] = {plugin::spec_str("uplo", "L", "L | U: the triangle of A that is read"),
                                      plugin::spec_f64("eps", 0.0, eps_doc)};
const ferro_attr_spec eigvalsh_attrs[] = {plugin::spec_str("uplo", "L", "L | U: the triangle of A that is read")};
const ferro_attr_spec svd_attrs[] = {plugin::spec_bool("full_matrices", true, "U is m x m and Vh n x n (else m x k, k x n)"),
                                     plugin::spec_f64("eps", 0.0, eps_doc)};

const ferro_attr_spec inverse_gaps_attrs[] = {
    plugin::spec_f64("eps", 0.0, "regulariser: 1/d becomes d/(d^2 + eps) (0: exact)"),
    plugin::spec_bool("squares", false, "the gaps of x^2 (singular values) instead of x (eigenvalues)")};
const ferro_attr_spec pinv_attrs[] = {
    plugin::spec_optional("atol", FERRO_ATTR_F64, "absolute tolerance: singular values <= atol are zero (None: 0)"),
    plugin::spec_optional("rtol", FERRO_ATTR_F64,
                          "relative tolerance, times the largest singular value (None: eps * max(m, n) when atol is "
                          "None or 0, else 0; numpy's rcond)"),
    plugin::spec_bool("hermitian", false, "A is Hermitian: use its eigendecomposition (reads the lower triangle)")};
const ferro_attr_spec vector_norm_attrs[] = {
    plugin::spec_f64("ord", 2.0, "p: any real, inf, -inf, or 0 (the count of non-zeros)"),
    plugin::spec_optional("axes", FERRO_ATTR_I64_ARRAY, "axes to reduce (None or []: all)"),
    plugin::spec_bool("keepdim", false, "keep reduced axes as size 1")};
const ferro_attr_spec matrix_norm_attrs[] = {
    plugin::spec_str("ord", "fro", "fro | nuc | inf | -inf | 1 | -1 | 2 | -2"),
    plugin::spec_optional("axes", FERRO_ATTR_I64_ARRAY, "the (row, column) axes of the matrices (None: (-2, -1))"),
    plugin::spec_bool("keepdim", false, "keep the two axes as size 1")};
const ferro_attr_spec cond_attrs[] = {plugin::spec_str(
    "p", "2", "the norm: 2 | -2 (singular values, any shape) | fro | nuc | inf | -inf | 1 | -1 (square)")};
const ferro_attr_spec lstsq_attrs[] = {
    plugin::spec_optional("rcond", FERRO_ATTR_F64,
                          "singular values <= rcond * largest count as zero (None: eps * max(m, n))"),
    plugin::spec_str("driver", "gelsd",
                     "gelsd | gelss | gelsy | gels: all solved by ?gelsd; the driver decides, as in PyTorch, "
                     "whether residuals are returned (not for gelsy)")};
const ferro_attr_spec triangular_attrs[] = {
    plugin::spec_required("upper", FERRO_ATTR_BOOL, "A is upper (else lower) triangular; the other triangle is not read"),
    plugin::spec_bool("left", true, "solve A X = B (else X A = B)"),
    plugin::spec_bool("unitriangular", false, "assume a unit diagonal (it is not read)")};
const ferro_attr_spec lu_solve_attrs[] = {plugin::spec_bool("left", true, "solve A X = B (else X A = B)"),
                                          plugin::spec_bool("adjoint", false, "solve with A^H instead of A")};

ferro_signature out_sig(ferro_dtype dtype, std::span<const int64_t> batch, std::initializer_list<int64_t> tail) {
    ferro_signature s{};
    s.struct_size = sizeof s;
    s.dtype = dtype;
    for (int64_t d : batch) s.shape[s.ndim++] = d;
    for (int64_t d : tail) s.shape[s.ndim++] = d;
    return s;
}

std::span<const int64_t> batch_of(const ferro_signature& s, int matrix_dims = 2) {
    return {s.shape, static_cast<size_t>(s.ndim - matrix_dims)};
}
int64_t rows(const ferro_signature& s) { return s.shape[s.ndim - 2]; }
int64_t cols(const ferro_signature& s) { return s.shape[s.ndim - 1]; }

// pivots (input `index`): i64 [batch..., count], the batch equal to the factors' batch.
void require_pivots(Op op, const ferro_signature& p, int index, std::span<const int64_t> batch, int64_t count) {
    std::vector<int64_t> want(batch.begin(), batch.end());
    want.push_back(count);
    if (p.dtype != FERRO_DTYPE_I64 || !std::equal(want.begin(), want.end(), p.shape, p.shape + p.ndim) ||
        static_cast<size_t>(p.ndim) != want.size()) {
        invalid(op, "input " + std::to_string(index) + " (pivots) must be i64 of shape " + shape_str(want) + ", got " +
                        plugin::dtype_attr_name(p.dtype) + " " + shape_str(dims(p)));
    }
}

// B of a solve with A [..., n, n]: [..., n, k] (left) or [..., k, n] (right); returns X's signature.
ferro_signature solve_rhs(Op op, const ferro_signature& a, const ferro_signature& b, int index, bool left) {
    require_float(op, b, index);
    if (b.dtype != a.dtype) {
        invalid(op, "input " + std::to_string(index) + " (B) must have input 0's dtype " + plugin::dtype_attr_name(a.dtype) +
                        ", got " + plugin::dtype_attr_name(b.dtype));
    }
    require_matrix(op, b, index, false);
    const int64_t n = a.shape[a.ndim - 1];
    if ((left ? rows(b) : cols(b)) != n) {
        invalid(op, "input " + std::to_string(index) + " (B) has shape " + shape_str(dims(b)) + ", expected " +
                        (left ? "[..., " + std::to_string(n) + ", k]" : "[..., k, " + std::to_string(n) + "]") +
                        " to match input 0 of shape " + shape_str(dims(a)));
    }
    return out_sig(a.dtype, broadcast_batch(op, batch_of(a), batch_of(b)), {rows(b), cols(b)});
}

// Every op's infer: guard, check input 0, then the op's own shapes.
template <Op op, bool square>
ferro_status infer(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        const ferro_signature& in = a->inputs[0];
        require_float(op, in, 0);
        require_matrix(op, in, 0, square);
        const auto batch = batch_of(in);
        const int64_t m = rows(in), n = cols(in), k = std::min(m, n);
        const ferro_dtype real = real_dtype(in.dtype);
        auto& out = a->outputs;
        uint32_t count = 1;
        if constexpr (op == Op::solve || op == Op::solve_with_lu) {
            const ferro_signature& b = a->inputs[1];
            require_float(op, b, 1);
            if (b.dtype != in.dtype) {
                invalid(op, std::string("input 1 (B) must have input 0's dtype ") + plugin::dtype_attr_name(in.dtype) +
                                ", got " + plugin::dtype_attr_name(b.dtype));
            }
            if (solve_vector_rhs(in, b)) {
                if (b.shape[b.ndim - 1] != n) {
                    invalid(op, "input 1 (b) has shape " + shape_str(dims(b)) + ", expected [" + std::to_string(n) + "]");
                }
                out[0] = out_sig(in.dtype, broadcast_batch(op, batch, batch_of(b, 1)), {n});
            } else {
                require_matrix(op, b, 1, false);
                if (rows(b) != n) {
                    invalid(op, "input 1 (B) has shape " + shape_str(dims(b)) + ", expected [..., " + std::to_string(n) +
                                    ", k] to match input 0 of shape " + shape_str(dims(in)));
                }
                out[0] = out_sig(in.dtype, broadcast_batch(op, batch, batch_of(b)), {n, cols(b)});
            }
            if constexpr (op == Op::solve_with_lu) {  // lu_factor's outputs, over X's batch
                const int x_matrix_dims = solve_vector_rhs(in, b) ? 1 : 2;
                const std::span<const int64_t> x_batch(out[0].shape, static_cast<size_t>(out[0].ndim - x_matrix_dims));
                out[1] = out_sig(in.dtype, x_batch, {n, n});
                out[2] = out_sig(FERRO_DTYPE_I64, x_batch, {n});
                count = 3;
            }
        } else if constexpr (op == Op::inv || op == Op::cholesky || op == Op::matrix_exp) {
            out[0] = in;
        } else if constexpr (op == Op::det) {
            out[0] = out_sig(in.dtype, batch, {});
        } else if constexpr (op == Op::slogdet) {
            out[0] = out_sig(in.dtype, batch, {});
            out[1] = out_sig(real, batch, {});
            count = 2;
        } else if constexpr (op == Op::qr) {
            const std::string mode = a->attrs[0].v.str;
            if (mode == "reduced") {
                out[0] = out_sig(in.dtype, batch, {m, k});
                out[1] = out_sig(in.dtype, batch, {k, n});
                count = 2;
            } else if (mode == "complete") {
                out[0] = out_sig(in.dtype, batch, {m, m});
                out[1] = out_sig(in.dtype, batch, {m, n});
                count = 2;
            } else if (mode == "r") {
                out[0] = out_sig(in.dtype, batch, {k, n});
            } else {
                invalid(op, "attribute mode must be \"reduced\", \"complete\" or \"r\", got \"" + mode + "\"");
            }
        } else if constexpr (op == Op::eigh || op == Op::eigvalsh) {
            const std::string uplo = a->attrs[0].v.str;
            if (uplo != "L" && uplo != "U") invalid(op, "attribute uplo must be \"L\" or \"U\", got \"" + uplo + "\"");
            out[0] = out_sig(real, batch, {n});
            if constexpr (op == Op::eigh) {
                out[1] = in;
                count = 2;
            }
        } else if constexpr (op == Op::svd) {
            const bool full = a->attrs[0].v.boolean != 0;
            out[0] = out_sig(in.dtype, batch, {m, full ? m : k});
            out[1] = out_sig(real, batch, {k});
            out[2] = out_sig(in.dtype, batch, {full ? n : k, n});
            count = 3;
        } else if constexpr (op == Op::svdvals) {
            out[0] = out_sig(real, batch, {k});
        } else if constexpr (op == Op::triangular_solve) {
            out[0] = solve_rhs(op, in, a->inputs[1], 1, a->attrs[1].v.boolean != 0);
        } else if constexpr (op == Op::lu_factor) {
            out[0] = in;
            out[1] = out_sig(FERRO_DTYPE_I64, batch, {k});
            count = 2;
        } else if constexpr (op == Op::lu || op == Op::lu_unpack) {
            if constexpr (op == Op::lu_unpack) require_pivots(op, a->inputs[1], 1, batch, k);
            out[0] = out_sig(in.dtype, batch, {m, m});
            out[1] = out_sig(in.dtype, batch, {m, k});
            out[2] = out_sig(in.dtype, batch, {k, n});
            count = 3;
        } else if constexpr (op == Op::eig || op == Op::eigvals) {
            out[0] = out_sig(complex_dtype(in.dtype), batch, {n});
            if constexpr (op == Op::eig) {
                out[1] = out_sig(complex_dtype(in.dtype), batch, {n, n});
                count = 2;
            }
        } else if constexpr (op == Op::lstsq) {
            const ferro_signature& b = a->inputs[1];
            require_float(op, b, 1);
            if (b.dtype != in.dtype) {
                invalid(op, std::string("input 1 (B) must have input 0's dtype ") + plugin::dtype_attr_name(in.dtype) + ", got " +
                                plugin::dtype_attr_name(b.dtype));
            }
            require_matrix(op, b, 1, false);
            if (rows(b) != m) {
                invalid(op, "input 1 (B) has shape " + shape_str(dims(b)) + ", expected [..., " + std::to_string(m) +
                                ", k] to match input 0 of shape " + shape_str(dims(in)));
            }
            const std::string driver = a->attrs[1].v.str;
            if (driver != "gelsd" && driver != "gelss" && driver != "gelsy" && driver != "gels") {
                invalid(op, "attribute driver must be gelsd, gelss, gelsy or gels, got \"" + driver + "\"");
            }
            if (a->attrs[0].type == FERRO_ATTR_F64 && !(a->attrs[0].v.f64 >= 0)) {
                invalid(op, "attribute rcond must be >= 0, got " + std::to_string(a->attrs[0].v.f64));
            }
            const auto bb = broadcast_batch(op, batch, batch_of(b));
            const int64_t nrhs = cols(b);
            out[0] = out_sig(in.dtype, bb, {n, nrhs});
            const bool residuals = m > n && driver != "gelsy";
            const int64_t none[1] = {0};
            out[1] = residuals ? out_sig(real, bb, {nrhs}) : out_sig(real, std::span<const int64_t>(none, 0), {0});
            out[2] = out_sig(FERRO_DTYPE_I64, bb, {});
            out[3] = out_sig(real, bb, {k});
            count = 4;
        } else if constexpr (op == Op::cond) {
            const MatrixOrd p = matrix_ord(op, a->attrs[0].v.str);
            if (p != MatrixOrd::two && p != MatrixOrd::minus_two) require_matrix(op, in, 0, true);
            if (k == 0) invalid(op, "the condition number of an empty matrix is undefined (input 0 has shape " + shape_str(dims(in)) + ")");
            out[0] = out_sig(real, batch, {});
        } else if constexpr (op == Op::pinv || op == Op::matrix_rank) {
            if (a->attrs[2].v.boolean != 0 && m != n) {
                invalid(op, "input 0 must be square with hermitian=true, got shape " + shape_str(dims(in)));
            }
            for (int i = 0; i < 2; ++i) {
                if (a->attrs[i].type == FERRO_ATTR_F64 && !(a->attrs[i].v.f64 >= 0)) {
                    invalid(op, std::string("attribute ") + (i ? "rtol" : "atol") + " must be >= 0, got " +
                                    std::to_string(a->attrs[i].v.f64));
                }
            }
            if constexpr (op == Op::pinv) out[0] = out_sig(in.dtype, batch, {n, m});
            else out[0] = out_sig(FERRO_DTYPE_I64, batch, {});
        } else if constexpr (op == Op::lu_solve) {
            require_pivots(op, a->inputs[1], 1, batch, n);
            out[0] = solve_rhs(op, in, a->inputs[2], 2, a->attrs[0].v.boolean != 0);
        }
        a->n_outputs = count;
    });
}

ferro_status infer_vector_norm(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        constexpr Op op = Op::vector_norm;
        const ferro_signature& in = a->inputs[0];
        require_float(op, in, 0);
        const std::vector<int64_t> axes = norm_axes(op, a->attrs[1], in.ndim);
        const bool keepdim = a->attrs[2].v.boolean != 0;
        const double ord = a->attrs[0].v.f64;
        if (std::isnan(ord)) invalid(op, "attribute ord must be a number, got nan");
        ferro_signature out{};
        out.struct_size = sizeof out;
        out.dtype = real_dtype(in.dtype);
        int64_t reduced = 1;
        for (int d = 0; d < in.ndim; ++d) {
            const bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
            if (r) reduced *= in.shape[d];
            if (!r) out.shape[out.ndim++] = in.shape[d];
            else if (keepdim) out.shape[out.ndim++] = 1;
        }
        if (reduced == 0 && std::isinf(ord)) {
            invalid(op, "the " + std::string(ord > 0 ? "inf" : "-inf") + "-norm of an empty reduction is undefined (input 0 has shape " +
                            shape_str(dims(in)) + ")");
        }
        a->outputs[0] = out;
        a->n_outputs = 1;
    });
}

ferro_status infer_matrix_norm(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        constexpr Op op = Op::matrix_norm;
        const ferro_signature& in = a->inputs[0];
        require_float(op, in, 0);
        if (in.ndim < 2) invalid(op, "input 0 must have at least 2 dimensions, got shape " + shape_str(dims(in)));
        const MatrixOrd ord = matrix_ord(op, a->attrs[0].v.str);
        const auto [r, c] = matrix_axes(op, a->attrs[1], in.ndim);
        const bool keepdim = a->attrs[2].v.boolean != 0;
        // The max or min over row sums (inf, -inf), column sums (1, -1) or singular values (2, -2)
        // needs at least one of them; fro and nuc of an empty matrix are 0.
        const bool by_rows = ord == MatrixOrd::inf || ord == MatrixOrd::minus_inf;
        const bool by_columns = ord == MatrixOrd::one || ord == MatrixOrd::minus_one;
        const bool spectral = ord == MatrixOrd::two || ord == MatrixOrd::minus_two;
        if ((by_rows && in.shape[r] == 0) || (by_columns && in.shape[c] == 0) ||
            (spectral && (in.shape[r] == 0 || in.shape[c] == 0))) {
            invalid(op, std::string("the ") + a->attrs[0].v.str + "-norm of an empty matrix is undefined (input 0 has shape " +
                            shape_str(dims(in)) + ")");
        }
        ferro_signature out{};
        out.struct_size = sizeof out;
        out.dtype = real_dtype(in.dtype);
        for (int d = 0; d < in.ndim; ++d) {
            if (d != r && d != c) out.shape[out.ndim++] = in.shape[d];
            else if (keepdim) out.shape[out.ndim++] = 1;
        }
        a->outputs[0] = out;
        a->n_outputs = 1;
    });
}

ferro_status infer_inverse_gaps(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        constexpr Op op = Op::inverse_gaps;
        const ferro_signature& in = a->inputs[0];
        if (in.dtype != FERRO_DTYPE_F32 && in.dtype != FERRO_DTYPE_F64) {
            invalid(op, std::string("input 0 must be f32 or f64 (eigenvalues or singular values), got ") +
                            plugin::dtype_attr_name(in.dtype));
        }
        if (in.ndim < 1 || in.ndim >= FERRO_MAX_NDIM) {
            invalid(op, "input 0 must be a vector or a batch of vectors ([..., n], at most " +
                            std::to_string(FERRO_MAX_NDIM - 1) + " dimensions), got shape " + shape_str(dims(in)));
        }
        const double eps = a->attrs[0].v.f64;
        if (!(eps >= 0)) invalid(op, "attribute eps must be >= 0, got " + std::to_string(eps));
        const int64_t n = in.shape[in.ndim - 1];
        a->outputs[0] = out_sig(in.dtype, batch_of(in, 1), {n, n});
        a->n_outputs = 1;
    });
}

struct Entry {
    const char* name;
    const char* doc;
    int32_t n_inputs;
    int32_t n_outputs;  // FERRO_VARIADIC: infer decides (qr mode r)
    std::span<const ferro_attr_spec> attrs;
    decltype(ferro_op_schema::infer) infer;
    uint64_t diff_inputs, diff_outputs, save_inputs, save_outputs;
    decltype(ferro_op_schema::vjp) vjp;
    decltype(ferro_op_schema::jvp) jvp;
    std::span<const ferro_dtype> dtypes = float_dtypes;
};

constexpr uint64_t bit(int i) { return FERRO_MASK_BIT(i); }

ferro_op_schema make_schema(const Entry& e) {
    ferro_op_schema s{};
    s.struct_size = sizeof s;
    s.name = e.name;
    s.doc = e.doc;
    s.n_inputs = e.n_inputs;
    s.min_inputs = e.n_inputs;
    s.n_outputs = e.n_outputs;
    s.n_attrs = static_cast<uint32_t>(e.attrs.size());
    s.attrs = e.attrs.data();
    s.n_dtypes = static_cast<uint32_t>(e.dtypes.size());
    s.dtypes = e.dtypes.data();
    s.infer = e.infer;
    s.diff_inputs = e.diff_inputs;
    s.diff_outputs = e.diff_outputs;
    s.save_inputs = e.save_inputs;
    s.save_outputs = e.save_outputs;
    s.vjp = e.vjp;
    s.jvp = e.jvp;
    return s;
}

std::vector<ferro_op_schema> build_schemas() {
    const Entry entries[] = {
        {"solve", "X with A X = B (b of shape [n]: one vector)", 2, 1, {}, infer<Op::solve, true>,
         bit(0) | bit(1), bit(0), bit(0), bit(0), solve_vjp, solve_jvp},
        {"inv", "the inverse of a square matrix", 1, 1, {}, infer<Op::inv, true>, bit(0), bit(0), 0, bit(0), inv_vjp, inv_jvp},
        {"det", "the determinant", 1, 1, {}, infer<Op::det, true>, bit(0), bit(0), bit(0), bit(0), det_vjp, det_jvp},
        {"slogdet", "(sign, log|det|): det = sign * exp(logabsdet)", 1, 2, {}, infer<Op::slogdet, true>, bit(0),
         bit(0) | bit(1), bit(0), bit(0) | bit(1), slogdet_vjp, slogdet_jvp},
        {"cholesky", "L with A = L L^H for Hermitian positive-definite A (U^H U with upper)", 1, 1, cholesky_attrs,
         infer<Op::cholesky, true>, bit(0), bit(0), 0, bit(0), cholesky_vjp, cholesky_jvp},
        {"qr", "A = Q R, Q with orthonormal columns, R upper triangular", 1, FERRO_VARIADIC, qr_attrs,
         infer<Op::qr, false>, bit(0), bit(0) | bit(1), bit(0), bit(0) | bit(1), qr_vjp, qr_jvp},
        {"eigh", "(w, V): A = V diag(w) V^H for Hermitian A, w ascending", 1, 2, eigh_attrs, infer<Op::eigh, true>,
         bit(0), bit(0) | bit(1), 0, bit(0) | bit(1), eigh_vjp, eigh_jvp},
        {"eigvalsh", "eigenvalues of a Hermitian matrix, ascending", 1, 1, eigvalsh_attrs, infer<Op::eigvalsh, true>,
         bit(0), bit(0), bit(0), 0, eigh_vjp, eigh_jvp},
        {"svd", "(U, S, Vh): A = U diag(S) Vh, S descending", 1, 3, svd_attrs, infer<Op::svd, false>, bit(0),
         bit(0) | bit(1) | bit(2), 0, bit(0) | bit(1) | bit(2), svd_vjp, svd_jvp},
        {"svdvals", "singular values, descending", 1, 1, {}, infer<Op::svdvals, false>, bit(0), bit(0), bit(0), 0,
         svd_vjp, svd_jvp},
        {"triangular_solve", "X with A X = B (or X A = B) for triangular A", 2, 1, triangular_attrs,
         infer<Op::triangular_solve, true>, bit(0) | bit(1), bit(0), bit(0), bit(0), triangular_solve_vjp,
         triangular_solve_jvp},
        {"lu_factor", "(LU, pivots): A = P L U packed as in LAPACK, pivots 1-based (torch.linalg.lu_factor)", 1, 2, {},
         infer<Op::lu_factor, false>, bit(0), bit(0), 0, bit(0) | bit(1), lu_vjp, lu_jvp},
        {"lu", "(P, L, U): A = P L U, L unit lower triangular, U upper triangular", 1, 3, {}, infer<Op::lu, false>,
         bit(0), bit(1) | bit(2), 0, bit(0) | bit(1) | bit(2), lu_vjp, lu_jvp},
        {"lu_unpack", "(P, L, U) from lu_factor's (LU, pivots)", 2, 3, {}, infer<Op::lu_unpack, false>, bit(0),
         bit(1) | bit(2), 0, 0, lu_unpack_vjp, lu_unpack_jvp},
        {"lu_solve", "X with A X = B (or X A = B, or with A^H) from lu_factor's (LU, pivots)", 3, 1, lu_solve_attrs,
         infer<Op::lu_solve, true>, bit(0) | bit(2), bit(0), bit(0) | bit(1), bit(0), lu_solve_vjp, lu_solve_jvp},
        {"eig", "(w, V): A V = V diag(w), complex, each column of V of norm 1 (LAPACK's phase)", 1, 2, {},
         infer<Op::eig, true>, bit(0), bit(0) | bit(1), 0, bit(0) | bit(1), eig_vjp, eig_jvp},
        {"eigvals", "eigenvalues of a general matrix (complex)", 1, 1, {}, infer<Op::eigvals, true>, bit(0), bit(0),
         bit(0), 0, eig_vjp, eig_jvp},
        {"matrix_exp", "exp(A) = sum A^k / k! (scaling and squaring, Pade; Higham 2005)", 1, 1, {},
         infer<Op::matrix_exp, true>, bit(0), bit(0), bit(0), 0, matrix_exp_vjp, matrix_exp_jvp},
        {"pinv", "the Moore-Penrose pseudo-inverse, through the SVD (or eigh when hermitian)", 1, 1, pinv_attrs,
         infer<Op::pinv, false>, bit(0), bit(0), bit(0), bit(0), pinv_vjp, pinv_jvp},
        {"matrix_rank", "the number of singular values above the tolerance (i64)", 1, 1, pinv_attrs,
         infer<Op::matrix_rank, false>, 0, 0, 0, 0, nullptr, nullptr},
        {"vector_norm", "(sum |x|^p)^(1/p) over axes; max |x| for inf, min for -inf, non-zeros for 0", 1, 1,
         vector_norm_attrs, infer_vector_norm, bit(0), bit(0), bit(0), bit(0), vector_norm_vjp, vector_norm_jvp},
        {"matrix_norm", "Frobenius, nuclear, spectral (2, -2), max/min column (1, -1) or row (inf, -inf) sum norms", 1, 1,
         matrix_norm_attrs, infer_matrix_norm, bit(0), bit(0), bit(0), bit(0), matrix_norm_vjp, matrix_norm_jvp},
        {"cond", "the condition number ||A|| ||A^-1|| (p = 2: largest / smallest singular value)", 1, 1, cond_attrs,
         infer<Op::cond, false>, bit(0), bit(0), bit(0), 0, cond_vjp, cond_jvp},
        {"lstsq", "(X, residuals, rank, singular values): X minimises ||A X - B|| (minimum norm)", 2, 4, lstsq_attrs,
         infer<Op::lstsq, false>, bit(0) | bit(1), bit(0) | bit(1) | bit(3), bit(0) | bit(1), bit(0), lstsq_vjp, lstsq_jvp},
        {"inverse_gaps", "F[..., i, j] = 1/(x_j - x_i) (of x^2 with squares), 0 on the diagonal: the spectral factor "
                         "of eigh and svd derivatives", 1, 1, inverse_gaps_attrs, infer_inverse_gaps, bit(0), bit(0),
         bit(0), bit(0), inverse_gaps_vjp, inverse_gaps_jvp, real_dtypes},
        {"solve_with_lu", "(X, LU, pivots): solve's X and lu_factor's (LU, pivots) of A, for more solves with "
                          "lu_solve; its backward solves with them instead of factoring A^H", 2, 3, {},
         infer<Op::solve_with_lu, true>, bit(0) | bit(1), bit(0) | bit(1), 0, bit(0) | bit(1) | bit(2),
         solve_with_lu_vjp, solve_with_lu_jvp},
    };
    static_assert(std::size(entries) == static_cast<size_t>(Op::count));
    std::vector<ferro_op_schema> out;
    for (const Entry& e : entries) out.push_back(make_schema(e));
    return out;
}

}  // namespace

const ferro_op_schema* schemas() {
    static const std::vector<ferro_op_schema> table = build_schemas();
    return table.data();
}

std::string qualified(Op op) { return std::string("linalg.") + op_name(op); }

std::string shape_str(std::span<const int64_t> shape) {
    std::ostringstream s;
    s << '[';
    for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
    s << ']';
    return s.str();
}

void require_matrix(Op op, const ferro_signature& s, int index, bool square) {
    if (s.ndim < 2) {
        invalid(op, "input " + std::to_string(index) + " must be a matrix or a batch of matrices ([..., m, n]), got shape " +
                        shape_str(dims(s)));
    }
    if (square && rows(s) != cols(s)) {
        invalid(op, "input " + std::to_string(index) + " must be square ([..., n, n]), got shape " + shape_str(dims(s)));
    }
}

void require_float(Op op, const ferro_signature& s, int index) {
    if (s.dtype != FERRO_DTYPE_F32 && s.dtype != FERRO_DTYPE_F64 && s.dtype != FERRO_DTYPE_C64 &&
        s.dtype != FERRO_DTYPE_C128) {
        invalid(op, "input " + std::to_string(index) + " must be f32, f64, c64 or c128, got " +
                        plugin::dtype_attr_name(s.dtype));
    }
}

std::vector<int64_t> broadcast_batch(Op op, std::span<const int64_t> a, std::span<const int64_t> b) {
    std::vector<int64_t> out(std::max(a.size(), b.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
        const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
        const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
        if (da != db && da != 1 && db != 1) {
            invalid(op, "the batch shapes of input 0 " + shape_str(a) + " and input 1 " + shape_str(b) +
                            " do not broadcast");
        }
        out[out.size() - 1 - i] = da == 1 ? db : da;
    }
    return out;
}

MatrixOrd matrix_ord(Op op, const char* ord) {
    const std::string o = ord;
    if (o == "fro") return MatrixOrd::fro;
    if (o == "nuc") return MatrixOrd::nuc;
    if (o == "1") return MatrixOrd::one;
    if (o == "-1") return MatrixOrd::minus_one;
    if (o == "2") return MatrixOrd::two;
    if (o == "-2") return MatrixOrd::minus_two;
    if (o == "inf") return MatrixOrd::inf;
    if (o == "-inf") return MatrixOrd::minus_inf;
    invalid(op, "attribute " + std::string(op == Op::matrix_norm ? "ord" : "p") +
                    " must be one of fro, nuc, inf, -inf, 1, -1, 2, -2, got \"" + o + "\"");
}

std::pair<int64_t, int64_t> matrix_axes(Op op, const ferro_attr_value& axes, int ndim) {
    if (axes.type == FERRO_ATTR_NONE) return {ndim - 2, ndim - 1};
    if (axes.count != 2) invalid(op, "attribute axes must name 2 axes, got " + std::to_string(axes.count));
    int64_t out[2];
    for (int i = 0; i < 2; ++i) {
        const int64_t axis = axes.v.i64_array[i];
        if (axis < -ndim || axis >= ndim) {
            invalid(op, "axes entry " + std::to_string(i) + " is " + std::to_string(axis) + ", out of range for input 0 with " +
                            std::to_string(ndim) + " dimensions");
        }
        out[i] = axis < 0 ? axis + ndim : axis;
    }
    if (out[0] == out[1]) invalid(op, "axes entry 1 repeats axis " + std::to_string(out[0]));
    return {out[0], out[1]};
}

std::vector<int64_t> norm_axes(Op op, const ferro_attr_value& axes, int ndim) {
    std::vector<int64_t> out;
    if (axes.type == FERRO_ATTR_NONE || axes.count == 0) {
        for (int d = 0; d < ndim; ++d) out.push_back(d);
        return out;
    }
    for (uint32_t i = 0; i < axes.count; ++i) {
        const int64_t axis = axes.v.i64_array[i];
        const bool ok = ndim == 0 ? (axis == 0 || axis == -1) : (axis >= -ndim && axis < ndim);  // a 0-d tensor has axis 0
        if (!ok) {
            invalid(op, "axes entry " + std::to_string(i) + " is " + std::to_string(axis) + ", out of range for input 0 with " +
                            std::to_string(ndim) + " dimensions");
        }
        const int64_t normal = ndim == 0 ? 0 : (axis < 0 ? axis + ndim : axis);
        if (std::find(out.begin(), out.end(), normal) != out.end()) {
            invalid(op, "axes entry " + std::to_string(i) + " repeats axis " + std::to_string(normal));
        }
        out.push_back(normal);
    }
    if (ndim == 0) out.clear();  // a 0-d tensor: the norm of its one element
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace ferro::linalg
