// gemm_batched through cuBLAS's strided batched product (the 64-bit-size API, every dtype
// through cublasGemmStridedBatchedEx_64), laid out by plan_gemm (gemm_plan.hpp): operands that
// no op can read are copied into column-major temporaries with the engine's own kernels first.
#include "engine.hpp"
#include "gemm_plan.hpp"

#include <cuComplex.h>

namespace ferro::cuda {
namespace {

int64_t itemsize(ferro_dtype dt) { return FERRO_DTYPE_BITS(dt) / 8; }

// A ferro view of `x` at ptr as [batch, rows, cols], for the copy kernels.
struct View3 {
    int64_t shape[3], strides[3];
    ferro_tensor_view view{};
    View3(char* ptr, const MatrixLayout& x, int64_t batch, ferro_dtype dt) {
        shape[0] = batch;
        shape[1] = x.rows;
        shape[2] = x.cols;
        strides[0] = x.bs;
        strides[1] = x.rs;
        strides[2] = x.cs;
        view.struct_size = sizeof view;
        view.dtype = dt;
        view.ndim = 3;
        view.shape = shape;
        view.strides = strides;
        view.buffer = reinterpret_cast<ferro_buffer>(ptr);
        view.data = ptr;
    }
};

// from -> to, conjugating when asked.
ferro_status copy_matrices(Session& s, const View3& from, const View3& to, bool conj) {
    if (conj) {
        const ferro_unary_args args{sizeof(ferro_unary_args), FERRO_UNARY_CONJ, from.view, to.view};
        return unary(s, args);
    }
    const ferro_copy_args args{sizeof(ferro_copy_args), 0, from.view, to.view};
    return copy_strided(s, args);
}

MatrixLayout as_read(const MatrixLayout& x, bool transposed) {
    if (!transposed) return x;
    MatrixLayout t = x;
    std::swap(t.rows, t.cols);
    std::swap(t.rs, t.cs);
    return t;
}

cudaDataType_t data_type(ferro_dtype dt) {
    switch (dt) {
        case FERRO_DTYPE_F32: return CUDA_R_32F;
        case FERRO_DTYPE_F64: return CUDA_R_64F;
        case FERRO_DTYPE_C64: return CUDA_C_32F;
        default: return CUDA_C_64F;
    }
}

cublasOperation_t blas_op(BlasOp op) { return op == BlasOp::N ? CUBLAS_OP_N : op == BlasOp::T ? CUBLAS_OP_T : CUBLAS_OP_C; }

// alpha/beta in the compute type's representation.
struct Scalar {
    alignas(16) unsigned char bytes[16];
    Scalar(ferro_dtype dt, const ferro_scalar& v) {
        if (dt == FERRO_DTYPE_F32) *reinterpret_cast<float*>(bytes) = static_cast<float>(v.real);
        else if (dt == FERRO_DTYPE_F64) *reinterpret_cast<double*>(bytes) = v.real;
        else if (dt == FERRO_DTYPE_C64)
            *reinterpret_cast<cuComplex*>(bytes) = make_cuComplex(static_cast<float>(v.real), static_cast<float>(v.imag));
        else *reinterpret_cast<cuDoubleComplex*>(bytes) = make_cuDoubleComplex(v.real, v.imag);
    }
};

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
    const bool complex = dt == FERRO_DTYPE_C64 || dt == FERRO_DTYPE_C128;
    const ferro_gemm_operand* sources[3] = {&g.a, &g.b, &g.c};
    const MatrixLayout layouts[3] = {{g.m, g.k, g.a.batch_stride, g.a.row_stride, g.a.col_stride, complex && g.conj_a != 0},
                                     {g.k, g.n, g.b.batch_stride, g.b.row_stride, g.b.col_stride, complex && g.conj_b != 0},
                                     {g.m, g.n, g.c.batch_stride, g.c.row_stride, g.c.col_stride, false}};
    auto pointer = [&](int source) {
        return static_cast<char*>(static_cast<void*>(sources[source]->buffer)) + sources[source]->byte_offset;
    };
    const GemmPlan plan = plan_gemm(layouts[0], layouts[1], layouts[2], g.batch);
    const bool read_c = g.beta.real != 0 || g.beta.imag != 0;
    Temporaries temps{e};
    char* ptr[3] = {nullptr, nullptr, nullptr};
    const GemmOperand* ops[3] = {&plan.a, &plan.b, &plan.c};
    for (int i = 0; i < 3; ++i) {
        const GemmOperand& o = *ops[i];
        ptr[i] = pointer(o.source);
        if (!o.copy) continue;
        const MatrixLayout source = as_read(layouts[o.source], o.transposed);
        const int64_t copies = o.layout.bs == 0 ? 1 : g.batch;
        const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(1, o.layout.rows * o.layout.cols) * copies * itemsize(dt));
        if (ferro_status st = alloc_async(e, bytes, &temps.memory[i])) return st;
        char* temp = static_cast<char*>(temps.memory[i]);
        if (i < 2 || read_c) {  // a C that beta does not read needs no copy in
            if (ferro_status st =
                    copy_matrices(s, View3(ptr[i], source, copies, dt), View3(temp, o.layout, copies, dt), source.conj)) {
                return st;
            }
        }
        ptr[i] = temp;
    }
    const Scalar alpha(dt, g.alpha), beta(dt, g.beta);
    const cudaDataType_t type = data_type(dt);
    const cublasComputeType_t compute =
        (dt == FERRO_DTYPE_F32 || dt == FERRO_DTYPE_C64) ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
    const cublasStatus_t r = e.lib->cublasGemmStridedBatchedEx_64(
        s.blas, blas_op(plan.a.op), blas_op(plan.b.op), plan.m, plan.n, plan.k, alpha.bytes, ptr[0], type, plan.a.ld,
        plan.a.layout.bs, ptr[1], type, plan.b.ld, plan.b.layout.bs, beta.bytes, ptr[2], type, plan.c.ld, plan.c.layout.bs,
        g.batch, compute, CUBLAS_GEMM_DEFAULT);
    if (r != CUBLAS_STATUS_SUCCESS) return call_failed(e, "cublasGemmStridedBatchedEx_64", r);
    if (plan.c.copy) {  // the product was computed in a temporary: into C
        const MatrixLayout target = as_read(layouts[2], plan.c.transposed);
        return copy_matrices(s, View3(ptr[2], plan.c.layout, g.batch, dt), View3(pointer(2), target, g.batch, dt), false);
    }
    return nullptr;
}

}  // namespace ferro::cuda
