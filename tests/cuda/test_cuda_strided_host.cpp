// The elementwise kernels' addressing (engines/cuda/src/strided.hpp, offsets_of in device.cuh)
// on the host: for random shapes with size-1 axes and strides that are contiguous, permuted,
// broadcast (0), negative or padded, the offsets visited equal a plain row-major walk, and
// contiguous runs are merged (a dense tensor is one axis).
#include "ops_host.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

TEST_CASE("cuda strided addressing: merged axes visit the offsets of a row-major walk", "[cuda-probe]") {
    std::mt19937 gen(11);
    for (int trial = 0; trial < 400; ++trial) {
        const int ndim = static_cast<int>(gen() % 6);
        std::vector<int64_t> shape(static_cast<size_t>(ndim)), out_strides(shape.size()), in_strides(shape.size());
        for (auto& d : shape) d = static_cast<int64_t>(gen() % 4) + (gen() % 5 == 0 ? 0 : 1);  // 0 to 4, sizes 1 common
        // out: row-major dense; in: row-major, permuted, broadcast or reversed along some axes, padded.
        int64_t s = 1;
        for (int d = ndim - 1; d >= 0; --d) {
            out_strides[static_cast<size_t>(d)] = s;
            s *= shape[static_cast<size_t>(d)];
        }
        int64_t t = 1;
        for (int d = ndim - 1; d >= 0; --d) {
            const auto kind = gen() % 4;
            const size_t i = static_cast<size_t>(d);
            in_strides[i] = kind == 0 ? 0 : kind == 1 ? -t : t;
            t *= std::max<int64_t>(shape[i], 1) + (kind == 3 ? 1 : 0);
        }
        const ferro::cuda::host::Offsets got =
            ferro::cuda::host::strided_offsets(ndim, shape.data(), out_strides.data(), in_strides.data());
        std::vector<int64_t> want_out, want_in;
        int64_t numel = 1;
        for (int64_t d : shape) numel *= d;
        for (int64_t i = 0; i < numel; ++i) {
            int64_t rest = i, o = 0, n = 0;
            for (int d = ndim - 1; d >= 0; --d) {
                const size_t k = static_cast<size_t>(d);
                const int64_t idx = rest % shape[k];
                rest /= shape[k];
                o += idx * out_strides[k];
                n += idx * in_strides[k];
            }
            want_out.push_back(o);
            want_in.push_back(n);
        }
        INFO("trial " << trial << " ndim " << ndim);
        CHECK(got.out == want_out);
        CHECK(got.in == want_in);
        CHECK(got.merged_ndim <= ndim);
    }
    // Dense operands of any rank merge into one axis.
    const int64_t shape[] = {3, 4, 5}, dense[] = {20, 5, 1};
    CHECK(ferro::cuda::host::strided_offsets(3, shape, dense, dense).merged_ndim == 1);
    const int64_t transposed[] = {1, 3, 12};
    CHECK(ferro::cuda::host::strided_offsets(3, shape, dense, transposed).merged_ndim == 3);
}
