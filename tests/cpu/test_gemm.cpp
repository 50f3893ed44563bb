// gemm_batched of the cpu engine against a naive product, in every layout cblas can and
// cannot take directly, with conjugation, broadcast batches and beta.
#include "cpu_fixture.hpp"
#include "small_gemm.hpp"

#include "blas_backend.hpp"

#include <ferro/cpu_context.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <thread>
#include <tuple>

using namespace ferro::test;
using cd = std::complex<double>;

namespace {

struct Matrix {  // element (p, i, j) of a batch at data[off + p*bs + i*rs + j*cs]
    std::vector<cd> data;
    int64_t bs, rs, cs;
    cd at(int64_t p, int64_t i, int64_t j) const { return data[static_cast<size_t>(p * bs + i * rs + j * cs)]; }
};

// Storage for a batch of r x c matrices in the named layout.
Matrix make(int64_t batch, int64_t r, int64_t c, const char* layout, std::mt19937& gen) {
    std::normal_distribution<double> d;
    Matrix m;
    const std::string l = layout;
    if (l == "row") m = {{}, r * c, c, 1};
    else if (l == "col") m = {{}, r * c, 1, r};
    else if (l == "padded") m = {{}, r * (c + 3), c + 3, 1};  // lda > cols
    else if (l == "strided") m = {{}, r * c * 2, c * 2, 2};   // no unit stride: packed
    else m = {{}, 0, c, 1};                                   // "broadcast": batch stride 0
    const int64_t span = (batch - 1) * m.bs + (r - 1) * m.rs + (c - 1) * m.cs + 1;
    m.data.resize(static_cast<size_t>(span));
    for (auto& x : m.data) x = {d(gen), d(gen)};
    return m;
}

ferro_gemm_operand operand(Matrix& m) {
    return {reinterpret_cast<ferro_buffer>(m.data.data()), 0, m.data.data(), m.bs, m.rs, m.cs};
}

}  // namespace

TEST_CASE("cpu: gemm_batched matches a naive product in every operand layout", "[cpu]") {
    CpuEngine engine;
    std::mt19937 gen(1);
    // Small products take the engine's own loop (rows of a fixed length up to 8, or any), larger
    // ones cblas: test all three.
    const auto [m, n, k] =
        GENERATE(std::tuple<int64_t, int64_t, int64_t>{4, 5, 6}, std::tuple<int64_t, int64_t, int64_t>{3, 12, 7},
                 std::tuple<int64_t, int64_t, int64_t>{17, 19, 23});
    const int64_t batch = 3;
    for (const char* la : {"row", "col", "padded", "strided", "broadcast"}) {
        for (const char* lb : {"row", "col", "strided"}) {
            for (const char* lc : {"row", "col", "strided"}) {
                for (int conj = 0; conj < 4; ++conj) {
                    INFO("A " << la << ", B " << lb << ", C " << lc << ", conj " << conj);
                    Matrix a = make(batch, m, k, la, gen), b = make(batch, k, n, lb, gen), c = make(batch, m, n, lc, gen);
                    const Matrix c0 = c;
                    const cd alpha(0.5, -1), beta(2, 0.25);
                    ferro_gemm_args g{};
                    g.struct_size = sizeof g;
                    g.dtype = FERRO_DTYPE_C128;
                    g.batch = batch;
                    g.m = m;
                    g.n = n;
                    g.k = k;
                    g.a = operand(a);
                    g.b = operand(b);
                    g.c = operand(c);
                    g.alpha = {alpha.real(), alpha.imag(), 0};
                    g.beta = {beta.real(), beta.imag(), 0};
                    g.conj_a = conj & 1;
                    g.conj_b = (conj >> 1) & 1;
                    REQUIRE(engine.f().gemm_batched(engine.inst.self, nullptr, &g) == nullptr);
                    for (int64_t p = 0; p < batch; ++p)
                        for (int64_t i = 0; i < m; ++i)
                            for (int64_t j = 0; j < n; ++j) {
                                cd s = 0;
                                for (int64_t q = 0; q < k; ++q) {
                                    const cd x = g.conj_a ? std::conj(a.at(p, i, q)) : a.at(p, i, q);
                                    const cd y = g.conj_b ? std::conj(b.at(p, q, j)) : b.at(p, q, j);
                                    s += x * y;
                                }
                                const cd want = alpha * s + beta * c0.at(p, i, j);
                                CHECK(std::abs(c.at(p, i, j) - want) < 1e-12 * (1 + std::abs(want)));
                            }
                }
            }
        }
    }
}

