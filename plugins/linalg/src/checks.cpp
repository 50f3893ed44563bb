// The checks and messages the ops' infers share: matrices, dtypes, batches, pivots, and the
// attributes more than one op reads (norm orders and axes).
#include "linalg.hpp"

#include <ferro/schema.hpp>

#include <algorithm>
#include <sstream>

namespace ferro::linalg {

ferro_signature out_sig(ferro_dtype dtype, std::span<const int64_t> batch, std::initializer_list<int64_t> tail) {
    ferro_signature s{};
    s.struct_size = sizeof s;
    s.dtype = dtype;
    for (int64_t d : batch) s.shape[s.ndim++] = d;
    for (int64_t d : tail) s.shape[s.ndim++] = d;
    return s;
}

void require_pivots(Op op, const ferro_signature& p, int index, std::span<const int64_t> batch, int64_t count) {
    std::vector<int64_t> want(batch.begin(), batch.end());
    want.push_back(count);
    if (p.dtype != FERRO_DTYPE_I64 || !std::equal(want.begin(), want.end(), p.shape, p.shape + p.ndim) ||
        static_cast<size_t>(p.ndim) != want.size()) {
        invalid(op, "input " + std::to_string(index) + " (pivots) must be i64 of shape " + shape_str(want) + ", got " +
                        plugin::dtype_attr_name(p.dtype) + " " + shape_str(dims(p)));
    }
}

ferro_signature solve_rhs(Op op, const ferro_signature& a, const ferro_signature& b, int index, bool left) {
    require_float(op, b, index);
    require_same_dtype(op, a, b, index, "B");
    require_matrix(op, b, index, false);
    const int64_t n = a.shape[a.ndim - 1];
    if ((left ? rows(b) : cols(b)) != n) {
        invalid(op, "input " + std::to_string(index) + " (B) has shape " + shape_str(dims(b)) + ", expected " +
                        (left ? "[..., " + std::to_string(n) + ", k]" : "[..., k, " + std::to_string(n) + "]") +
                        " to match input 0 of shape " + shape_str(dims(a)));
    }
    return out_sig(a.dtype, broadcast_batch(op, batch_of(a), batch_of(b)), {rows(b), cols(b)});
}

void require_same_dtype(Op op, const ferro_signature& a, const ferro_signature& b, int index, const char* what) {
    if (b.dtype != a.dtype) {
        invalid(op, "input " + std::to_string(index) + " (" + what + ") must have input 0's dtype " +
                        plugin::dtype_attr_name(a.dtype) + ", got " + plugin::dtype_attr_name(b.dtype));
    }
}

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
    if (s.dtype != FERRO_DTYPE_F32 && s.dtype != FERRO_DTYPE_F64 && s.dtype != FERRO_DTYPE_C64 && s.dtype != FERRO_DTYPE_C128) {
        invalid(op, "input " + std::to_string(index) + " must be f32, f64, c64 or c128, got " + plugin::dtype_attr_name(s.dtype));
    }
}

std::vector<int64_t> broadcast_batch(Op op, std::span<const int64_t> a, std::span<const int64_t> b) {
    std::vector<int64_t> out(std::max(a.size(), b.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
        const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
        const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
        if (da != db && da != 1 && db != 1) {
            invalid(op, "the batch shapes of input 0 " + shape_str(a) + " and input 1 " + shape_str(b) + " do not broadcast");
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
