// The cpu module's executor machinery, shared by the ops under ops/: the batch runner that
// calls an op's per-matrix kernel for each matrix of a call (on the engine's pool when that
// pays), the accessors a kernel reads and writes its matrices with, and the pieces of prepare
// every LAPACK-backed op uses (workspace carving, column-major output requests, the BLAS
// thread hold).
//
// Layout: a row-major matrix A, read by column-major LAPACK, is A^T. Most kernels gather
// their input row-major into scratch (one packed copy, which LAPACK needs anyway because it
// overwrites its input) and factor M = A^T, choosing the routine's options so that the results
// come out row-major without transposing copies. Where that costs more than two transposing
// copies (LU and eig, whose pivoting and order must act on A itself; QR, where gelqf is slower
// than geqrf; lower Cholesky; eigh) the kernel factors a column-major copy of A instead.
#pragma once

#include "lapack.hpp"
#include "linalg.hpp"
#include "matrix_io.hpp"

#include <ferro/cpu_context.h>
#include <ferro/dtype.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace ferro::linalg {

using lapack::Real;

inline int64_t itemsize(ferro_dtype d) { return FERRO_DTYPE_BITS(d) / 8; }
inline int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Carves typed arrays out of one per-matrix scratch block, in a fixed order (the order the
// op's configure counted them in).
class Carver {
public:
    explicit Carver(void* base) : at_(static_cast<char*>(base)) {}
    template <class U> U* take(int64_t count) {
        U* p = reinterpret_cast<U*>(at_);
        at_ += align64(count * static_cast<int64_t>(sizeof(U)));
        return p;
    }

private:
    char* at_;
};

// Bytes of one scratch array of `count` elements of `element_bytes` each, as Carver takes it.
inline int64_t scratch_array(int64_t count, int64_t element_bytes) { return align64(count * element_bytes); }

// f(T{}) for a float dtype (ferro/dtype.hpp's visitor); the op's infer admitted no other.
template <class F> void visit_float(ferro_dtype d, F&& f) {
    if (!plugin::visit_dtype<std::complex, plugin::Dtypes::inexact>(d, std::forward<F>(f))) {
        throw plugin::Error(FERRO_INTERNAL, "linalg: unexpected dtype");
    }
}

template <class T> bool all_finite(const T* a, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        if constexpr (lapack::is_complex_v<T>) {
            if (!std::isfinite(a[i].real()) || !std::isfinite(a[i].imag())) return false;
        } else if (!std::isfinite(a[i])) {
            return false;
        }
    }
    return true;
}

// The first failure of a batch (the lowest matrix index wins, so the message is the same
// whatever the threads did).
struct Failure {
    std::mutex mutex;
    int64_t index = std::numeric_limits<int64_t>::max();
    uint32_t code = 0;
    std::string why;
    void record(int64_t at, uint32_t c, std::string w) {
        const std::lock_guard lock(mutex);
        if (at < index) {
            index = at;
            code = c;
            why = std::move(w);
        }
    }
};

// One matrix of the batch, as a kernel sees it: its index, its scratch, and where a failure
// goes ("the matrix <why>", "matrix [i] of the batch <why>").
struct Item {
    int64_t b;
    Carver c;
    Failure& failure;
    void fail(uint32_t code, std::string why) { failure.record(b, code, std::move(why)); }
};

// The sizes of a call's matrices, as LAPACK takes them.
struct Sizes {
    int64_t m, n, k;
    lapack_int lm, ln, ldn;  // ldn: max(n, 1), the leading dimension of M = A^T
};

inline std::string singular(lapack_int info) {
    return "is singular: U[" + std::to_string(info - 1) + ", " + std::to_string(info - 1) +
           "] of its LU factorisation is exactly zero";
}

// Whether a batch's matrices are spread over the engine's pool (MatrixCall::run): several
// small ones, and threads to spread them on.
inline bool fans_out(const Plan& p, const ferro_cpu_context& ctx) {
    return p.count > 1 && std::max(p.m, p.n) <= 256 && ctx.num_threads > 1;
}