TEST_CASE("cpu: gemm with beta 0 ignores NaN in C, and k = 0 scales C", "[cpu]") {
    CpuEngine engine;
    std::vector<double> a = {1, 2, 3, 4}, b = {1, 0, 0, 1}, c(4, std::nan(""));
    ferro_gemm_args g{};
    g.struct_size = sizeof g;
    g.dtype = FERRO_DTYPE_F64;
    g.batch = 1;
    g.m = g.n = g.k = 2;
    g.a = {reinterpret_cast<ferro_buffer>(a.data()), 0, a.data(), 0, 2, 1};
    g.b = {reinterpret_cast<ferro_buffer>(b.data()), 0, b.data(), 0, 2, 1};
    g.c = {reinterpret_cast<ferro_buffer>(c.data()), 0, c.data(), 0, 2, 1};
    g.alpha = {1, 0, 0};
    REQUIRE(engine.f().gemm_batched(engine.inst.self, nullptr, &g) == nullptr);
    CHECK(c == std::vector<double>{1, 2, 3, 4});
    g.k = 0;
    g.beta = {3, 0, 0};
    REQUIRE(engine.f().gemm_batched(engine.inst.self, nullptr, &g) == nullptr);
    CHECK(c == std::vector<double>{3, 6, 9, 12});
    g.dtype = FERRO_DTYPE_I64;
    auto parts = take_status(engine.host.api, engine.f().gemm_batched(engine.inst.self, nullptr, &g));
    CHECK(parts.code == FERRO_UNIMPLEMENTED);
    CHECK_THAT(parts.message, Catch::Contains("gemm_batched does not support this dtype"));
}

namespace {

// C = alpha A B + beta C for a batch of 2, with row-major B and C padded by 2 columns (the
// small kernels' layout) and a column-major A, checked against a naive product in double.
template <class T>
void check_small_rows(CpuEngine& engine, ferro_dtype dtype, int64_t m, int64_t n, int64_t k, double tol, int64_t batch = 2) {
    const int64_t ldb = n + 2, ldc = n + 2;
    std::vector<T> a(static_cast<size_t>(batch * m * k)), b(static_cast<size_t>(batch * k * ldb)),
        c(static_cast<size_t>(batch * m * ldc));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(std::sin(1.0 + static_cast<double>(i)));
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(std::cos(2.0 + static_cast<double>(i)));
    for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<T>(0.25 * static_cast<double>(i % 7));
    const std::vector<T> c0 = c;
    ferro_gemm_args g{};
    g.struct_size = sizeof g;
    g.dtype = dtype;
    g.batch = batch;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = {reinterpret_cast<ferro_buffer>(a.data()), 0, a.data(), m * k, 1, m};  // column-major
    g.b = {reinterpret_cast<ferro_buffer>(b.data()), 0, b.data(), k * ldb, ldb, 1};
    g.c = {reinterpret_cast<ferro_buffer>(c.data()), 0, c.data(), m * ldc, ldc, 1};
    g.alpha = {1.5, 0, 0};
    g.beta = {-0.5, 0, 0};
    REQUIRE(engine.f().gemm_batched(engine.inst.self, nullptr, &g) == nullptr);
    for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
                const auto at_c = static_cast<size_t>(p * m * ldc + i * ldc + j);
                if (j >= n) {  // padding is never written
                    CHECK(c[at_c] == c0[at_c]);
                    continue;
                }
                double s = 0;
                for (int64_t q = 0; q < k; ++q) {
                    s += static_cast<double>(a[static_cast<size_t>(p * m * k + q * m + i)]) *
                         static_cast<double>(b[static_cast<size_t>(p * k * ldb + q * ldb + j)]);
                }
                const double want = 1.5 * s - 0.5 * static_cast<double>(c0[at_c]);
                CHECK(std::abs(static_cast<double>(c[at_c]) - want) < tol * (1 + std::abs(want)));
            }
}

}  // namespace

