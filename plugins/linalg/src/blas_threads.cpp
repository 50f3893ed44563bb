#include "blas_threads.hpp"

#include <cblas.h>

#include <mutex>

namespace ferro::linalg {
namespace {

std::mutex mutex;
int users = 0;     // guards alive
int restore = 1;   // the thread count the first one found

}  // namespace

SingleThreadedBlas::SingleThreadedBlas(bool wanted) {
    if (!wanted) return;
    std::lock_guard lock(mutex);
    if (users++ == 0) {
        restore = openblas_get_num_threads();
        if (restore > 1) openblas_set_num_threads(1);
    }
    active_ = true;
}

SingleThreadedBlas::~SingleThreadedBlas() {
    if (!active_) return;
    std::lock_guard lock(mutex);
    if (--users == 0 && restore > 1) openblas_set_num_threads(restore);
}

}  // namespace ferro::linalg