// One call of a per-matrix op on one dtype: the batch runner and the accessors its kernel uses.
template <class T> class MatrixCall {
public:
    using R = Real<T>;
    using Kernel = void (*)(const MatrixCall& call, Item& item);

    MatrixCall(const Plan& p, const ferro_exec_args& a) : p_(p), a_(a) {
        for (uint32_t i = 0; i < a.n_inputs; ++i) in_.emplace_back(p.batch, a.inputs[i], p.matrix_dims[i]);
        for (uint32_t i = 0; i < a.n_outputs; ++i) {
            const auto& v = a.outputs[i];
            out_.emplace_back(p.batch, v, v.ndim - static_cast<int>(p.batch.size()));
        }
    }

    const Plan& plan() const { return p_; }
    const ferro_exec_args& args() const { return a_; }
    Sizes sizes() const {
        const auto ln = static_cast<lapack_int>(p_.n);
        return {p_.m, p_.n, p_.k, static_cast<lapack_int>(p_.m), ln, std::max<lapack_int>(ln, 1)};
    }

    // Runs `kernel` on every matrix of the batch: small matrices fan out over the engine's
    // pool, one scratch block per chunk; large ones run one after another and let the BLAS
    // thread inside LAPACK. A 0 x 0 matrix reaches the kernel only when `runs_on_empty`.
    void run(Kernel kernel, bool runs_on_empty, const void* native, const ferro_buffer_view& workspace) const {
        if (p_.m == 0 && p_.n == 0 && !runs_on_empty) return;  // empty results
        Failure failure;
        const int64_t count = p_.count;
        const auto* ctx = static_cast<const ferro_cpu_context*>(native);
        if (ctx != nullptr && fans_out(p_, *ctx)) {
            const int64_t size = std::max(p_.m, p_.n);
            struct Job {
                const MatrixCall* self;
                Kernel kernel;
                Failure* failure;
            } job{this, kernel, &failure};
            const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(size * size * size, 1));
            ctx->parallel_for(
                ctx, count, grain,
                [](void* user, int64_t begin, int64_t end) {
                    auto& j = *static_cast<Job*>(user);
                    try {
                        std::vector<std::max_align_t> scratch(
                            static_cast<size_t>(j.self->p_.scratch_bytes / sizeof(std::max_align_t) + 2));
                        for (int64_t b = begin; b < end; ++b) {
                            Item item{b, Carver(scratch.data()), *j.failure};
                            j.kernel(*j.self, item);
                        }
                    } catch (...) {
                        j.failure->record(begin, FERRO_RESOURCE_EXHAUSTED, "could not allocate its LAPACK workspace");
                    }
                },
                &job);
        } else {
            for (int64_t b = 0; b < count; ++b) {
                Item item{b, Carver(workspace.data), failure};
                kernel(*this, item);
            }
        }
        if (failure.index != std::numeric_limits<int64_t>::max()) {
            std::string where = "the matrix";
            if (!p_.batch.empty()) where = "matrix " + shape_str(batch_index(p_.batch, failure.index)) + " of the batch";
            throw plugin::Error(failure.code, qualified(p_.op) + ": " + where + " " + failure.why);
        }
    }

    // Input i's and output i's item b, and their strides `from_end` dimensions from the last.
    template <class U> const U* input(uint32_t i, int64_t b) const {
        return static_cast<const U*>(a_.inputs[i].data) + in_[i](b);
    }
    template <class U> U* output(uint32_t i, int64_t b) const { return static_cast<U*>(a_.outputs[i].data) + out_[i](b); }
    int64_t in_stride(uint32_t i, int from_end) const { return a_.inputs[i].strides[a_.inputs[i].ndim - from_end]; }
    int64_t out_stride(uint32_t i, int from_end) const { return a_.outputs[i].strides[a_.outputs[i].ndim - from_end]; }

    // Input 0's matrix into a new scratch array (m x n elements): row-major, that is M = A^T
    // column-major with leading dimension n ...
    T* gather_transposed(Item& item) const {
        T* a = item.c.take<T>(p_.m * p_.n);
        copy2d(input<T>(0, item.b), in_stride(0, 2), in_stride(0, 1), a, p_.n, 1, p_.m, p_.n);
        return a;
    }
    // ... or A column-major, leading dimension m ...
    T* gather_column_major(Item& item) const {
        T* a = item.c.take<T>(p_.m * p_.n);
        copy2d(input<T>(0, item.b), in_stride(0, 2), in_stride(0, 1), a, 1, p_.m, p_.m, p_.n);
        return a;
    }
    // ... or (square) only the triangle eigh reads (its `uplo`), column-major.
    T* gather_triangle(Item& item) const {
        T* a = item.c.take<T>(p_.n * p_.n);
        copy_part(input<T>(0, item.b), in_stride(0, 2), in_stride(0, 1), a, 1, p_.n, p_.n, p_.n, false,
                  p_.upper ? Part::upper : Part::lower);
        return a;
    }
    // Whether that triangle of the n x n column-major `a` is free of NaN and Inf.
    bool triangle_finite(const T* a, int64_t n) const {
        for (int64_t j = 0; j < n; ++j) {
            const int64_t lo = p_.upper ? 0 : j, hi = p_.upper ? j + 1 : n;
            if (!all_finite(a + j * n + lo, hi - lo)) return false;
        }
        return true;
    }
    // Output i's matrix b (rows x cols) from a buffer with the given strides.
    void store_matrix(uint32_t i, int64_t b, const T* src, int64_t rs, int64_t cs, int64_t rows, int64_t cols,
                      bool conj = false) const {
        copy2d(src, rs, cs, output<T>(i, b), out_stride(i, 2), out_stride(i, 1), rows, cols, conj);
    }
    // Pivots of input `i` (1-based, LAPACK's convention) into `piv`, checked: entry j must lie
    // in [j + 1, rows] (getrf only swaps a row with one below it).
    bool read_pivots(Item& item, uint32_t i, int64_t count, int64_t rows, lapack_int* piv) const {
        const int64_t* p = input<int64_t>(i, item.b);
        const int64_t stride = in_stride(i, 1);
        for (int64_t j = 0; j < count; ++j) {
            const int64_t v = p[j * stride];
            if (v < j + 1 || v > rows) {
                item.fail(FERRO_INVALID_ARGUMENT, "has pivot " + std::to_string(j) + " = " + std::to_string(v) + " (input " +
                                                      std::to_string(i) + "), expected a value in [" + std::to_string(j + 1) +
                                                      ", " + std::to_string(rows) + "]");
                return false;
            }
            piv[j] = static_cast<lapack_int>(v);
        }
        return true;
    }