TEST_CASE("cpu: the small-product kernels match a naive product for every row length", "[cpu]") {
    CpuEngine engine;
    // n = 1..8 run fixed-width kernels, 9..64 the general row kernel, beyond it several blocks
    // of 64 columns.
    for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 33, 70, 130}) {
        INFO("n = " << n);
        check_small_rows<double>(engine, FERRO_DTYPE_F64, 3, n, 4, 1e-12);
        check_small_rows<float>(engine, FERRO_DTYPE_F32, 3, n, 4, 1e-5);
    }
}

namespace {

// One product through small_gemm_on: A (m x k) column-major, B (k x n) row-major or
// column-major (packed by the kernel), C (m x n) row-major with padding or with column
// stride 2, against a naive product in double.
template <class T>
int check_small_isa(ferro::cpu::SmallGemmIsa isa, int64_t m, int64_t n, int64_t k, bool b_rows, bool c_rows, double beta) {
    const int64_t ldc = c_rows ? n + 1 : 2 * n * 2 + 1;
    const int64_t c_cs = c_rows ? 1 : 2;
    std::vector<T> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * ldc + 2 * n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(std::sin(1.0 + static_cast<double>(i)));
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(std::cos(2.0 + static_cast<double>(i)));
    for (size_t i = 0; i < c.size(); ++i)
        c[i] = beta == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(0.25 * static_cast<double>(i % 7));
    const std::vector<T> c0 = c;
    ferro_gemm_args g{};
    g.struct_size = sizeof g;
    g.dtype = std::is_same_v<T, float> ? FERRO_DTYPE_F32 : FERRO_DTYPE_F64;
    g.batch = 1;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = {reinterpret_cast<ferro_buffer>(a.data()), 0, a.data(), 0, 1, m};
    g.b = b_rows ? ferro_gemm_operand{reinterpret_cast<ferro_buffer>(b.data()), 0, b.data(), 0, n, 1}
                 : ferro_gemm_operand{reinterpret_cast<ferro_buffer>(b.data()), 0, b.data(), 0, 1, k};
    g.c = {reinterpret_cast<ferro_buffer>(c.data()), 0, c.data(), 0, ldc, c_cs};
    ferro::cpu::small_gemm_on<T>(isa, g, T(1.5), static_cast<T>(beta), 0, 1);
    int wrong = 0;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t q = 0; q < k; ++q) {
                const double y = b_rows ? static_cast<double>(b[static_cast<size_t>(q * n + j)])
                                        : static_cast<double>(b[static_cast<size_t>(j * k + q)]);
                s += static_cast<double>(a[static_cast<size_t>(q * m + i)]) * y;
            }
            const auto at = static_cast<size_t>(i * ldc + j * c_cs);
            const double want = 1.5 * s + (beta == 0 ? 0.0 : beta * static_cast<double>(c0[at]));
            const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
            if (!(std::abs(static_cast<double>(c[at]) - want) <= tol * (1 + std::abs(want)))) ++wrong;
            c[at] = c0[at];  // what is left must be untouched
        }
    }
    for (size_t i = 0; i < c.size(); ++i) {
        if (!(c[i] == c0[i] || (std::isnan(c[i]) && std::isnan(c0[i])))) ++wrong;
    }
    return wrong;
}

}  // namespace

TEST_CASE("cpu: the register-tiled small-product kernel of every instruction set matches a naive product", "[cpu]") {
    // Rows cover the 4-, 2- and 1-row blocks, columns every tile width and tail (4, 6 and 12
    // end on tiles of a narrower vector than the copy's own), in the baseline, AVX2 and
    // AVX-512 copies this CPU can run.
    for (const ferro::cpu::SmallGemmIsa isa : ferro::cpu::small_gemm_isas()) {
        for (int64_t m : {1, 2, 3, 4, 5, 7, 9}) {
            for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 33, 40}) {
                for (int layout = 0; layout < 8; ++layout) {
                    const bool b_rows = layout & 1, c_rows = layout & 2;
                    const double beta = layout & 4 ? -0.5 : 0.0;
                    const int64_t k = 1 + (m + n) % 6;
                    INFO(ferro::cpu::name_of(isa) << ": m " << m << " n " << n << " k " << k << " B rows " << b_rows << " C rows "
                                                  << c_rows << " beta " << beta);
                    CHECK(check_small_isa<double>(isa, m, n, k, b_rows, c_rows, beta) == 0);
                    CHECK(check_small_isa<float>(isa, m, n, k, b_rows, c_rows, beta) == 0);
                }
            }
        }
    }
}

