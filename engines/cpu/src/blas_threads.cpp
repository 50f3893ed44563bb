#include "blas_threads.hpp"

#include <cblas.h>

#include <mutex>

namespace ferro::cpu {
namespace {

std::mutex mutex;
int holds = 0;
int restore = 1;  // the count the first hold found

}  // namespace

void hold_one_blas_thread() {
    std::lock_guard lock(mutex);
    if (holds++ == 0) {
        restore = openblas_get_num_threads();
        if (restore > 1) openblas_set_num_threads(1);
    }
}

void release_one_blas_thread() {
    std::lock_guard lock(mutex);
    if (holds == 0) return;
    if (--holds == 0 && restore > 1) openblas_set_num_threads(restore);
}

}  // namespace ferro::cpu
