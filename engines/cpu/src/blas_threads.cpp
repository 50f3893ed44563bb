#include "blas_threads.hpp"

#include "blas_backend.hpp"

#include <mutex>

namespace ferro::cpu {
namespace {

std::mutex mutex;
int holds = 0;
int restore = 1;  // the count the first hold found

}  // namespace

void hold_one_blas_thread() {
    const BlasBackend& blas = blas_backend();
    std::lock_guard lock(mutex);
    if (holds++ == 0 && blas.get_threads != nullptr) {
        restore = blas.get_threads();
        if (restore > 1) blas.set_threads(1);
    }
}

void release_one_blas_thread() {
    const BlasBackend& blas = blas_backend();
    std::lock_guard lock(mutex);
    if (holds == 0) return;
    if (--holds == 0 && restore > 1 && blas.set_threads != nullptr) blas.set_threads(restore);
}

}  // namespace ferro::cpu