TEST_CASE("cpu: skinny products on the register-tiled kernel match a naive product in both orientations", "[cpu]") {
    // Beyond one block of 64 rows, with every row and column tail; a column-major B makes the
    // kernel compute C^T = B^T A^T instead of packing B, and a B narrower than a tile is
    // packed padded to one (100 x 21).
    for (const ferro::cpu::SmallGemmIsa isa : ferro::cpu::small_gemm_isas()) {
        for (auto [m, n, k] :
             {std::tuple<int64_t, int64_t, int64_t>{21, 101, 70}, {150, 37, 9}, {13, 13, 300}, {70, 200, 31}, {100, 21, 50}}) {
            for (int layout = 0; layout < 8; ++layout) {
                const bool b_rows = layout & 1, c_rows = layout & 2;
                const double beta = layout & 4 ? 0.75 : 0.0;
                INFO(ferro::cpu::name_of(isa) << ": m " << m << " n " << n << " k " << k << " B rows " << b_rows << " C rows "
                                              << c_rows << " beta " << beta);
                CHECK(check_small_isa<double>(isa, m, n, k, b_rows, c_rows, beta) == 0);
                CHECK(check_small_isa<float>(isa, m, n, k, b_rows, c_rows, beta) == 0);
            }
        }
    }
}

TEST_CASE("cpu: one skinny product split over the pool by rows or by columns matches a naive product", "[cpu]") {
    CpuEngine engine;
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 21, 700, 150, 1e-12, 1);  // by columns
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 900, 20, 40, 1e-12, 1);   // by rows
    check_small_rows<float>(engine, FERRO_DTYPE_F32, 333, 250, 12, 1e-4, 1);    // k skinny, by rows
}

TEST_CASE("cpu: large batches of small products, spread over the pool, match a naive product", "[cpu]") {
    CpuEngine engine;
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 12, 12, 12, 1e-12, 700);  // the engine's own kernel
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 40, 40, 40, 1e-12, 90);   // one cblas call each
    check_small_rows<float>(engine, FERRO_DTYPE_F32, 3, 100, 5, 1e-5, 1000);
}

// ferro links the reference BLAS interface; the implementation is the process's choice. The
// suite also runs with BLIS first in LD_LIBRARY_PATH (tests/cpu/CMakeLists.txt), where
// FERRO_EXPECT_BLAS says which one it must find.
TEST_CASE("cpu: the BLAS is identified at run time, from the library the process loaded", "[cpu]") {
    const ferro::cpu::BlasBackend& b = ferro::cpu::blas_backend();
    INFO(b.describe());
    REQUIRE_FALSE(b.library.empty());
    CHECK(std::filesystem::exists(b.library));
    if (const char* expected = std::getenv("FERRO_EXPECT_BLAS")) {
        CHECK(b.name == expected);
    } else {
        CHECK((b.name == "OpenBLAS" || b.name == "MKL" || b.name == "BLIS" || b.name == "reference BLAS"));
    }
    if (b.name == "OpenBLAS") {
        CHECK(b.version.find('.') != std::string::npos);  // "0.3.21"
        CHECK_FALSE(b.core.empty());
        REQUIRE(b.get_threads != nullptr);
        const int n = b.get_threads();
        CHECK(b.describe().find(std::to_string(n) + (n == 1 ? " thread)" : " threads)")) != std::string::npos);
    }
    CHECK(b.describe().find(b.name) == 0);
    CHECK(b.describe().find(" from " + b.library) != std::string::npos);
}

