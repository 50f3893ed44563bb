// See ops_host.hpp: the cuSOLVER module's per-matrix arithmetic on the host.
#include "ops_host.hpp"

#include "lu_math.cuh"

#include <vector>

namespace ferro::linalg::cuda::host {
namespace {

template <class F> bool visit(ferro_dtype dtype, F&& f) {
    switch (dtype) {
        case FERRO_DTYPE_F32: f(float{}); return true;
        case FERRO_DTYPE_F64: f(double{}); return true;
        case FERRO_DTYPE_C64: f(::cuda::std::complex<float>{}); return true;
        case FERRO_DTYPE_C128: f(::cuda::std::complex<double>{}); return true;
        default: return false;
    }
}

}  // namespace

bool determinant(ferro_dtype dtype, const void* lu, const int64_t* pivots, int64_t n, void* sign_or_det, void* logabs) {
    return visit(dtype, [&](auto tag) {
        using T = decltype(tag);
        determinant_of(static_cast<const T*>(lu), pivots, n, static_cast<T*>(sign_or_det),
                       static_cast<typename real_of<T>::type*>(logabs));
    });
}

bool permutation(ferro_dtype dtype, const int64_t* pivots, int64_t m, int64_t k, void* p) {
    std::vector<int64_t> perm(static_cast<size_t>(m));
    return visit(dtype, [&](auto tag) {
        using T = decltype(tag);
        permutation_of(pivots, m, k, perm.data(), static_cast<T*>(p));
    });
}

}  // namespace ferro::linalg::cuda::host
