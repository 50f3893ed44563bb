// When the cpu module holds the BLAS at one thread (plugins/linalg/src/blas_holds.hpp): per
// implementation, up to the sizes measured for each routine, and always when a batch fans out.
#include "blas_holds.hpp"

#include <catch2/catch.hpp>

using ferro::linalg::holds_one_blas_thread;
using ferro::linalg::one_thread_max;
using ferro::linalg::ThreadedRoutine;

TEST_CASE("linalg: BLAS holds follow the implementation the process runs and each routine's measured sizes", "[linalg]") {
    using enum ThreadedRoutine;
    for (const ThreadedRoutine r : {gesdd, syevd, geev, geqrf, potrf, getrf}) {
        const auto max = one_thread_max(r);
        CHECK(holds_one_blas_thread(r, max.openblas, false, "OpenBLAS"));
        CHECK_FALSE(holds_one_blas_thread(r, max.openblas + 1, false, "OpenBLAS"));
        CHECK(holds_one_blas_thread(r, max.mkl + 1, false, "MKL") == false);
        if (max.mkl > 0) CHECK(holds_one_blas_thread(r, max.mkl, false, "MKL"));
        // No thread count to hold, whatever the size; but a batch spread over the pool holds.
        for (const char* blas : {"BLIS", "reference BLAS", "unknown BLAS"}) {
            CHECK_FALSE(holds_one_blas_thread(r, 8, false, blas));
            CHECK(holds_one_blas_thread(r, 8, true, blas));
        }
        CHECK(holds_one_blas_thread(r, 100000, true, "OpenBLAS"));
    }
    // OpenBLAS 0.3.21 threads every reduction badly below n ~ 400; MKL's syevd and getrf do not.
    CHECK(holds_one_blas_thread(syevd, 64, false, "OpenBLAS"));
    CHECK_FALSE(holds_one_blas_thread(syevd, 64, false, "MKL"));
    CHECK_FALSE(holds_one_blas_thread(getrf, 64, false, "MKL"));
    CHECK(holds_one_blas_thread(potrf, 256, false, "MKL"));
    // A plan with no routine of that kind (inv, matmul-like ops) keeps the threads.
    CHECK_FALSE(holds_one_blas_thread(none, 8, false, "OpenBLAS"));
    CHECK_FALSE(holds_one_blas_thread(none, 8, false, "MKL"));
}
