// bench/run cuda: ferro on cuda:0 against the NVIDIA libraries called directly on the same
// device, in one process: gemm f32/f64 n = 4096 vs cuBLAS, svd/eigh/solve f64 n = 1024 vs
// cuSOLVER, fft c128 2^24 vs cuFFT, and an einsum instance on cuda:0 vs the cpu engine. Every
// timed call ends with the device idle (ferro: one element read back, which waits for the
// stream; direct: cudaDeviceSynchronize). Prints DESIGN §12 JSON lines with medians and
// ratio = ferro_s / peer_s; without a CUDA device, one line saying why.
#include "instances.hpp"
#include "timing.hpp"

#include <ferro/ferro.hpp>
#include <ferro/fft.hpp>
#include <ferro/linalg.hpp>
#include <nlohmann/json.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cusolverDn.h>

#include <complex>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

using ferro::DType;
using ferro::Tensor;

namespace {

const char* const kCuda = "cuda:0";

void sync(const Tensor& t) {
    Tensor first = t;
    for (int d = 0; d < t.ndim(); ++d) first = first.slice(d, 0, 1);
    (void)first.to("cpu");
}

void check_cuda(cudaError_t r, const char* what) {
    if (r != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(r));
}

void emit(nlohmann::json row) {
    row["bench"] = "cuda";
    std::printf("%s\n", row.dump().c_str());
    std::fflush(stdout);
}

void report(const std::string& name, double ferro_s, double peer_s, const std::string& peer) {
    emit({{"case", name}, {"ferro_s", ferro_s}, {"peer", peer}, {"peer_s", peer_s}, {"ratio", ferro_s / peer_s}});
}

void skipped(const std::string& name, const std::string& why) { emit({{"case", name}, {"skipped", why}}); }

// Device memory for the direct calls, filled from a host tensor.
struct DeviceCopy {
    void* ptr = nullptr;
    explicit DeviceCopy(const Tensor& host) {
        if (host.dtype() == DType::f32) upload(host.to_vector<float>());
        else if (host.dtype() == DType::f64) upload(host.to_vector<double>());
        else upload(host.to_vector<std::complex<double>>());
    }
    template <class T> void upload(const std::vector<T>& values) {
        check_cuda(cudaMalloc(&ptr, values.size() * sizeof(T)), "cudaMalloc");
        check_cuda(cudaMemcpy(ptr, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    ~DeviceCopy() { cudaFree(ptr); }
    DeviceCopy(const DeviceCopy&) = delete;
    DeviceCopy& operator=(const DeviceCopy&) = delete;
};

void bench_gemm(const ferro::Runtime& rt, cublasHandle_t blas, int samples) {
    const int64_t n = 4096;
    for (DType dt : {DType::f32, DType::f64}) {
        const std::string name = std::string("gemm ") + ferro::dtype_name(dt) + " n=4096";
        const Tensor a = rt.rand({n, n}, dt, 1), b = rt.rand({n, n}, dt, 2);
        const Tensor av = a.to(kCuda), bv = b.to(kCuda);
        const DeviceCopy da(a), db(b), dc(a);
        const double ferro_s = bench::median_call_seconds([&] { sync(ferro::matmul(av, bv)); }, samples);
        const double peer_s = bench::median_call_seconds(
            [&] {
                // Row-major C = A B is column-major C^T = B^T A^T: the same call ferro makes.
                if (dt == DType::f32) {
                    const float one = 1, zero = 0;
                    cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<float*>(db.ptr), n,
                                static_cast<float*>(da.ptr), n, &zero, static_cast<float*>(dc.ptr), n);
                } else {
                    const double one = 1, zero = 0;
                    cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<double*>(db.ptr), n,
                                static_cast<double*>(da.ptr), n, &zero, static_cast<double*>(dc.ptr), n);
                }
                check_cuda(cudaDeviceSynchronize(), "gemm");
            },
            samples);
        report(name, ferro_s, peer_s, "cuBLAS direct (same device)");
    }
}

void bench_linalg(const ferro::Runtime& rt, cusolverDnHandle_t solver, int samples) {
    const int n = 1024;
    const Tensor x = rt.rand({n, n}, DType::f64, 3);
    const Tensor spd = ferro::matmul(x, x.transpose()) + rt.eye(n, DType::f64) * double(n);
    const Tensor rhs = rt.rand({n, 1}, DType::f64, 4);
    const Tensor xv = x.to(kCuda), spdv = spd.to(kCuda), rhsv = rhs.to(kCuda);
    void* info_memory = nullptr;
    check_cuda(cudaMalloc(&info_memory, sizeof(int)), "cudaMalloc");
    int* info = static_cast<int*>(info_memory);
    auto workspace = [](int lwork) {
        void* w = nullptr;
        check_cuda(cudaMalloc(&w, static_cast<size_t>(lwork) * sizeof(double)), "cudaMalloc");
        return w;
    };
    struct Case {
        std::string name;
        std::function<Tensor()> ferro_call;
        std::function<void()> direct;
    };
    const DeviceCopy a(x), s(spd), b(rhs), a2(x), b2(rhs);
    int lwork_svd = 0, lwork_eig = 0, lwork_lu = 0;
    cusolverDnDgesvd_bufferSize(solver, n, n, &lwork_svd);
    cusolverDnDsyevd_bufferSize(solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, static_cast<double*>(s.ptr), n,
                                nullptr, &lwork_eig);
    cusolverDnDgetrf_bufferSize(solver, n, n, static_cast<double*>(a.ptr), n, &lwork_lu);
    void* w_svd = workspace(lwork_svd);
    void* w_eig = workspace(lwork_eig);
    void* w_lu = workspace(lwork_lu);
    void *sv = nullptr, *u = nullptr, *vt = nullptr, *ipiv = nullptr;
    check_cuda(cudaMalloc(&sv, n * sizeof(double)), "cudaMalloc");
    check_cuda(cudaMalloc(&u, size_t{n} * n * sizeof(double)), "cudaMalloc");
    check_cuda(cudaMalloc(&vt, size_t{n} * n * sizeof(double)), "cudaMalloc");
    check_cuda(cudaMalloc(&ipiv, n * sizeof(int)), "cudaMalloc");
    const Case cases[] = {
        {"svd f64 n=1024", [&] { return ferro::linalg::svd(xv).S; },
         [&] {
             // Each call factors a fresh copy: gesvd overwrites its input.
             cudaMemcpy(a2.ptr, a.ptr, size_t{n} * n * sizeof(double), cudaMemcpyDeviceToDevice);
             cusolverDnDgesvd(solver, 'S', 'S', n, n, static_cast<double*>(a2.ptr), n, static_cast<double*>(sv),
                              static_cast<double*>(u), n, static_cast<double*>(vt), n, static_cast<double*>(w_svd), lwork_svd,
                              nullptr, info);
         }},
        {"eigh f64 n=1024", [&] { return ferro::linalg::eigh(spdv).eigenvalues; },
         [&] {
             cudaMemcpy(a2.ptr, s.ptr, size_t{n} * n * sizeof(double), cudaMemcpyDeviceToDevice);
             cusolverDnDsyevd(solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, static_cast<double*>(a2.ptr), n,
                              static_cast<double*>(sv), static_cast<double*>(w_eig), lwork_eig, info);
         }},
        {"solve f64 n=1024", [&] { return ferro::linalg::solve(xv, rhsv); },
         [&] {
             cudaMemcpy(a2.ptr, a.ptr, size_t{n} * n * sizeof(double), cudaMemcpyDeviceToDevice);
             cudaMemcpy(b2.ptr, b.ptr, n * sizeof(double), cudaMemcpyDeviceToDevice);
             cusolverDnDgetrf(solver, n, n, static_cast<double*>(a2.ptr), n, static_cast<double*>(w_lu), static_cast<int*>(ipiv),
                              info);
             cusolverDnDgetrs(solver, CUBLAS_OP_T, n, 1, static_cast<double*>(a2.ptr), n, static_cast<int*>(ipiv),
                              static_cast<double*>(b2.ptr), n, info);
         }},
    };
    for (const Case& c : cases) {
        try {
            sync(c.ferro_call());
        } catch (const ferro::Error& e) {
            skipped(c.name, e.what());
            continue;
        }
        const double ferro_s = bench::median_call_seconds([&] { sync(c.ferro_call()); }, samples);
        const double peer_s = bench::median_call_seconds(
            [&] {
                c.direct();
                check_cuda(cudaDeviceSynchronize(), c.name.c_str());
            },
            samples);
        report(c.name, ferro_s, peer_s, "cuSOLVER direct (same device, input copy included)");
    }
    for (void* p : {w_svd, w_eig, w_lu, sv, u, vt, ipiv, info_memory}) cudaFree(p);
}

void bench_fft(const ferro::Runtime& rt, int samples) {
    const int64_t n = int64_t{1} << 24;
    const std::string name = "fft c128 n=2^24";
    const Tensor x = rt.rand({n}, DType::f64, 5).to(DType::c128);
    const Tensor xv = x.to(kCuda);
    try {
        sync(ferro::fft::fft(xv));
    } catch (const ferro::Error& e) {
        skipped(name, e.what());
        return;
    }
    const DeviceCopy in(x), out(x);
    cufftHandle plan = 0;
    if (cufftPlan1d(&plan, static_cast<int>(n), CUFFT_Z2Z, 1) != CUFFT_SUCCESS) {
        skipped(name, "cufftPlan1d failed");
        return;
    }
    const double ferro_s = bench::median_call_seconds([&] { sync(ferro::fft::fft(xv)); }, samples);
    const double peer_s = bench::median_call_seconds(
        [&] {
            cufftExecZ2Z(plan, static_cast<cufftDoubleComplex*>(in.ptr), static_cast<cufftDoubleComplex*>(out.ptr),
                         CUFFT_FORWARD);
            check_cuda(cudaDeviceSynchronize(), "fft");
        },
        samples);
    cufftDestroy(plan);
    report(name, ferro_s, peer_s, "cuFFT direct (same device, out of place)");
}

void bench_einsum(const ferro::Runtime& rt, const std::string& data, int samples) {
    const std::string name = "lm_batch_likelihood_sentence_4_4d";
    std::ifstream in(data);
    if (!in) return skipped("einsum " + name, data + " not found");
    const nlohmann::json doc = nlohmann::json::parse(in);
    for (const auto& inst : doc["instances"]) {
        if (inst["name"] != name) continue;
        std::vector<Tensor> cpu_ops, cuda_ops;
        uint32_t seed = 1;
        for (const auto& s : inst["shapes"]) {
            cpu_ops.push_back(rt.rand(s.get<ferro::Shape>(), DType::f32, seed++));
            cuda_ops.push_back(cpu_ops.back().to(kCuda));
        }
        const ferro::EinsumOptions path = bench::reference_path(inst);
        const std::string subscripts = bench::subscripts_of(inst);
        const double cuda_s = bench::median_call_seconds([&] { sync(ferro::einsum(subscripts, cuda_ops, path)); }, samples);
        const double cpu_s = bench::median_call_seconds([&] { sync(ferro::einsum(subscripts, cpu_ops, path)); }, samples);
        report("einsum f32 " + name, cuda_s, cpu_s, "ferro on the cpu engine (same path)");
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string data = "../shared/data/einsum_instances.json";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        else if (std::strcmp(argv[i], "--data") == 0 && i + 1 < argc) data = argv[++i];
    }
    const ferro::Runtime rt;
    std::string device;
    for (const auto& e : rt.inventory().engines) {
        if (e.name == kCuda) device = e.device;
    }
    if (device.empty()) {
        std::string reason = "the cuda engine is not loaded";
        for (const auto& k : rt.inventory().engine_kinds) {
            if (k.kind == "cuda") reason = k.reason;
        }
        emit({{"skipped", "no cuda:0: " + reason}});
        return 0;
    }
    emit({{"device", device}});
    const int samples = quick ? 3 : 7;
    try {
        cublasHandle_t blas = nullptr;
        cusolverDnHandle_t solver = nullptr;
        if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS || cusolverDnCreate(&solver) != CUSOLVER_STATUS_SUCCESS) {
            throw std::runtime_error("cannot create the cuBLAS/cuSOLVER handles");
        }
        bench_gemm(rt, blas, samples);
        bench_linalg(rt, solver, samples);
        bench_fft(rt, samples);
        bench_einsum(rt, data, samples);
        cusolverDnDestroy(solver);
        cublasDestroy(blas);
    } catch (const std::exception& e) {
        emit({{"error", e.what()}});
        return 1;
    }
}
