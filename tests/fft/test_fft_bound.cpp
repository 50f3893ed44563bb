// fft through bound calls and into destinations: the same plans as the eager calls, so the
// same values; a destination FFTW's plan cannot write (at an offset, misaligned, strided, or
// the input itself) goes through a copy instead of reaching FFTW.
#include "fft_test.hpp"

#include <ferro/ferro.h>

#include <cstdlib>
#include <thread>

using namespace ferro;
using namespace ferro::test;

namespace {

uint64_t allocations(const Runtime& rt) { return rt.engine_memory().allocations; }

std::vector<cd> values(const Tensor& t) { return Array::of(t).v; }

// A tensor over host memory the test owns, `offset_bytes` past a 64-byte boundary.
struct HostBuffer {
    explicit HostBuffer(size_t bytes) : raw(static_cast<char*>(std::aligned_alloc(64, bytes + 64))) {}
    ~HostBuffer() { std::free(raw); }
    Tensor tensor(const Runtime& rt, DType dtype, const Shape& shape, size_t offset_bytes) const {
        ferro_tensor t = nullptr;
        check(ferro_tensor_borrow_host(rt.get(), static_cast<ferro_dtype>(dtype), static_cast<int32_t>(shape.size()),
                                       shape.data(), nullptr, raw + offset_bytes, nullptr, nullptr, &t));
        return {rt.ref(), t};
    }
    char* raw;
};

}  // namespace

TEST_CASE("fft bound calls: every kind of transform, bound and written into, equals the eager call", "[fft]") {
    const Runtime rt = fft_runtime();
    for (DType dtype : all_dtypes) {
        INFO(name_of(dtype));
        const bool complex = is_complex(dtype);
        const Tensor x = random_signal(rt, {3, 16}, dtype, 11);
        struct Case {
            const char* op;
            Attrs attrs;
            Tensor eager;
        };
        std::vector<Case> cases;
        cases.push_back({"fft.fft", {Attr("norm", "ortho")}, fft::fft(x, std::nullopt, -1, "ortho")});
        cases.push_back({"fft.ifft", {Attr("n", int64_t{21}), Attr("axis", int64_t{0})}, fft::ifft(x, 21, 0)});
        cases.push_back({"fft.fft2", {Attr("s", Shape{4, 9})}, fft::fft2(x, std::vector<int64_t>{4, 9})});
        if (complex) {
            cases.push_back({"fft.irfft", {Attr("n", int64_t{29})}, fft::irfft(x, 29)});
            cases.push_back({"fft.hfft", {}, fft::hfft(x)});
        } else {
            cases.push_back({"fft.rfft", {Attr("norm", "forward")}, fft::rfft(x, std::nullopt, -1, "forward")});
            cases.push_back({"fft.rfftn", {}, fft::rfftn(x)});
            cases.push_back({"fft.ihfft", {}, fft::ihfft(x)});
        }
        for (const Case& c : cases) {
            INFO(c.op);
            const BoundOp bound(rt, c.op, c.attrs);
            const std::vector<cd> want = values(c.eager);
            CHECK(values(bound(x)) == want);
            Tensor out = rt.zeros(c.eager.shape(), c.eager.dtype());
            bound.into(out, x);
            CHECK(values(out) == want);
            Tensor eager_out = rt.zeros(c.eager.shape(), c.eager.dtype());  // through ferro_op_call
            call_into(rt, c.op, {x}, {eager_out}, c.attrs);
            CHECK(values(eager_out) == want);
        }
    }
}

TEST_CASE("fft into: FFTW writes an aligned destination itself, and any other through a copy", "[fft]") {
    const Runtime rt = fft_runtime();
    const int64_t n = 1024;
    const Tensor x = random_signal(rt, {n}, DType::c64, 21);
    const std::vector<cd> want = values(fft::fft(x));
    const BoundOp f(rt, "fft.fft");
    const double tol = 1e-4;

    Tensor out = rt.zeros({n}, DType::c64);
    f.into(out, x);
    const uint64_t before = allocations(rt);
    f.into(out, x);
    CHECK(allocations(rt) == before);  // straight into `out`: FFTW's plan made no fresh output
    check_close(values(out), want, 0, 0);

    // The application's memory: at a 64-byte boundary it is written directly; 8 bytes past one
    // (misaligned for FFTW's SIMD codelets) through a fresh output and a copy.
    const HostBuffer host(static_cast<size_t>(n) * 8);
    for (size_t offset : {size_t{0}, size_t{8}}) {
        INFO("host memory " << offset << " bytes past a 64-byte boundary");
        Tensor dst = host.tensor(rt, DType::c64, {n}, offset);
        const uint64_t start = allocations(rt);
        f.into(dst, x);
        CHECK(allocations(rt) - start == (offset == 0 ? 0 : 1));
        check_close(values(dst), want, tol, tol);
    }

    // A row of a matrix past its start, and every other element of a longer vector.
    Tensor rows = rt.zeros({2, n}, DType::c64);
    f.into(rows.slice(0, 1, 2).reshape({n}), x);
    const std::vector<cd> got = values(rows);
    CHECK(std::vector<cd>(got.begin(), got.begin() + n) == std::vector<cd>(static_cast<size_t>(n)));
    check_close(std::vector<cd>(got.begin() + n, got.end()), want, tol, tol);
    Tensor wide = rt.zeros({2 * n}, DType::c64);
    f.into(wide.slice(0, 0, 2 * n, 2), x);
    const std::vector<cd> w = values(wide);
    for (int64_t i = 0; i < n; ++i) {
        CHECK(w[static_cast<size_t>(2 * i + 1)] == cd{});
        CHECK(std::abs(w[static_cast<size_t>(2 * i)] - want[static_cast<size_t>(i)]) <=
              tol * (1 + std::abs(want[static_cast<size_t>(i)])));
    }

    // In place: FFTW's out-of-place plan never sees its input as its output.
    Tensor y = x.neg().neg();
    f.into(y, y);
    check_close(values(y), want, tol, tol);
    const Tensor big = random_signal(rt, {4, 4096}, DType::c128, 22);
    const std::vector<cd> big_want = values(fft::fft(big));
    Tensor z = big.neg().neg();
    f.into(z, z);
    check_close(values(z), big_want, 1e-12, 1e-12);

    check_error([&] { f.into(rt.zeros({n}, DType::c128), x); }, FERRO_INVALID_ARGUMENT,
                "fft.fft: out tensor 0 is c128, the output is c64");
}

TEST_CASE("concurrency: one bound fft call run from several threads, on two signatures", "[fft][concurrency]") {
    const Runtime rt = fft_runtime();
    const BoundOp f(rt, "fft.fft", {Attr("norm", "ortho")});
    const Tensor a = random_signal(rt, {4, 64}, DType::c128, 31), b = random_signal(rt, {96}, DType::c128, 32);
    const std::vector<cd> want_a = values(fft::fft(a, std::nullopt, -1, "ortho"));
    const std::vector<cd> want_b = values(fft::fft(b, std::nullopt, -1, "ortho"));
    std::vector<int> wrong(4, -1);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            int bad = 0;
            Tensor out = rt.zeros({96}, DType::c128);
            for (int i = 0; i < 50; ++i) {
                // Threads alternate the signatures, so the bound call's last run keeps changing.
                if ((i + t) % 2 == 0) {
                    bad += values(f(a)) != want_a;
                } else {
                    f.into(out, b);
                    bad += values(out) != want_b;
                }
            }
            wrong[static_cast<size_t>(t)] = bad;
        });
    }
    for (std::thread& th : threads) th.join();
    for (int bad : wrong) CHECK(bad == 0);
}
