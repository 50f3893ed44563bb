// gemm_batched through cuBLAS's strided batched product (the 64-bit-size API, any dtype
// through cublasGemmStridedBatchedEx_64). cuBLAS wants column-major matrices with a leading
// dimension; ferro's operands have any row and column strides. A row-major C is computed as
// C^T = B^T A^T, every operand is read through N or T/C where its strides allow, and operands
// (or a C) that no op can read — a conjugate without transpose, negative or overlapping
// strides — are copied into column-major temporaries first.
#include "engine.hpp"

#include <algorithm>
#include <cuComplex.h>
#include <utility>

namespace ferro::cuda {
namespace {

// One operand as a rows x cols matrix: element (i, j) of batch p at ptr + p*bs + i*rs + j*cs.
struct Matrix {
    char* ptr;
    int64_t rows, cols, bs, rs, cs;
    bool conj;
};

Matrix transposed(Matrix x) {
    std::swap(x.rows, x.cols);
    std::swap(x.rs, x.cs);
    return x;
}

// How cuBLAS reads x: op and leading dimension, when it can.
struct Reading {
    cublasOperation_t op;
    int64_t ld;
};

bool column_major(const Matrix& x, int64_t& ld) {
    if (x.rows != 1 && x.rs != 1) return false;
    ld = x.cols == 1 ? std::max<int64_t>(1, x.rows) : x.cs;
    return ld >= std::max<int64_t>(1, x.rows);
}

bool readable(const Matrix& x, Reading& r) {
    if (x.bs < 0) return false;
    int64_t ld = 0;
    if (!x.conj && column_major(x, ld)) {
        r = {CUBLAS_OP_N, ld};
        return true;
    }
    if (column_major(transposed(x), ld)) {  // x^T is column-major: read it transposed
        r = {x.conj ? CUBLAS_OP_C : CUBLAS_OP_T, ld};
        return true;
    }
    return false;
}

int64_t itemsize(ferro_dtype dt) { return FERRO_DTYPE_BITS(dt) / 8; }

// A ferro view of `x` as [batch, rows, cols] (element strides), for the copy kernels.
struct View3 {
    int64_t shape[3], strides[3];
    ferro_tensor_view view{};
    View3(const Matrix& x, int64_t batch, ferro_dtype dt) {
        const int64_t size = itemsize(dt);
        shape[0] = batch;
        shape[1] = x.rows;
        shape[2] = x.cols;
        strides[0] = x.bs / size;
        strides[1] = x.rs / size;
        strides[2] = x.cs / size;
        view.struct_size = sizeof view;
        view.dtype = dt;
        view.ndim = 3;
        view.shape = shape;
        view.strides = strides;
        view.buffer = reinterpret_cast<ferro_buffer>(x.ptr);
        view.data = x.ptr;
    }
};

// Copies x (conjugated if x.conj) into new column-major memory; the result has conj false.
// A matrix shared by every batch (bs 0) is copied once.
ferro_status to_column_major(Session& s, const Matrix& x, int64_t batch, ferro_dtype dt, Matrix& out, void*& temp) {
    const int64_t size = itemsize(dt), copies = x.bs == 0 ? 1 : batch;
    const int64_t matrix_bytes = std::max<int64_t>(1, x.rows * x.cols) * size;
    if (ferro_status st = alloc_async(*s.engine, static_cast<uint64_t>(matrix_bytes * copies), &temp)) return st;
    out = {static_cast<char*>(temp), x.rows, x.cols, x.bs == 0 ? 0 : matrix_bytes, size, x.rows * size, false};
    const View3 from(x, copies, dt), to(out, copies, dt);
    if (x.conj) {
        const ferro_unary_args args{sizeof(ferro_unary_args), FERRO_UNARY_CONJ, from.view, to.view};
        return unary(s, args);
    }
    const ferro_copy_args args{sizeof(ferro_copy_args), 0, from.view, to.view};
    return copy_strided(s, args);
}

cudaDataType_t data_type(ferro_dtype dt) {
    switch (dt) {
        case FERRO_DTYPE_F32: return CUDA_R_32F;
        case FERRO_DTYPE_F64: return CUDA_R_64F;
        case FERRO_DTYPE_C64: return CUDA_C_32F;
        default: return CUDA_C_64F;
    }
}

// alpha/beta in the compute type's representation.
struct Scalar {
    alignas(16) unsigned char bytes[16];
    Scalar(ferro_dtype dt, const ferro_scalar& v) {
        if (dt == FERRO_DTYPE_F32) *reinterpret_cast<float*>(bytes) = static_cast<float>(v.real);
        else if (dt == FERRO_DTYPE_F64) *reinterpret_cast<double*>(bytes) = v.real;
        else if (dt == FERRO_DTYPE_C64) *reinterpret_cast<cuComplex*>(bytes) = make_cuComplex(static_cast<float>(v.real), static_cast<float>(v.imag));
        else *reinterpret_cast<cuDoubleComplex*>(bytes) = make_cuDoubleComplex(v.real, v.imag);
    }
};

Matrix matrix_of(const ferro_gemm_operand& o, int64_t rows, int64_t cols, int64_t size, bool conj) {
    return {static_cast<char*>(static_cast<void*>(o.buffer)) + o.byte_offset, rows, cols, o.batch_stride * size,
            o.row_stride * size, o.col_stride * size, conj};
}

// Frees the temporaries (stream-ordered) when the product has been enqueued or has failed.
struct Temporaries {
    Engine& engine;
    void* memory[3] = {nullptr, nullptr, nullptr};
    ~Temporaries() {
        for (void* p : memory) {
            if (p != nullptr) free_async(engine, p);
        }
    }
};

}  // namespace

ferro_status gemm_batched(Session& s, const ferro_gemm_args& g) {
    Engine& e = *s.engine;
    const ferro_dtype dt = g.dtype;
    if (dt != FERRO_DTYPE_F32 && dt != FERRO_DTYPE_F64 && dt != FERRO_DTYPE_C64 && dt != FERRO_DTYPE_C128) {
        return make_status(e, FERRO_UNIMPLEMENTED, "gemm_batched does not support this dtype (f32, f64, c64, c128 only)");
    }
    if (g.batch == 0 || g.m == 0 || g.n == 0) return nullptr;
    const int64_t size = itemsize(dt);
    const bool complex = dt == FERRO_DTYPE_C64 || dt == FERRO_DTYPE_C128;
    Matrix a = matrix_of(g.a, g.m, g.k, size, complex && g.conj_a);
    Matrix b = matrix_of(g.b, g.k, g.n, size, complex && g.conj_b);
    Matrix c = matrix_of(g.c, g.m, g.n, size, false);
    int64_t m = g.m, n = g.n, ldc = 0;
    // A row-major C: compute C^T = B^T A^T, which cuBLAS sees column-major.
    if (!column_major(c, ldc) && column_major(transposed(c), ldc)) {
        std::swap(a, b);
        a = transposed(a);
        b = transposed(b);
        c = transposed(c);
        std::swap(m, n);
    }
    Temporaries temps{e};
    const Matrix c_target = c;
    const bool c_direct = c.bs >= 0 && column_major(c, ldc) && !(c.bs == 0 && g.batch > 1);
    const bool read_c = g.beta.real != 0 || g.beta.imag != 0;
    if (!c_direct) {  // compute into a column-major temporary, copied out at the end
        const Matrix from = {c.ptr, c.rows, c.cols, c.bs, c.rs, c.cs, false};
        if (read_c) {
            if (ferro_status st = to_column_major(s, from, g.batch, dt, c, temps.memory[2])) return st;
        } else {
            if (ferro_status st = alloc_async(e, static_cast<uint64_t>(std::max<int64_t>(1, m * n) * size * g.batch), &temps.memory[2])) return st;
            c = {static_cast<char*>(temps.memory[2]), m, n, m * n * size, size, m * size, false};
        }
        ldc = std::max<int64_t>(1, m);
    }
    Reading ra{}, rb{};
    if (!readable(a, ra)) {
        if (ferro_status st = to_column_major(s, a, g.batch, dt, a, temps.memory[0])) return st;
        readable(a, ra);
    }
    if (!readable(b, rb)) {
        if (ferro_status st = to_column_major(s, b, g.batch, dt, b, temps.memory[1])) return st;
        readable(b, rb);
    }
    const Scalar alpha(dt, g.alpha), beta(dt, g.beta);
    const cudaDataType_t type = data_type(dt);
    const cublasComputeType_t compute = (dt == FERRO_DTYPE_F32 || dt == FERRO_DTYPE_C64) ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
    const cublasStatus_t r = e.lib->cublasGemmStridedBatchedEx_64(
        s.blas, ra.op, rb.op, m, n, g.k, alpha.bytes, a.ptr, type, ra.ld, a.bs / size, b.ptr, type, rb.ld, b.bs / size,
        beta.bytes, c.ptr, type, ldc, c.bs / size, g.batch, compute, CUBLAS_GEMM_DEFAULT);
    if (r != CUBLAS_STATUS_SUCCESS) return call_failed(e, "cublasGemmStridedBatchedEx_64", r);
    if (!c_direct) {
        const View3 from(c, g.batch, dt), to(c_target, g.batch, dt);
        const ferro_copy_args args{sizeof(ferro_copy_args), 0, from.view, to.view};
        return copy_strided(s, args);
    }
    return nullptr;
}

}  // namespace ferro::cuda
