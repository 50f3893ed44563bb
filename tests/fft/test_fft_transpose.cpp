// The transposing copies of the fft module's buffered passes (plugins/fft/src/fft_transpose.cpp,
// compiled into this suite): the dispatched copy (AVX tiles here) and the portable one, on
// shapes that are and are not multiples of the 4 x 4 tiles and of the 32 x 32 blocks, with
// row distances beyond the rows' lengths, and destination rows 512 elements apart (a multiple
// of 4 KiB in c64, where the AVX copy writes each destination line's two tiles in a row).
#include "fft_transpose.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <vector>

namespace {

template <class C, class Copy> void check_transposes(Copy copy, const char* which) {
    for (int64_t rows : {1, 3, 4, 5, 31, 32, 37, 64, 100}) {
        for (int64_t cols : {1, 2, 4, 7, 32, 33, 130})
            for (int64_t dst_ld : {rows + 5, int64_t{512}}) {
                INFO(which << ": " << rows << " x " << cols << ", destination rows " << dst_ld << " apart");
                const int64_t src_ld = cols + 3;
                std::vector<C> src(static_cast<size_t>(rows * src_ld)), dst(static_cast<size_t>(cols * dst_ld), C(-1, -1));
                for (size_t k = 0; k < src.size(); ++k) src[k] = C(static_cast<float>(k), -static_cast<float>(k) / 2);
                copy(src.data(), src_ld, dst.data(), dst_ld, rows, cols);
                int64_t wrong = 0, touched = 0;
                for (int64_t j = 0; j < cols; ++j) {
                    for (int64_t i = 0; i < dst_ld; ++i) {
                        const C got = dst[static_cast<size_t>(j * dst_ld + i)];
                        if (i < rows) wrong += got != src[static_cast<size_t>(i * src_ld + j)];
                        else touched += got != C(-1, -1);  // the padding beyond each row stays as it was
                    }
                }
                CHECK(wrong == 0);
                CHECK(touched == 0);
            }
    }
}

}  // namespace

TEST_CASE("fft transpose: dst[j][i] = src[i][j] for every shape, c64 and c128, dispatched and portable", "[fft]") {
    using cf = std::complex<float>;
    using cd = std::complex<double>;
    check_transposes<cf>([](auto... a) { ferro::fft::transpose(a...); }, "c64 dispatched");
    check_transposes<cf>([](auto... a) { ferro::fft::transpose_portable(a...); }, "c64 portable");
    check_transposes<cd>([](auto... a) { ferro::fft::transpose(a...); }, "c128 dispatched");
    check_transposes<cd>([](auto... a) { ferro::fft::transpose_portable(a...); }, "c128 portable");
}