private:
    const Plan& p_;
    const ferro_exec_args& a_;
    std::vector<BatchOffsets> in_, out_;
};

// A kernel's reads and writes: input i's and output i's item b, as U.
template <class U, class T> const U* input(const MatrixCall<T>& call, uint32_t i, int64_t b) {
    return call.template input<U>(i, b);
}
template <class U, class T> U* output(const MatrixCall<T>& call, uint32_t i, int64_t b) { return call.template output<U>(i, b); }

// An op's kernel for each float dtype, from a type with `template <class T> static void
// run(const MatrixCall<T>&, Item&)`.
struct MatrixKernels {
    MatrixCall<float>::Kernel f32 = nullptr;
    MatrixCall<double>::Kernel f64 = nullptr;
    MatrixCall<lapack::c64>::Kernel c64 = nullptr;
    MatrixCall<lapack::c128>::Kernel c128 = nullptr;

    template <class T> typename MatrixCall<T>::Kernel get() const {
        if constexpr (std::is_same_v<T, float>) return f32;
        else if constexpr (std::is_same_v<T, double>) return f64;
        else if constexpr (std::is_same_v<T, lapack::c64>) return c64;
        else return c128;
    }
    explicit operator bool() const { return f64 != nullptr; }
};
template <class K> constexpr MatrixKernels kernels() {
    return {K::template run<float>, K::template run<double>, K::template run<lapack::c64>, K::template run<lapack::c128>};
}

// Whether the plan's call holds the cpu engine's BLAS at one thread (blas_holds.hpp).
bool holds_one_blas_thread(const Plan& p, const void* cpu_context);

// LAPACK leaves QR's Q and R, the lower Cholesky factor and the packed LU column-major: the
// plan asks the host for column-major outputs (PyTorch returns them so too), and they are
// stored by straight copies instead of transposing ones (ABI 1.1's output strides).
void ask_column_major(const ferro_prepare_args& args, uint32_t i);

// Machine epsilon of the plan's dtype (single or double).
inline double dtype_eps(ferro_dtype d) {
    return d == FERRO_DTYPE_F32 || d == FERRO_DTYPE_C64 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
}

}  // namespace ferro::linalg
