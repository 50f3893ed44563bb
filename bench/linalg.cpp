// bench/run linalg (ferro side and the direct-LAPACK peer, in one process): svd, eigh, eig, qr,
// solve, cholesky and det of n x n f64 matrices, n = 64, 256, 1024, through ferro::linalg
// against the same LAPACK routine called directly (LAPACKE column-major *_work entry points,
// workspace queried once, the input copied into a work buffer each call as LAPACK overwrites
// it), at its better thread count (OpenBLAS's or MKL's). Prints one {"case", "ferro_s",
// "lapack_s", ...} line per case; bench/run adds the numpy and scipy timings of the same cases
// and prints DESIGN §12 lines.
#include "timing.hpp"

#include <ferro/ferro.hpp>

#include <dlfcn.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using ferro::Tensor;

namespace {

// The direct call of each case: LAPACK on `a` (n x n, column-major; the matrices are symmetric
// or their transpose costs the same), with every buffer allocated up front.
struct Direct {
    int n;
    std::vector<double> input, a, b, w, tau, u, vt, work;
    std::vector<lapack_int> ipiv, iwork;
    explicit Direct(const std::vector<double>& values, int size)
        : n(size),
          input(values),
          a(values.size()),
          b(static_cast<size_t>(size)),
          w(static_cast<size_t>(size)),
          tau(static_cast<size_t>(size)),
          u(values.size()),
          vt(values.size()),
          ipiv(static_cast<size_t>(size)),
          iwork(static_cast<size_t>(8 * size)) {}
    void load() { std::memcpy(a.data(), input.data(), input.size() * sizeof(double)); }
    lapack_int query(const std::function<lapack_int(double*, lapack_int)>& call) {
        double size = 0;
        call(&size, -1);
        return static_cast<lapack_int>(size);
    }
};

std::function<void()> direct_call(const std::string& op, Direct& d) {
    const lapack_int n = d.n;
    const int col = LAPACK_COL_MAJOR;
    if (op == "svd") {
        const lapack_int lw = d.query([&](double* w, lapack_int l) {
            return LAPACKE_dgesdd_work(col, 'S', n, n, d.a.data(), n, d.w.data(), d.u.data(), n, d.vt.data(), n, w, l,
                                       d.iwork.data());
        });
        d.work.resize(static_cast<size_t>(lw));
        return [&d, n, lw, col] {
            d.load();
            LAPACKE_dgesdd_work(col, 'S', n, n, d.a.data(), n, d.w.data(), d.u.data(), n, d.vt.data(), n, d.work.data(), lw,
                                d.iwork.data());
        };
    }
    if (op == "eigh") {
        double wq = 0;
        lapack_int iq = 0;
        LAPACKE_dsyevd_work(col, 'V', 'L', n, d.a.data(), n, d.w.data(), &wq, -1, &iq, -1);
        d.work.resize(static_cast<size_t>(wq));
        d.iwork.resize(static_cast<size_t>(iq));
        return [&d, n, col] {
            d.load();
            LAPACKE_dsyevd_work(col, 'V', 'L', n, d.a.data(), n, d.w.data(), d.work.data(),
                                static_cast<lapack_int>(d.work.size()), d.iwork.data(), static_cast<lapack_int>(d.iwork.size()));
        };
    }
    if (op == "eig") {  // eigenvalues and right eigenvectors, as ferro's and numpy's eig
        const lapack_int lw = d.query([&](double* w, lapack_int l) {
            return LAPACKE_dgeev_work(col, 'N', 'V', n, d.a.data(), n, d.w.data(), d.tau.data(), nullptr, 1, d.u.data(), n, w, l);
        });
        d.work.resize(static_cast<size_t>(lw));
        return [&d, n, lw, col] {
            d.load();
            LAPACKE_dgeev_work(col, 'N', 'V', n, d.a.data(), n, d.w.data(), d.tau.data(), nullptr, 1, d.u.data(), n,
                               d.work.data(), lw);
        };
    }
    if (op == "qr") {
        const lapack_int l1 =
            d.query([&](double* w, lapack_int l) { return LAPACKE_dgeqrf_work(col, n, n, d.a.data(), n, d.tau.data(), w, l); });
        const lapack_int l2 = d.query(
            [&](double* w, lapack_int l) { return LAPACKE_dorgqr_work(col, n, n, n, d.a.data(), n, d.tau.data(), w, l); });
        d.work.resize(static_cast<size_t>(std::max(l1, l2)));
        return [&d, n, col] {
            d.load();
            const lapack_int lw = static_cast<lapack_int>(d.work.size());
            LAPACKE_dgeqrf_work(col, n, n, d.a.data(), n, d.tau.data(), d.work.data(), lw);
            std::memcpy(d.u.data(), d.a.data(), d.a.size() * sizeof(double));  // keep R, as qr returns it
            LAPACKE_dorgqr_work(col, n, n, n, d.a.data(), n, d.tau.data(), d.work.data(), lw);
        };
    }
    if (op == "solve") {
        return [&d, n, col] {
            d.load();
            std::fill(d.b.begin(), d.b.end(), 1.0);
            LAPACKE_dgesv_work(col, n, 1, d.a.data(), n, d.ipiv.data(), d.b.data(), n);
        };
    }
    if (op == "cholesky") {
        return [&d, n, col] {
            d.load();
            LAPACKE_dpotrf_work(col, 'L', n, d.a.data(), n);
        };
    }
    return [&d, n, col] {  // det
        d.load();
        LAPACKE_dgetrf_work(col, n, n, d.a.data(), n, d.ipiv.data());
        double det = 1;
        for (lapack_int i = 0; i < n; ++i)
            det *= d.ipiv[static_cast<size_t>(i)] != i + 1 ? -d.a[static_cast<size_t>(i * n + i)]
                                                           : d.a[static_cast<size_t>(i * n + i)];
        d.w[0] = det;
    };
}

std::function<void()> ferro_call(const std::string& op, const Tensor& A, const Tensor& b) {
    if (op == "svd") return [&A] { (void)ferro::linalg::svd(A, /*full_matrices=*/false); };
    if (op == "eigh") return [&A] { (void)ferro::linalg::eigh(A); };
    if (op == "eig") return [&A] { (void)ferro::linalg::eig(A); };
    if (op == "qr") return [&A] { (void)ferro::linalg::qr(A); };
    if (op == "solve") return [&A, &b] { (void)ferro::linalg::solve(A, b); };
    if (op == "cholesky") return [&A] { (void)ferro::linalg::cholesky(A); };
    return [&A] { (void)ferro::linalg::det(A); };
}

// The thread count of the BLAS the process runs, for the direct calls: OpenBLAS's or MKL's,
// looked up at run time (ferro links the reference BLAS interface). BLIS and the reference
// BLAS have none: their direct calls run as they are in both columns.
struct BlasThreads {
    int (*get)() = nullptr;
    void (*set)(int) = nullptr;
    BlasThreads() {
        for (const auto& [get_name, set_name] : {std::pair{"openblas_get_num_threads", "openblas_set_num_threads"},
                                                 std::pair{"MKL_Get_Max_Threads", "MKL_Set_Num_Threads"}}) {
            get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, get_name));
            set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, set_name));
            if (get != nullptr && set != nullptr) return;
        }
        get = nullptr;
        set = nullptr;
    }
    int count() const { return get != nullptr ? get() : 1; }
};