namespace {

// The backend's thread count (OpenBLAS by default; blas_backend.hpp). A backend without one
// (BLIS, the reference BLAS) leaves the thread-count checks nothing to check.
int blas_threads() { return ferro::cpu::blas_backend().get_threads(); }
void set_blas_threads(int n) { ferro::cpu::blas_backend().set_threads(n); }
bool blas_has_threads() {
    if (ferro::cpu::blas_backend().get_threads != nullptr) return true;
    WARN(ferro::cpu::blas_backend().describe() << " has no thread count: nothing to check");
    return false;
}

}  // namespace

TEST_CASE("cpu: batches of mid-sized BLAS products run one per pool thread and leave BLAS's thread count as it was", "[cpu]") {
    CpuEngine engine;
    if (!blas_has_threads()) return;
    const int before = blas_threads();
    set_blas_threads(2);
    // A side above kMidGemmSide keeps them on cblas: 2.6 million multiply-adds each.
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 1100, 40, 60, 1e-12, 3);
    check_small_rows<float>(engine, FERRO_DTYPE_F32, 1100, 40, 60, 1e-4, 2);
    CHECK(blas_threads() == 2);
    set_blas_threads(before);
}

namespace {

ferro_gemm_args product_of(ferro_dtype dtype, int64_t m, int64_t n, int64_t k) {  // all row-major
    ferro_gemm_args g{};
    g.struct_size = sizeof g;
    g.dtype = dtype;
    g.batch = 1;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = {nullptr, 0, nullptr, 0, k, 1};
    g.b = {nullptr, 0, nullptr, 0, n, 1};
    g.c = {nullptr, 0, nullptr, 0, n, 1};
    return g;
}

}  // namespace

TEST_CASE(
    "cpu: mid-sized real products take the register-tiled kernel while B fits in half a core's L2, skinny ones while their "
    "copies are few",
    "[cpu]") {
    using ferro::cpu::takes_small_gemm;
    // B of 128 KiB each: within half of any L2 from 256 KiB.
    CHECK(takes_small_gemm(product_of(FERRO_DTYPE_F64, 128, 128, 128), false));
    CHECK(takes_small_gemm(product_of(FERRO_DTYPE_F32, 256, 256, 128), false));
    CHECK(takes_small_gemm(product_of(FERRO_DTYPE_F64, 512, 256, 64), false));
    CHECK_FALSE(takes_small_gemm(product_of(FERRO_DTYPE_C128, 128, 128, 128), true));     // complex: BLAS
    CHECK_FALSE(takes_small_gemm(product_of(FERRO_DTYPE_F64, 64, 64, 64), false));        // not above kMidGemmWork
    CHECK_FALSE(takes_small_gemm(product_of(FERRO_DTYPE_F64, 2048, 2048, 64), false));    // a side above kMidGemmSide
    CHECK_FALSE(takes_small_gemm(product_of(FERRO_DTYPE_F64, 1000, 1000, 1000), false));  // B: 8 MB
    // A shallow k: B's columns in chunks, whatever its size, while C is not too large.
    CHECK(takes_small_gemm(product_of(FERRO_DTYPE_F64, 1100, 1728, 144), false));
    CHECK_FALSE(takes_small_gemm(product_of(FERRO_DTYPE_F64, 1100, 1728, 400), false));
    // Skinny ones whose packed B is 1/19 of the work: on the kernel unless k is the longest side.
    ferro_gemm_args wide = product_of(FERRO_DTYPE_F64, 19, 2299, 19), deep = product_of(FERRO_DTYPE_F64, 19, 19, 2299);
    wide.b.row_stride = 1, wide.b.col_stride = 19;
    deep.b.row_stride = 1, deep.b.col_stride = 2299;
    CHECK(takes_small_gemm(wide, false));
    CHECK_FALSE(takes_small_gemm(deep, false));
    // Through the engine: one product split over the pool, a batch one product per thread.
    CpuEngine engine;
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 130, 150, 120, 1e-12, 1);
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 100, 70, 90, 1e-12, 5);
    check_small_rows<float>(engine, FERRO_DTYPE_F32, 200, 190, 170, 1e-4, 1);
    // Several 64-row blocks and column tails, in every layout, on every instruction set.
    for (const ferro::cpu::SmallGemmIsa isa : ferro::cpu::small_gemm_isas()) {
        for (int layout = 0; layout < 8; ++layout) {
            const bool b_rows = layout & 1, c_rows = layout & 2;
            const double beta = layout & 4 ? 0.75 : 0.0;
            INFO(ferro::cpu::name_of(isa) << ": B rows " << b_rows << " C rows " << c_rows << " beta " << beta);
            CHECK(check_small_isa<double>(isa, 150, 101, 97, b_rows, c_rows, beta) == 0);
            CHECK(check_small_isa<float>(isa, 150, 101, 97, b_rows, c_rows, beta) == 0);
            // A B of 2.2 MB (f64) taken in column chunks, the last one ending in a tail.
            CHECK(check_small_isa<double>(isa, 20, 1100, 256, b_rows, c_rows, beta) == 0);
            CHECK(check_small_isa<float>(isa, 20, 1100, 256, b_rows, c_rows, beta) == 0);
            // Rows enough for B in panels, in chunks, the last panel padded.
            CHECK(check_small_isa<double>(isa, 70, 1100, 256, b_rows, c_rows, beta) == 0);
            CHECK(check_small_isa<float>(isa, 70, 1101, 256, b_rows, c_rows, beta) == 0);
        }
    }
}

