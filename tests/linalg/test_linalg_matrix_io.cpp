// The linalg module's layout copies (plugins/linalg/src/matrix_io.hpp) against an element-by-
// element reference: every pairing of row-major, column-major and doubly strided layouts, each
// part of the matrix, conjugation, and sizes around the 8 x 8 blocks of the transposing copy.
#include "matrix_io.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <string>
#include <vector>

using ferro::linalg::copy_lower;
using ferro::linalg::copy_part;
using ferro::linalg::Part;

namespace {

struct Layout {
    std::string name;
    int64_t rs, cs;
};

// Row-major, column-major, and one with neither stride 1 (a view of every other element).
std::vector<Layout> layouts(int64_t rows, int64_t cols) {
    return {{"row-major", cols, 1}, {"column-major", 1, rows}, {"strided", 2 * cols + 3, 2}};
}

int64_t extent(const Layout& l, int64_t rows, int64_t cols) {
    return rows == 0 || cols == 0 ? 0 : (rows - 1) * l.rs + (cols - 1) * l.cs + 1;
}

bool in_part(Part part, int64_t i, int64_t j) { return part == Part::all || (part == Part::lower ? j <= i : j >= i); }

template <class T> T value(int64_t k) {
    if constexpr (std::is_same_v<T, std::complex<double>>) {
        return T(static_cast<double>(k) + 0.5, -static_cast<double>(3 * k) - 0.25);
    } else {
        return static_cast<T>(k) + T(0.5);
    }
}

template <class T> void check_copies(bool conj) {
    const T untouched = value<T>(-7);
    for (int64_t rows : {0, 1, 7, 8, 9, 16, 23}) {
        for (int64_t cols : {0, 1, 8, 13, 16, 17}) {
            for (const Layout& from : layouts(rows, cols)) {
                for (const Layout& to : layouts(rows, cols)) {
                    for (Part part : {Part::all, Part::lower, Part::upper}) {
                        INFO(rows << " x " << cols << " from " << from.name << " to " << to.name << " part "
                                  << static_cast<int>(part) << " conj " << conj);
                        std::vector<T> src(static_cast<size_t>(extent(from, rows, cols)) + 1);
                        for (size_t k = 0; k < src.size(); ++k) src[k] = value<T>(static_cast<int64_t>(k));
                        std::vector<T> dst(static_cast<size_t>(extent(to, rows, cols)) + 1, untouched);
                        std::vector<T> want = dst;
                        for (int64_t i = 0; i < rows; ++i) {
                            for (int64_t j = 0; j < cols; ++j) {
                                if (!in_part(part, i, j)) continue;
                                const T x = src[static_cast<size_t>(i * from.rs + j * from.cs)];
                                want[static_cast<size_t>(i * to.rs + j * to.cs)] = conj ? ferro::linalg::conj_if(x, true) : x;
                            }
                        }
                        copy_part(src.data(), from.rs, from.cs, dst.data(), to.rs, to.cs, rows, cols, conj, part);
                        CHECK(dst == want);
                    }
                }
            }
        }
    }
}

}  // namespace

TEST_CASE("linalg layout copies: every part between every pair of layouts equals the element-by-element copy", "[linalg]") {
    check_copies<double>(false);
    check_copies<float>(false);
    check_copies<std::complex<double>>(false);
    check_copies<std::complex<double>>(true);
}

TEST_CASE("linalg layout copies: copy_lower zeroes the strictly upper triangle only when asked", "[linalg]") {
    for (int64_t n : {1, 5, 8, 19}) {
        for (const Layout& to : layouts(n, n)) {
            INFO(n << " to " << to.name);
            std::vector<double> src(static_cast<size_t>(n * n));
            for (size_t k = 0; k < src.size(); ++k) src[k] = static_cast<double>(k) + 1;
            for (bool zero_upper : {false, true}) {
                std::vector<double> dst(static_cast<size_t>(extent(to, n, n)), -1.0);
                copy_lower(src.data(), n, 1, dst.data(), to.rs, to.cs, n, zero_upper);
                for (int64_t i = 0; i < n; ++i) {
                    for (int64_t j = 0; j < n; ++j) {
                        const double got = dst[static_cast<size_t>(i * to.rs + j * to.cs)];
                        const double want = j <= i ? src[static_cast<size_t>(i * n + j)] : zero_upper ? 0.0 : -1.0;
                        if (got != want) FAIL_CHECK("(" << i << ", " << j << "): " << got << ", expected " << want);
                    }
                }
            }
        }
    }
}