// Medians of ferro's call and of the direct call at one BLAS thread and at the process's
// count, sampled in turn. The baseline is the faster of the two: OpenBLAS threads potrf and the
// level-2 kernels of the reductions at sizes where one thread is faster (potrf at n = 64 took
// 2-5x as long on two threads here, and how long varied from run to run), which ferro's plans
// avoid by holding the BLAS at one thread there; both are printed, as the evidence for the
// sizes up to which ferro holds each implementation at one thread
// (plugins/linalg/src/blas_holds.hpp).
struct Medians {
    double ferro_s, one_thread_s, all_threads_s;
    int threads;
};
Medians time_case(const std::function<void()>& mine, const std::function<void()>& theirs, int samples, int inner) {
    static const BlasThreads blas;
    const int threads = blas.count();
    auto one_thread = [&] {
        if (blas.set != nullptr) blas.set(1);
        const double s = bench::sample_seconds(theirs, inner);
        if (blas.set != nullptr) blas.set(threads);
        return s;
    };
    std::vector<double> f, one, all;
    for (int s = -2; s < samples; ++s) {  // two rounds of warm-up
        const double a = bench::sample_seconds(mine, inner), b = one_thread(), c = bench::sample_seconds(theirs, inner);
        if (s < 0) continue;
        f.push_back(a);
        one.push_back(b);
        all.push_back(c);
    }
    return {bench::median(f), bench::median(one), bench::median(all), threads};
}

}  // namespace

