// bench/run gemm: ferro's matmul (through ferro.hpp, output allocated per call) against
// cblas_?gemm called directly on preallocated buffers, same BLAS (the one the process loaded), same process.
// Prints DESIGN §12 JSON lines.
#include "timing.hpp"

#include <ferro/ferro.hpp>

#include <cblas.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>

namespace {

template <class T> void cblas_gemm(int n, const T* a, const T* b, T* c) {
    if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    } else {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    }
}

template <class T> double run_case(const ferro::Runtime& rt, int64_t n, bool quick, const char* dtype) {
    const ferro::DType dt = ferro::dtype_of<T>();
    const ferro::Tensor A = rt.rand({n, n}, dt, 1), B = rt.rand({n, n}, dt, 2);
    const std::vector<T> a = A.to_vector<T>(), b = B.to_vector<T>();
    std::vector<T> c(static_cast<size_t>(n * n));
    // Agreement first: a benchmark of a wrong answer is worthless.
    const std::vector<T> mine = ferro::matmul(A, B).to_vector<T>();
    cblas_gemm<T>(static_cast<int>(n), a.data(), b.data(), c.data());
    double err = 0;
    for (size_t i = 0; i < c.size(); ++i) err = std::max(err, static_cast<double>(std::abs(mine[i] - c[i])));
    const int inner = n <= 256 ? 20 : n <= 512 ? 5 : n <= 1024 ? 2 : 1;
    const int samples = quick ? 3 : 9;
    const auto [ferro_s, peer_s] =
        bench::paired_medians([&] { (void)ferro::matmul(A, B); },
                              [&] { cblas_gemm<T>(static_cast<int>(n), a.data(), b.data(), c.data()); }, samples, inner);
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    std::printf(
        "{\"bench\": \"gemm\", \"case\": \"%s n=%lld\", \"ferro_s\": %.6e, \"peer\": \"cblas_%cgemm (the same BLAS)\", "
        "\"peer_s\": %.6e, \"ratio\": %.4f, \"ferro_gflops\": %.2f, \"peer_gflops\": %.2f, \"max_abs_diff\": %.2e, "
        "\"samples\": %d}\n",
        dtype, static_cast<long long>(n), ferro_s, std::is_same_v<T, float> ? 's' : 'd', peer_s, ferro_s / peer_s,
        flops / ferro_s * 1e-9, flops / peer_s * 1e-9, err, samples);
    std::fflush(stdout);
    return ferro_s / peer_s;
}

// A batch of small products (the einsum steps of the language-model networks: thousands of
// 16^3 products) against one cblas call per product; the small ones run on the engine's own
// register-tiled kernel, one batch per pool thread, the peer on BLAS threads as it chooses.
template <class T>
double run_batched(const ferro::Runtime& rt, int64_t batch, int64_t m, int64_t n, int64_t k, bool quick, const char* dtype) {
    const ferro::DType dt = ferro::dtype_of<T>();
    const ferro::Tensor A = rt.rand({batch, m, k}, dt, 1), B = rt.rand({batch, k, n}, dt, 2);
    const std::vector<T> a = A.to_vector<T>(), b = B.to_vector<T>();
    std::vector<T> c(static_cast<size_t>(batch * m * n));
    const auto peer = [&] {
        for (int64_t p = 0; p < batch; ++p) {
            const T* ap = a.data() + p * m * k;
            const T* bp = b.data() + p * k * n;
            T* cp = c.data() + p * m * n;
            const auto M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
            if constexpr (std::is_same_v<T, float>) {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, ap, K, bp, N, 0.0f, cp, N);
            } else {
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, ap, K, bp, N, 0.0, cp, N);
            }
        }
    };
    const std::vector<T> mine = ferro::matmul(A, B).to_vector<T>();
    peer();
    double err = 0;
    for (size_t i = 0; i < c.size(); ++i) err = std::max(err, static_cast<double>(std::abs(mine[i] - c[i])));
    const int samples = quick ? 5 : 15;
    const auto [ferro_s, peer_s] = bench::paired_medians([&] { (void)ferro::matmul(A, B); }, peer, samples, 5);
    const double flops = 2.0 * static_cast<double>(batch * m * n * k);
    std::printf(
        "{\"bench\": \"gemm\", \"case\": \"%s batch %lld x %lldx%lldx%lld\", \"ferro_s\": %.6e, "
        "\"peer\": \"cblas_%cgemm per product (the same BLAS)\", \"peer_s\": %.6e, \"ratio\": %.4f, "
        "\"ferro_gflops\": %.2f, \"peer_gflops\": %.2f, \"max_abs_diff\": %.2e, \"samples\": %d}\n",
        dtype, static_cast<long long>(batch), static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
        ferro_s, std::is_same_v<T, float> ? 's' : 'd', peer_s, ferro_s / peer_s, flops / ferro_s * 1e-9, flops / peer_s * 1e-9,
        err, samples);
    std::fflush(stdout);
    return ferro_s / peer_s;
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    ferro::Runtime::Options o;
    o.autoload = false;
    const ferro::Runtime rt(o);
    std::vector<int64_t> sizes = {256, 512, 1024, 2048};
    if (quick) sizes = {256, 512};
    std::vector<double> ratios;
    for (int64_t n : sizes) {
        ratios.push_back(run_case<float>(rt, n, quick, "f32"));
        ratios.push_back(run_case<double>(rt, n, quick, "f64"));
    }
    for (auto [m, n, k] : {std::array<int64_t, 3>{16, 16, 16}, std::array<int64_t, 3>{4, 16, 4}}) {
        ratios.push_back(run_batched<float>(rt, 2000, m, n, k, quick, "f32"));
        ratios.push_back(run_batched<double>(rt, 2000, m, n, k, quick, "f64"));
    }
    double log_sum = 0;
    for (double r : ratios) log_sum += std::log(r);
    std::printf("{\"bench\": \"gemm\", \"summary\": true, \"geomean_ratio\": %.4f, \"worst_ratio\": %.4f}\n",
                std::exp(log_sum / static_cast<double>(ratios.size())), *std::max_element(ratios.begin(), ratios.end()));
}