namespace {

const ferro_cpu_context& context_of(CpuEngine& engine) {
    const void* native = nullptr;
    REQUIRE(engine.f().native_context(engine.inst.self, nullptr, &native) == nullptr);
    const auto* ctx = static_cast<const ferro_cpu_context*>(native);
    REQUIRE(FERRO_HAS_FIELD(ctx, ferro_cpu_context, blas_one_thread));
    return *ctx;
}

}  // namespace

TEST_CASE("cpu: the native context names the BLAS the process runs, for plugins to fit their threading to it", "[cpu]") {
    CpuEngine engine;
    const ferro_cpu_context& ctx = context_of(engine);
    REQUIRE(FERRO_HAS_FIELD(&ctx, ferro_cpu_context, blas_version));
    REQUIRE(ctx.blas_name != nullptr);
    REQUIRE(ctx.blas_version != nullptr);
    const ferro::cpu::BlasBackend& b = ferro::cpu::blas_backend();
    CHECK(std::string(ctx.blas_name) == b.name);
    CHECK(std::string(ctx.blas_version) == b.version);
    if (const char* expected = std::getenv("FERRO_EXPECT_BLAS")) CHECK(std::string(ctx.blas_name) == expected);
}

TEST_CASE("cpu: blas_one_thread holds are counted and the last release restores the count", "[cpu]") {
    CpuEngine engine;
    if (!blas_has_threads()) return;
    const ferro_cpu_context& ctx = context_of(engine);
    const int before = blas_threads();
    set_blas_threads(2);
    ctx.blas_one_thread(&ctx, 1);
    CHECK(blas_threads() == 1);
    ctx.blas_one_thread(&ctx, 1);
    ctx.blas_one_thread(&ctx, 0);
    CHECK(blas_threads() == 1);  // one hold is still in place
    ctx.blas_one_thread(&ctx, 0);
    CHECK(blas_threads() == 2);
    ctx.blas_one_thread(&ctx, 0);  // a release without a hold changes nothing
    CHECK(blas_threads() == 2);
    set_blas_threads(before);
}

TEST_CASE("concurrency: cpu engine BLAS holds and fanned-out products from many threads restore the count", "[cpu]") {
    CpuEngine engine;
    if (!blas_has_threads()) return;
    const ferro_cpu_context& ctx = context_of(engine);
    const int before = blas_threads();
    set_blas_threads(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int round = 0; round < 50; ++round) {
                ctx.blas_one_thread(&ctx, 1);
                ctx.blas_one_thread(&ctx, 0);
            }
        });
    }
    check_small_rows<double>(engine, FERRO_DTYPE_F64, 70, 80, 60, 1e-12, 4);
    for (auto& th : threads) th.join();
    CHECK(blas_threads() == 2);
    set_blas_threads(before);
}