// bench_linalg [--quick] [--op NAME] [--sizes N,N,...]: --op runs one op's cases only (for
// profiling), --sizes other sizes than 64, 256, 1024 (to find where threads start to pay).
int main(int argc, char** argv) {
    bool quick = false;
    std::string only;
    std::vector<int64_t> sizes;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (std::strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (std::strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            for (const char* p = argv[++i]; *p != '\0'; p += *p == ',' ? 1 : 0) {
                char* end = nullptr;
                const long long n = std::strtoll(p, &end, 10);
                if (end == p || n < 1) {
                    std::fprintf(stderr, "bench_linalg: --sizes takes positive sizes separated by commas, got '%s'\n", argv[i]);
                    return 2;
                }
                sizes.push_back(n);
                p = end;
            }
        } else {
            std::fprintf(stderr, "usage: bench_linalg [--quick] [--op svd|eigh|eig|qr|solve|cholesky|det] [--sizes N,N,...]\n");
            return 2;
        }
    }
    const ferro::Runtime rt;  // finds libferro_linalg.so in the default plugin directory
    const std::vector<std::string> ops = {"svd", "eigh", "eig", "qr", "solve", "cholesky", "det"};
    if (!only.empty() && std::find(ops.begin(), ops.end(), only) == ops.end()) {
        std::fprintf(stderr, "bench_linalg: unknown op '%s'\n", only.c_str());
        return 2;
    }
    if (sizes.empty()) sizes = quick ? std::vector<int64_t>{64, 256} : std::vector<int64_t>{64, 256, 1024};
    for (const std::string& op : ops) {
        if (!only.empty() && only != op) continue;
        for (int64_t n : sizes) {
            // Symmetric positive definite: valid for every op (and the same matrix numpy gets).
            const Tensor X = rt.rand({n, n}, ferro::DType::f64, 11);
            const Tensor A = (ferro::matmul(X, X.mT()) + rt.eye(n) * static_cast<double>(n)).contiguous();
            const Tensor b = rt.full({n}, 1.0);
            Direct direct(A.to_vector<double>(), static_cast<int>(n));
            const auto mine = ferro_call(op, A, b);
            const auto theirs = direct_call(op, direct);
            const int inner = n <= 64 ? 50 : n <= 256 ? 4 : 1;
            const int samples = quick ? 5 : n >= 1024 ? 5 : 9;
            const Medians m = time_case(mine, theirs, samples, inner);
            std::printf(
                "{\"case\": \"%s n=%lld f64\", \"ferro_s\": %.6e, \"lapack_s\": %.6e, \"lapack_threads\": %d, "
                "\"lapack_one_thread_s\": %.6e, \"lapack_all_threads_s\": %.6e, \"samples\": %d, \"inner\": %d}\n",
                op.c_str(), static_cast<long long>(n), m.ferro_s, std::min(m.one_thread_s, m.all_threads_s),
                m.one_thread_s <= m.all_threads_s ? 1 : m.threads, m.one_thread_s, m.all_threads_s, samples, inner);
            std::fflush(stdout);
        }
    }
}
