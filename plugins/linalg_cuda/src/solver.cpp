// See solver.hpp. Matrices live column-major in the workspace, `count` of each back to back,
// so a row-major input gathered "as is" is the matrix itself for cuSOLVER. Batches run as a
// loop of cuSOLVER calls on the one stream; info codes come back to the host once, after the
// loop, and the lowest failing matrix of the batch is reported as the cpu module reports it.
#include "solver.hpp"

#include <ferro/cuda/errors.hpp>
#include "kernels.hpp"

#include <ferro/cuda_context.h>
#include <ferro/plugin.hpp>

#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

namespace ferro::linalg::cuda {
namespace {

cudaDataType data_type(ferro_dtype d) {
    switch (d) {
        case FERRO_DTYPE_F32: return CUDA_R_32F;
        case FERRO_DTYPE_F64: return CUDA_R_64F;
        case FERRO_DTYPE_C64: return CUDA_C_32F;
        default: return CUDA_C_64F;
    }
}

std::string shape_text(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

// The batch index (one per batch axis) of flat index `flat`.
std::vector<int64_t> batch_index(const std::vector<int64_t>& batch, int64_t flat) {
    std::vector<int64_t> index(batch.size());
    for (size_t i = batch.size(); i-- > 0;) {
        index[i] = batch[i] == 0 ? 0 : flat % batch[i];
        flat = batch[i] == 0 ? 0 : flat / batch[i];
    }
    return index;
}

class Run {
public:
    Run(const CudaPlan& p, const ferro_host_api* host, const ferro_exec_args& args) : p_(p), L(*p.lib), host_(host), args_(args) {
        item_ = FERRO_DTYPE_BITS(p.dtype) / 8;
        real_ = real_dtype(p.dtype);
    }
    ~Run() {
        for (void* ptr : temporaries_) ctx_->free_async(ctx_, ptr);  // temporaries exist only once ctx_ does
        if (params_ != nullptr) L.cusolverDnDestroyParams(params_);
    }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    void go();

private:
    const CudaPlan& p_;
    const ferro::cuda::CudaLibraries& L;  // cuBLAS and cuSOLVER
    const ferro_host_api* host_;
    const ferro_exec_args& args_;
    const ferro_cuda_context* ctx_ = nullptr;
    cusolverDnParams_t params_ = nullptr;
    int64_t item_ = 0;
    ferro_dtype real_ = FERRO_DTYPE_INVALID;
    std::vector<void*> temporaries_;
    std::vector<std::vector<int64_t>> shapes_;  // backing storage of the views made here
    // The first failure of the batch.
    int64_t fail_index_ = -1;
    uint32_t fail_code_ = 0;
    std::string fail_why_;

    // ---- workspace views -------------------------------------------------------------
    char* ws(const Region& r) const { return static_cast<char*>(args_.workspace.data) + r.offset; }
    const std::vector<int64_t>& keep(std::vector<int64_t> v) {
        shapes_.push_back(std::move(v));
        return shapes_.back();
    }
    // `count` column-major rows x cols matrices at r (+ byte offset), viewed as [batch..., rows, cols]
    // (transposed: [batch..., cols, rows] of the same memory).
    ferro_tensor_view matrices(const Region& r, ferro_dtype dtype, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                               bool transposed = false, uint64_t offset = 0) {
        std::vector<int64_t> shape = p_.batch, strides(p_.batch.size());
        int64_t s = stride;
        for (size_t i = p_.batch.size(); i-- > 0;) {
            strides[i] = s;
            s *= p_.batch[i];
        }
        shape.push_back(transposed ? cols : rows);
        shape.push_back(transposed ? rows : cols);
        strides.push_back(transposed ? ld : 1);
        strides.push_back(transposed ? 1 : ld);
        ferro_tensor_view v{};
        v.struct_size = sizeof v;
        v.dtype = dtype;
        v.ndim = static_cast<int32_t>(shape.size());
        v.shape = keep(std::move(shape)).data();
        v.strides = keep(std::move(strides)).data();
        v.buffer = args_.workspace.buffer;
        v.byte_offset = args_.workspace.byte_offset + r.offset + offset;
        v.data = ws(r) + offset;
        return v;
    }
    ferro_tensor_view dense(const Region& r, ferro_dtype dtype, int64_t rows, int64_t cols, bool transposed = false) {
        return matrices(r, dtype, rows, cols, rows, rows * cols, transposed);
    }
    // A vector of `len` per matrix at r, as [batch..., len].
    ferro_tensor_view vectors(const Region& r, ferro_dtype dtype, int64_t len) {
        ferro_tensor_view v = matrices(r, dtype, len, 1, len, len);
        v.ndim -= 1;
        return v;
    }
    // Input i broadcast to the batch: [batch..., rows, cols] (vector inputs get a column of 1).
    ferro_tensor_view input(uint32_t i, int matrix_dims) {
        const ferro_tensor_view& in = args_.inputs[i];
        const size_t nb = p_.batch.size();
        const int vb = in.ndim - matrix_dims;
        std::vector<int64_t> shape = p_.batch, strides(nb, 0);
        for (size_t j = 0; j < nb; ++j) {
            const int d = vb - static_cast<int>(nb - j);
            if (d >= 0 && in.shape[d] != 1) strides[j] = in.strides[d];
        }
        for (int d = vb; d < in.ndim; ++d) {
            shape.push_back(in.shape[d]);
            strides.push_back(in.strides[d]);
        }
        if (matrix_dims == 1) {  // a column
            shape.push_back(1);
            strides.push_back(0);
        }
        ferro_tensor_view v = in;
        v.ndim = static_cast<int32_t>(shape.size());
        v.shape = keep(std::move(shape)).data();
        v.strides = keep(std::move(strides)).data();
        return v;
    }
    static ferro_tensor_view transpose_last(ferro_tensor_view v, std::vector<int64_t>& shape, std::vector<int64_t>& strides) {
        shape.assign(v.shape, v.shape + v.ndim);
        strides.assign(v.strides, v.strides + v.ndim);
        std::swap(shape[v.ndim - 1], shape[v.ndim - 2]);
        std::swap(strides[v.ndim - 1], strides[v.ndim - 2]);
        v.shape = shape.data();
        v.strides = strides.data();
        return v;
    }
    // Output i as [batch..., rows, cols] (vector and scalar outputs padded with 1s).
    ferro_tensor_view output(uint32_t i, int matrix_dims) {
        const ferro_tensor_view& out = args_.outputs[i];
        std::vector<int64_t> shape(out.shape, out.shape + out.ndim), strides(out.strides, out.strides + out.ndim);
        for (int d = matrix_dims; d < 2; ++d) {
            shape.push_back(1);
            strides.push_back(0);
        }
        ferro_tensor_view v = out;
        v.ndim = static_cast<int32_t>(shape.size());
        v.shape = keep(std::move(shape)).data();
        v.strides = keep(std::move(strides)).data();
        return v;
    }

    // ---- primitives ---------------------------------------------------------------------
    void copy(const ferro_tensor_view& from, const ferro_tensor_view& to, bool conj = false) {
        if (conj && is_complex(p_.dtype)) {
            ferro_unary_args u{sizeof u, FERRO_UNARY_CONJ, from, to};
            plugin::check(host_, host_->session_unary(args_.session, &u));
        } else {
            ferro_copy_args c{sizeof c, 0, from, to};
            plugin::check(host_, host_->session_copy_strided(args_.session, &c));
        }
    }
    void fill(const ferro_tensor_view& v, double value) {
        ferro_fill_args f{sizeof f, 0, v, {value, 0, value != 0 ? 1 : 0}};
        plugin::check(host_, host_->session_fill(args_.session, &f));
    }
    // Identity matrices n x n at r.
    void identity(const Region& r, int64_t n) {
        fill(dense(r, p_.dtype, n, n), 0);
        ferro_tensor_view diagonal = matrices(r, p_.dtype, n, 1, n + 1, n * n);
        diagonal.ndim -= 1;  // [batch..., n] with stride n + 1
        std::vector<int64_t> strides(diagonal.strides, diagonal.strides + diagonal.ndim);
        strides.back() = n + 1;
        diagonal.strides = keep(std::move(strides)).data();
        fill(diagonal, 1);
    }
    // The native context, after the primitives enqueued so far.
    void native() {
        const void* c = nullptr;
        plugin::check(host_, host_->session_native_context(args_.session, &c));
        ctx_ = static_cast<const ferro_cuda_context*>(c);
        const cudaError_t r = cudaSetDevice(ctx_->device);
        if (r != cudaSuccess) fail_cuda("cudaSetDevice", r);
        if (params_ == nullptr) {
            const cusolverStatus_t s = L.cusolverDnCreateParams(&params_);
            if (s != CUSOLVER_STATUS_SUCCESS) fail_solver("cusolverDnCreateParams", s);
        }
    }
    cusolverDnHandle_t solver() const { return static_cast<cusolverDnHandle_t>(ctx_->cusolver); }
    cudaStream_t stream() const { return static_cast<cudaStream_t>(ctx_->stream); }
    void* temporary(uint64_t bytes) {
        void* ptr = nullptr;
        plugin::check(host_, ctx_->alloc_async(ctx_, std::max<uint64_t>(bytes, 1), &ptr));
        temporaries_.push_back(ptr);
        return ptr;
    }

    // ---- errors ------------------------------------------------------------------------
    [[noreturn]] void fail_cuda(const std::string& call, cudaError_t e) const {
        throw plugin::Error(ferro::cuda::status_code(e),
                            op_label(p_.op) + " (cuda): " + call + " failed: " + ferro::cuda::error_text(e));
    }
    [[noreturn]] void fail_solver(const std::string& call, cusolverStatus_t e) const {
        throw plugin::Error(ferro::cuda::status_code(e),
                            op_label(p_.op) + " (cuda): " + call + " failed: " + ferro::cuda::error_text(e));
    }
    [[noreturn]] void fail_blas(const std::string& call, cublasStatus_t e) const {
        throw plugin::Error(ferro::cuda::status_code(e),
                            op_label(p_.op) + " (cuda): " + call + " failed: " + ferro::cuda::error_text(e));
    }
    void check_solver(const char* call, cusolverStatus_t e) const {
        if (e != CUSOLVER_STATUS_SUCCESS) fail_solver(call, e);
    }
    void check_cuda(const char* call, cudaError_t e) const {
        if (e != cudaSuccess) fail_cuda(call, e);
    }
    void record(int64_t index, uint32_t code, std::string why) {
        if (fail_index_ < 0 || index < fail_index_) {
            fail_index_ = index;
            fail_code_ = code;
            fail_why_ = std::move(why);
        }
    }
    // Throws the batch's first failure, as the cpu module words it.
    void report() const {
        if (fail_index_ < 0) return;
        const std::string where =
            p_.batch.empty() ? "the matrix" : "matrix " + shape_text(batch_index(p_.batch, fail_index_)) + " of the batch";
        throw plugin::Error(fail_code_, op_label(p_.op) + ": " + where + " " + fail_why_);
    }
    // Queues the copy of `count` elements at `device` into `host` (valid after wait()).
    template <class T> void download(const void* device, int64_t count, std::vector<T>& host) {
        host.resize(static_cast<size_t>(count));
        if (count == 0) return;
        check_cuda("cudaMemcpyAsync", cudaMemcpyAsync(host.data(), device, static_cast<size_t>(count) * sizeof(T),
                                                      cudaMemcpyDeviceToHost, stream()));
    }
    void wait() { plugin::check(host_, ctx_->synchronize(ctx_)); }
    // Waits for the stream and brings `count` elements at `device` to the host.
    template <class T> std::vector<T> fetch(const void* device, int64_t count) {
        std::vector<T> host;
        download(device, count, host);
        wait();
        return host;
    }
    int* infos() { return static_cast<int*>(temporary(static_cast<uint64_t>(p_.count) * sizeof(int))); }

    // ---- steps -------------------------------------------------------------------------
    void getrf(const Region& a, const Region& piv, int64_t m, int64_t n, int* info);
    void getrs(cublasOperation_t trans, int64_t n, int64_t k);
    void singular_check(const std::vector<int>& info);
    void finite_check(const Region& a, const Region& flags, int64_t rows, int64_t cols);
    void gather_diagonal(const Region& a, const Region& diag, int64_t n);
    void download_diagonal(const Region& diag, int64_t n, std::vector<float>& single, std::vector<double>& other);
    void check_zero_diagonal(const std::vector<float>& single, const std::vector<double>& other, int64_t n, const char* what);
    void run_solve();
    void run_inv();
    void run_det();
    void run_cholesky();
    void run_qr();
    void run_eigh();
    void run_svd();
    void run_triangular_solve();
    void run_lu();
    void run_lu_solve();
    void empty_matrices();
};

void Run::getrf(const Region& a, const Region& piv, int64_t m, int64_t n, int* info) {
    const cudaDataType type = data_type(p_.dtype);
    size_t dev_bytes = 0, host_bytes = 0;
    check_solver("cusolverDnXgetrf_bufferSize",
                 L.cusolverDnXgetrf_bufferSize(solver(), params_, m, n, type, ws(a), std::max<int64_t>(m, 1), type, &dev_bytes,
                                               &host_bytes));
    void* work = temporary(dev_bytes);
    std::vector<char> host_work(host_bytes);
    for (int64_t b = 0; b < p_.count; ++b) {
        check_solver("cusolverDnXgetrf",
                     L.cusolverDnXgetrf(solver(), params_, m, n, type, ws(a) + b * m * n * item_, std::max<int64_t>(m, 1),
                                        reinterpret_cast<int64_t*>(ws(piv)) + b * std::min(m, n), type, work, dev_bytes,
                                        host_work.data(), host_bytes, info + b));
    }
}

// op(A) X = B for each matrix, with A's factors at p_.a, pivots at p_.c, B (n x k) at p_.b.
void Run::getrs(cublasOperation_t trans, int64_t n, int64_t k) {
    const cudaDataType type = data_type(p_.dtype);
    int* info = infos();  // getrs reports bad arguments only
    for (int64_t b = 0; b < p_.count; ++b) {
        check_solver("cusolverDnXgetrs",
                     L.cusolverDnXgetrs(solver(), params_, trans, n, k, type, ws(p_.a) + b * n * n * item_,
                                        std::max<int64_t>(n, 1), reinterpret_cast<int64_t*>(ws(p_.c)) + b * n, type,
                                        ws(p_.b) + b * n * k * item_, std::max<int64_t>(n, 1), info + b));
    }
}

void Run::singular_check(const std::vector<int>& info) {
    for (int64_t b = 0; b < p_.count; ++b) {
        if (info[b] > 0) {
            record(b, FERRO_INVALID_ARGUMENT,
                   "is singular: U[" + std::to_string(info[b] - 1) + ", " + std::to_string(info[b] - 1) +
                       "] of its LU factorisation is exactly zero");
        }
    }
}

// cuSOLVER's eigen and singular value solvers loop or return garbage on NaN and Inf: refuse
// them first, as the cpu module does.
void Run::finite_check(const Region& a, const Region& flags, int64_t rows, int64_t cols) {
    const ferro_tensor_view all = dense(a, p_.dtype, rows, cols);
    const ferro_tensor_view finite = dense(flags, FERRO_DTYPE_BOOL, rows, cols);
    ferro_unary_args u{sizeof u, FERRO_UNARY_ISFINITE, all, finite};
    plugin::check(host_, host_->session_unary(args_.session, &u));
    Region per_matrix{flags.offset + static_cast<uint64_t>(p_.count * rows * cols), static_cast<uint64_t>(p_.count)};
    ferro_tensor_view one = matrices(per_matrix, FERRO_DTYPE_BOOL, 1, 1, 1, 1);
    ferro_reduce_args r{sizeof r, FERRO_REDUCE_ALL, finite, one};
    plugin::check(host_, host_->session_reduce(args_.session, &r));
    native();
    const std::vector<uint8_t> ok = fetch<uint8_t>(ws(per_matrix), p_.count);
    for (int64_t b = 0; b < p_.count; ++b) {
        if (ok[b] == 0) record(b, FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
    }
    report();
}

// The diagonals of the n x n matrices at a into diag, for a check on the host (as trtrs).
void Run::gather_diagonal(const Region& a, const Region& diag, int64_t n) {
    ferro_tensor_view from = matrices(a, p_.dtype, n, 1, n + 1, n * n);
    from.ndim -= 1;
    std::vector<int64_t> strides(from.strides, from.strides + from.ndim);
    strides.back() = n + 1;
    from.strides = keep(std::move(strides)).data();
    copy(from, vectors(diag, p_.dtype, n));
}

// Queues their download: into `single` for f32/c64, `other` for f64/c128 (real and imaginary
// parts interleaved for complex).
void Run::download_diagonal(const Region& diag, int64_t n, std::vector<float>& single, std::vector<double>& other) {
    const int64_t count = p_.count * n * (is_complex(p_.dtype) ? 2 : 1);
    if (real_ == FERRO_DTYPE_F32) download(ws(diag), count, single);
    else download(ws(diag), count, other);
}

// After the wait: an exactly zero diagonal entry fails its matrix.
void Run::check_zero_diagonal(const std::vector<float>& single, const std::vector<double>& other, int64_t n, const char* what) {
    const int64_t parts = is_complex(p_.dtype) ? 2 : 1;
    auto value = [&](int64_t at) {
        return real_ == FERRO_DTYPE_F32 ? double{single[static_cast<size_t>(at)]} : other[static_cast<size_t>(at)];
    };
    for (int64_t b = 0; b < p_.count; ++b) {
        for (int64_t i = 0; i < n; ++i) {
            const double re = value((b * n + i) * parts), im = parts == 2 ? value((b * n + i) * parts + 1) : 0.0;
            if (re == 0 && im == 0) {
                record(b, FERRO_INVALID_ARGUMENT,
                       std::string("is singular: ") + what + "[" + std::to_string(i) + ", " + std::to_string(i) + "]" +
                           (std::strcmp(what, "U") == 0 ? " of its LU factorisation" : "") + " is exactly zero");
                break;
            }
        }
    }
}

void Run::run_solve() {
    const int64_t n = p_.n, k = p_.k;
    copy(input(0, 2), dense(p_.a, p_.dtype, n, n));
    copy(input(1, p_.vector_rhs ? 1 : 2), dense(p_.b, p_.dtype, n, k));
    native();
    int* info = infos();
    getrf(p_.a, p_.c, n, n, info);
    getrs(CUBLAS_OP_N, n, k);
    singular_check(fetch<int>(info, p_.count));
    report();
    copy(dense(p_.b, p_.dtype, n, k), output(0, p_.vector_rhs ? 1 : 2));
    if (p_.op == Op::solve_with_lu) {  // getrf's factors of A itself: lu_factor's outputs
        copy(dense(p_.a, p_.dtype, n, n), output(1, 2));
        copy(matrices(p_.c, FERRO_DTYPE_I64, n, 1, n, n), output(2, 1));
    }
}

void Run::run_inv() {
    const int64_t n = p_.n;
    copy(input(0, 2), dense(p_.a, p_.dtype, n, n));
    identity(p_.b, n);
    native();
    int* info = infos();
    getrf(p_.a, p_.c, n, n, info);
    getrs(CUBLAS_OP_N, n, n);
    singular_check(fetch<int>(info, p_.count));
    report();
    copy(dense(p_.b, p_.dtype, n, n), output(0, 2));
}

void Run::run_det() {
    const int64_t n = p_.n;
    const bool slog = p_.op == Op::slogdet;
    copy(input(0, 2), dense(p_.a, p_.dtype, n, n));
    native();
    int* info = infos();
    getrf(p_.a, p_.c, n, n, info);  // a zero pivot is a zero determinant, not an error
    check_cuda("the determinant kernel", lu_determinant(stream(), p_.dtype, ws(p_.a), reinterpret_cast<int64_t*>(ws(p_.c)),
                                                        p_.count, n, ws(p_.d), slog ? ws(p_.e) : nullptr));
    copy(matrices(p_.d, p_.dtype, 1, 1, 1, 1), output(0, 0));
    if (slog) copy(matrices(p_.e, real_, 1, 1, 1, 1), output(1, 0));
}

void Run::run_cholesky() {
    const int64_t n = p_.n;
    copy(input(0, 2), dense(p_.a, p_.dtype, n, n));
    native();
    const cudaDataType type = data_type(p_.dtype);
    const cublasFillMode_t uplo = p_.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    size_t dev_bytes = 0, host_bytes = 0;
    check_solver("cusolverDnXpotrf_bufferSize",
                 L.cusolverDnXpotrf_bufferSize(solver(), params_, uplo, n, type, ws(p_.a), n, type, &dev_bytes, &host_bytes));
    void* work = temporary(dev_bytes);
    std::vector<char> host_work(host_bytes);
    int* info = infos();
    for (int64_t b = 0; b < p_.count; ++b) {
        check_solver("cusolverDnXpotrf", L.cusolverDnXpotrf(solver(), params_, uplo, n, type, ws(p_.a) + b * n * n * item_, n,
                                                            type, work, dev_bytes, host_work.data(), host_bytes, info + b));
    }
    // potrf leaves the other triangle as it found it.
    check_cuda("zeroing a triangle", zero_triangle(stream(), p_.dtype, ws(p_.a), p_.count, n, n, !p_.upper, false));
    const std::vector<int> codes = fetch<int>(info, p_.count);
    for (int64_t b = 0; b < p_.count; ++b) {
        if (codes[b] > 0) {
            record(
                b, FERRO_INVALID_ARGUMENT,
                "is not positive definite: its leading minor of order " + std::to_string(codes[b]) + " is not positive definite");
        }
    }
    report();
    copy(dense(p_.a, p_.dtype, n, n), output(0, 2));
}

template <class T> struct Orgqr;
template <> struct Orgqr<float> {
    static cusolverStatus_t size(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, const void* a,
                                 int lda, const void* tau, int* lwork) {
        return L.cusolverDnSorgqr_bufferSize(h, m, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(tau),
                                             lwork);
    }
    static cusolverStatus_t run(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, void* a, int lda,
                                const void* tau, void* work, int lwork, int* info) {
        return L.cusolverDnSorgqr(h, m, n, k, static_cast<float*>(a), lda, static_cast<const float*>(tau),
                                  static_cast<float*>(work), lwork, info);
    }
};
template <> struct Orgqr<double> {
    static cusolverStatus_t size(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, const void* a,
                                 int lda, const void* tau, int* lwork) {
        return L.cusolverDnDorgqr_bufferSize(h, m, n, k, static_cast<const double*>(a), lda, static_cast<const double*>(tau),
                                             lwork);
    }
    static cusolverStatus_t run(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, void* a, int lda,
                                const void* tau, void* work, int lwork, int* info) {
        return L.cusolverDnDorgqr(h, m, n, k, static_cast<double*>(a), lda, static_cast<const double*>(tau),
                                  static_cast<double*>(work), lwork, info);
    }
};
template <> struct Orgqr<cuComplex> {
    static cusolverStatus_t size(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, const void* a,
                                 int lda, const void* tau, int* lwork) {
        return L.cusolverDnCungqr_bufferSize(h, m, n, k, static_cast<const cuComplex*>(a), lda,
                                             static_cast<const cuComplex*>(tau), lwork);
    }
    static cusolverStatus_t run(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, void* a, int lda,
                                const void* tau, void* work, int lwork, int* info) {
        return L.cusolverDnCungqr(h, m, n, k, static_cast<cuComplex*>(a), lda, static_cast<const cuComplex*>(tau),
                                  static_cast<cuComplex*>(work), lwork, info);
    }
};
template <> struct Orgqr<cuDoubleComplex> {
    static cusolverStatus_t size(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, const void* a,
                                 int lda, const void* tau, int* lwork) {
        return L.cusolverDnZungqr_bufferSize(h, m, n, k, static_cast<const cuDoubleComplex*>(a), lda,
                                             static_cast<const cuDoubleComplex*>(tau), lwork);
    }
    static cusolverStatus_t run(const ferro::cuda::CudaLibraries& L, cusolverDnHandle_t h, int m, int n, int k, void* a, int lda,
                                const void* tau, void* work, int lwork, int* info) {
        return L.cusolverDnZungqr(h, m, n, k, static_cast<cuDoubleComplex*>(a), lda, static_cast<const cuDoubleComplex*>(tau),
                                  static_cast<cuDoubleComplex*>(work), lwork, info);
    }
};

template <class F> void visit_cuda_type(ferro_dtype d, F&& f) {
    switch (d) {
        case FERRO_DTYPE_F32: f(float{}); break;
        case FERRO_DTYPE_F64: f(double{}); break;
        case FERRO_DTYPE_C64: f(cuComplex{}); break;
        default: f(cuDoubleComplex{}); break;
    }
}

void Run::run_qr() {
    const int64_t m = p_.m, n = p_.n, k = p_.k;
    if (m > INT32_MAX || n > INT32_MAX)
        throw plugin::Error(FERRO_UNIMPLEMENTED, op_label(p_.op) + " (cuda): orgqr takes 32-bit sizes");
    copy(input(0, 2), dense(p_.a, p_.dtype, m, n));
    native();
    const cudaDataType type = data_type(p_.dtype);
    size_t dev_bytes = 0, host_bytes = 0;
    check_solver("cusolverDnXgeqrf_bufferSize",
                 L.cusolverDnXgeqrf_bufferSize(solver(), params_, m, n, type, ws(p_.a), std::max<int64_t>(m, 1), type, ws(p_.c),
                                               type, &dev_bytes, &host_bytes));
    void* work = temporary(dev_bytes);
    std::vector<char> host_work(host_bytes);
    int* info = infos();
    for (int64_t b = 0; b < p_.count; ++b) {
        check_solver("cusolverDnXgeqrf", L.cusolverDnXgeqrf(solver(), params_, m, n, type, ws(p_.a) + b * m * n * item_,
                                                            std::max<int64_t>(m, 1), type, ws(p_.c) + b * k * item_, type, work,
                                                            dev_bytes, host_work.data(), host_bytes, info + b));
    }
    if (p_.qr_mode != QrMode::r) {
        // Q from the reflectors: the first k columns of the factored A, then orgqr / ungqr.
        const int64_t qcols = p_.qr_mode == QrMode::complete ? m : k;
        copy(matrices(p_.a, p_.dtype, m, k, m, m * n), matrices(p_.b, p_.dtype, m, k, m, m * qcols));
        native();
        visit_cuda_type(p_.dtype, [&](auto tag) {
            using T = decltype(tag);
            const int mi = static_cast<int>(m), qi = static_cast<int>(qcols), ki = static_cast<int>(k), ld = std::max(mi, 1);
            int lwork = 0;
            check_solver("cusolverDn?orgqr_bufferSize", Orgqr<T>::size(L, solver(), mi, qi, ki, ws(p_.b), ld, ws(p_.c), &lwork));
            void* qwork = temporary(static_cast<uint64_t>(std::max(lwork, 1)) * sizeof(T));
            for (int64_t b = 0; b < p_.count; ++b) {
                check_solver("cusolverDn?orgqr", Orgqr<T>::run(L, solver(), mi, qi, ki, ws(p_.b) + b * m * qcols * item_, ld,
                                                               ws(p_.c) + b * k * item_, qwork, lwork, info + b));
            }
        });
        copy(dense(p_.b, p_.dtype, m, qcols), output(0, 2));
    }
    // R: the upper triangle of the first rows of the factored A.
    check_cuda("zeroing a triangle", zero_triangle(stream(), p_.dtype, ws(p_.a), p_.count, m, n, false, false));
    const int64_t rrows = p_.qr_mode == QrMode::complete ? m : k;
    copy(matrices(p_.a, p_.dtype, rrows, n, m, m * n), output(p_.qr_mode == QrMode::r ? 0 : 1, 2));
}

void Run::run_eigh() {
    const int64_t n = p_.n;
    copy(input(0, 2), dense(p_.a, p_.dtype, n, n));
    finite_check(p_.a, p_.flags, n, n);
    const cudaDataType type = data_type(p_.dtype), real = data_type(real_);
    const cusolverEigMode_t jobz = p_.op == Op::eigh ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const cublasFillMode_t uplo = p_.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    size_t dev_bytes = 0, host_bytes = 0;
    check_solver("cusolverDnXsyevd_bufferSize",
                 L.cusolverDnXsyevd_bufferSize(solver(), params_, jobz, uplo, n, type, ws(p_.a), std::max<int64_t>(n, 1), real,
                                               ws(p_.d), type, &dev_bytes, &host_bytes));
    void* work = temporary(dev_bytes);
    std::vector<char> host_work(host_bytes);
    int* info = infos();
    for (int64_t b = 0; b < p_.count; ++b) {
        check_solver("cusolverDnXsyevd", L.cusolverDnXsyevd(solver(), params_, jobz, uplo, n, type, ws(p_.a) + b * n * n * item_,
                                                            std::max<int64_t>(n, 1), real,
                                                            ws(p_.d) + b * n * (item_ / (is_complex(p_.dtype) ? 2 : 1)), type,
                                                            work, dev_bytes, host_work.data(), host_bytes, info + b));
    }
    const std::vector<int> codes = fetch<int>(info, p_.count);
    for (int64_t b = 0; b < p_.count; ++b) {
        if (codes[b] > 0)
            record(b, FERRO_FAILED_PRECONDITION, "did not converge (cuSOLVER syevd info " + std::to_string(codes[b]) + ")");
    }
    report();
    copy(matrices(p_.d, real_, n, 1, n, n), output(0, 1));
    if (p_.op == Op::eigh) copy(dense(p_.a, p_.dtype, n, n), output(1, 2));
}

// cuSOLVER's gesvd needs rows >= columns: a wide A is factored as A^H = U' S V'^H, so that
// U = V' and Vh = U'^H.
void Run::run_svd() {
    const int64_t m = p_.m, n = p_.n, k = p_.k;
    const bool wide = m < n, vectors_wanted = p_.op == Op::svd;
    const int64_t rows = std::max(m, n), cols = k;
    const int64_t ucols = p_.full ? rows : k, vrows = p_.full ? cols : k;
    if (wide) {
        std::vector<int64_t> shape, strides;
        copy(transpose_last(input(0, 2), shape, strides), dense(p_.a, p_.dtype, rows, cols), true);
    } else {
        copy(input(0, 2), dense(p_.a, p_.dtype, rows, cols));
    }
    finite_check(p_.a, p_.flags, rows, cols);
    const cudaDataType type = data_type(p_.dtype), real = data_type(real_);
    const signed char jobu = vectors_wanted ? (p_.full ? 'A' : 'S') : 'N', jobvt = jobu;
    const int64_t ldu = std::max<int64_t>(rows, 1), ldvt = std::max<int64_t>(vrows, 1);
    size_t dev_bytes = 0, host_bytes = 0;
    check_solver("cusolverDnXgesvd_bufferSize",
                 L.cusolverDnXgesvd_bufferSize(solver(), params_, jobu, jobvt, rows, cols, type, ws(p_.a), ldu, real, ws(p_.d),
                                               type, ws(p_.b), ldu, type, ws(p_.c), ldvt, type, &dev_bytes, &host_bytes));
    void* work = temporary(dev_bytes);
    std::vector<char> host_work(host_bytes);
    int* info = infos();
    const int64_t real_item = item_ / (is_complex(p_.dtype) ? 2 : 1);
    for (int64_t b = 0; b < p_.count; ++b) {
        check_solver("cusolverDnXgesvd",
                     L.cusolverDnXgesvd(solver(), params_, jobu, jobvt, rows, cols, type, ws(p_.a) + b * rows * cols * item_, ldu,
                                        real, ws(p_.d) + b * k * real_item, type, ws(p_.b) + b * rows * ucols * item_, ldu, type,
                                        ws(p_.c) + b * vrows * cols * item_, ldvt, type, work, dev_bytes, host_work.data(),
                                        host_bytes, info + b));
    }
    const std::vector<int> codes = fetch<int>(info, p_.count);
    for (int64_t b = 0; b < p_.count; ++b) {
        if (codes[b] > 0)
            record(b, FERRO_FAILED_PRECONDITION, "did not converge (cuSOLVER gesvd info " + std::to_string(codes[b]) + ")");
    }
    report();
    copy(matrices(p_.d, real_, k, 1, k, k), output(vectors_wanted ? 1 : 0, 1));
    if (!vectors_wanted) return;
    const ferro_tensor_view u = dense(p_.b, p_.dtype, rows, ucols), vt = dense(p_.c, p_.dtype, vrows, cols);
    if (!wide) {
        copy(u, output(0, 2));
        copy(vt, output(2, 2));
    } else {  // U = V' = (VT')^H, Vh = U'^H
        copy(dense(p_.c, p_.dtype, vrows, cols, true), output(0, 2), true);
        copy(dense(p_.b, p_.dtype, rows, ucols, true), output(2, 2), true);
    }
}

template <class T> struct Trsm;
// NOLINTBEGIN(bugprone-macro-parentheses): T and fn are a type and a member name
#define FERRO_TRSM(T, fn)                                                                                                      \
    template <> struct Trsm<T> {                                                                                               \
        static cublasStatus_t run(const ferro::cuda::CudaLibraries& L, cublasHandle_t h, cublasSideMode_t side,                \
                                  cublasFillMode_t uplo, cublasDiagType_t diag, int64_t m, int64_t n, void* a, int64_t lda,    \
                                  void* b, int64_t ldb) {                                                                      \
            const T one = one_of<T>();                                                                                         \
            return L.fn(h, side, uplo, CUBLAS_OP_N, diag, m, n, &one, static_cast<const T*>(a), lda, static_cast<T*>(b), ldb); \
        }                                                                                                                      \
    };
// NOLINTEND(bugprone-macro-parentheses)
template <class T> T one_of() {
    if constexpr (std::is_same_v<T, cuComplex>) return make_cuComplex(1, 0);
    else if constexpr (std::is_same_v<T, cuDoubleComplex>) return make_cuDoubleComplex(1, 0);
    else return T(1);
}
FERRO_TRSM(float, cublasStrsm_v2_64)
FERRO_TRSM(double, cublasDtrsm_v2_64)
FERRO_TRSM(cuComplex, cublasCtrsm_v2_64)
FERRO_TRSM(cuDoubleComplex, cublasZtrsm_v2_64)
#undef FERRO_TRSM

void Run::run_triangular_solve() {
    const int64_t n = p_.n, k = p_.k;
    copy(input(0, 2), dense(p_.a, p_.dtype, n, n));
    // B is n x k (A X = B) or k x n (X A = B).
    const int64_t brows = p_.left ? n : k, bcols = p_.left ? k : n;
    copy(input(1, 2), dense(p_.b, p_.dtype, brows, bcols));
    if (!p_.unit) {
        gather_diagonal(p_.a, p_.e, n);
        native();
        std::vector<float> single;
        std::vector<double> other;
        download_diagonal(p_.e, n, single, other);
        wait();
        check_zero_diagonal(single, other, n, "its diagonal entry ");
        report();
    }
    native();
    const cublasHandle_t blas = static_cast<cublasHandle_t>(ctx_->cublas);
    const cublasSideMode_t side = p_.left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    const cublasFillMode_t uplo = p_.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const cublasDiagType_t diag = p_.unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    visit_cuda_type(p_.dtype, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t b = 0; b < p_.count; ++b) {
            const cublasStatus_t r =
                Trsm<T>::run(L, blas, side, uplo, diag, brows, bcols, ws(p_.a) + b * n * n * item_, std::max<int64_t>(n, 1),
                             ws(p_.b) + b * n * k * item_, std::max<int64_t>(brows, 1));
            if (r != CUBLAS_STATUS_SUCCESS) fail_blas("cublas?trsm", r);
        }
    });
    copy(dense(p_.b, p_.dtype, brows, bcols), output(0, 2));
}

void Run::run_lu() {
    const int64_t m = p_.m, n = p_.n, k = p_.k;
    copy(input(0, 2), dense(p_.a, p_.dtype, m, n));
    native();
    int* info = infos();
    getrf(p_.a, p_.c, m, n, info);  // a zero pivot is a valid (singular) factorisation
    if (p_.op == Op::lu_factor) {
        copy(dense(p_.a, p_.dtype, m, n), output(0, 2));
        copy(matrices(p_.c, FERRO_DTYPE_I64, k, 1, k, k), output(1, 1));
        return;
    }
    check_cuda("the permutation kernel",
               permutation_from_pivots(stream(), p_.dtype, reinterpret_cast<int64_t*>(ws(p_.c)), p_.count, m, k, ws(p_.e),
                                       reinterpret_cast<int64_t*>(ws(p_.flags))));
    copy(matrices(p_.a, p_.dtype, m, k, m, m * n), dense(p_.b, p_.dtype, m, k));  // L: the first k columns
    copy(matrices(p_.a, p_.dtype, k, n, m, m * n), dense(p_.d, p_.dtype, k, n));  // U: the first k rows
    native();
    check_cuda("zeroing a triangle", zero_triangle(stream(), p_.dtype, ws(p_.b), p_.count, m, k, true, true));
    check_cuda("zeroing a triangle", zero_triangle(stream(), p_.dtype, ws(p_.d), p_.count, k, n, false, false));
    copy(dense(p_.e, p_.dtype, m, m), output(0, 2));
    copy(dense(p_.b, p_.dtype, m, k), output(1, 2));
    copy(dense(p_.d, p_.dtype, k, n), output(2, 2));
}

void Run::run_lu_solve() {
    const int64_t n = p_.n, k = p_.k;
    copy(input(0, 2), dense(p_.a, p_.dtype, n, n));
    copy(input(1, 1), matrices(p_.c, FERRO_DTYPE_I64, n, 1, n, n));
    // Right-hand sides as columns: B (n x k), B^T (X A = B), or conj(B^T) (X A^H = B).
    std::vector<int64_t> shape, strides;
    if (p_.left) copy(input(2, 2), dense(p_.b, p_.dtype, n, k));
    else copy(transpose_last(input(2, 2), shape, strides), dense(p_.b, p_.dtype, n, k), p_.adjoint);
    // The pivots must be getrf's (entry j in [j + 1, n]) and U's diagonal non-zero: one wait for both.
    gather_diagonal(p_.a, p_.e, n);
    native();
    std::vector<int64_t> piv;
    std::vector<float> single;
    std::vector<double> other;
    download(ws(p_.c), p_.count * n, piv);
    download_diagonal(p_.e, n, single, other);
    wait();
    for (int64_t b = 0; b < p_.count; ++b) {
        for (int64_t j = 0; j < n; ++j) {
            const int64_t v = piv[static_cast<size_t>(b * n + j)];
            if (v < j + 1 || v > n) {  // the LAPACK module's words
                record(b, FERRO_INVALID_ARGUMENT,
                       "has pivot " + std::to_string(j) + " = " + std::to_string(v) + " (input 1), expected a value in [" +
                           std::to_string(j + 1) + ", " + std::to_string(n) + "]");
                break;
            }
        }
    }
    check_zero_diagonal(single, other, n, "U");
    report();
    native();
    const cublasOperation_t trans = p_.left ? (p_.adjoint ? CUBLAS_OP_C : CUBLAS_OP_N) : (p_.adjoint ? CUBLAS_OP_N : CUBLAS_OP_T);
    getrs(trans, n, k);
    if (p_.left) copy(dense(p_.b, p_.dtype, n, k), output(0, 2));
    else copy(dense(p_.b, p_.dtype, n, k, true), output(0, 2), p_.adjoint);
}

// Matrices with no elements: nothing to factor. Square outputs (Q, P, the full U and Vh) are
// identities, determinants 1 (log 0); everything else is empty.
void Run::empty_matrices() {
    if (p_.op == Op::det || p_.op == Op::slogdet) {
        fill(output(0, 0), 1);
        if (p_.op == Op::slogdet) fill(output(1, 0), 0);
        return;
    }
    for (uint32_t i = 0; i < args_.n_outputs; ++i) {
        const ferro_tensor_view& out = args_.outputs[i];
        if (out.ndim < 2 || out.dtype != p_.dtype) continue;
        const int64_t rows = out.shape[out.ndim - 2], cols = out.shape[out.ndim - 1];
        if (rows != cols || rows == 0) continue;
        const ferro_tensor_view all = output(i, 2);
        fill(all, 0);
        ferro_tensor_view diagonal = all;
        std::vector<int64_t> shape(all.shape, all.shape + all.ndim - 1), strides(all.strides, all.strides + all.ndim - 1);
        strides.back() = all.strides[all.ndim - 2] + all.strides[all.ndim - 1];
        diagonal.ndim -= 1;
        diagonal.shape = keep(std::move(shape)).data();
        diagonal.strides = keep(std::move(strides)).data();
        fill(diagonal, 1);
    }
}

void Run::go() {
    if (p_.count == 0) return;
    if (p_.m == 0 || p_.n == 0) return empty_matrices();
    switch (p_.op) {
        case Op::solve:
        case Op::solve_with_lu: return run_solve();
        case Op::inv: return run_inv();
        case Op::det:
        case Op::slogdet: return run_det();
        case Op::cholesky: return run_cholesky();
        case Op::qr: return run_qr();
        case Op::eigh:
        case Op::eigvalsh: return run_eigh();
        case Op::svd:
        case Op::svdvals: return run_svd();
        case Op::triangular_solve: return run_triangular_solve();
        case Op::lu_factor:
        case Op::lu: return run_lu();
        case Op::lu_solve: return run_lu_solve();
        default: throw plugin::Error(FERRO_INTERNAL, op_label(p_.op) + " (cuda): no executor");
    }
}

}  // namespace

void execute(const CudaPlan& plan, const ferro_host_api* host, const ferro_exec_args& args) {
    Run run(plan, host, args);
    run.go();
}

}  // namespace ferro::linalg::cuda
