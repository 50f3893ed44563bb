// The process's BLAS thread count, owned by the cpu engine, through the backend's own control
// (blas_backend.hpp; a backend without one is left as it is).
//
// OpenBLAS has only a process-wide thread count (openblas_set_num_threads_local came in
// 0.3.27; Debian ships 0.3.21), and threads hurt at some sizes: its LAPACK reductions run
// 1.2-2.5x slower threaded below n ~ 400 on two cores, and a batch of mid-sized products runs
// faster one product per pool thread than one after another with BLAS threading each. Holds
// are counted: the first one sets one thread, the last release restores the count the first
// found, however holds from the engine and from plugins (ferro_cpu_context.blas_one_thread)
// overlap. Meanwhile every BLAS call of the process runs on one thread.
#pragma once

namespace ferro::cpu {

void hold_one_blas_thread();
void release_one_blas_thread();  // a release without a hold is ignored

// A hold for the scope, when `wanted`.
class OneBlasThread {
public:
    explicit OneBlasThread(bool wanted = true) : held_(wanted) {
        if (held_) hold_one_blas_thread();
    }
    ~OneBlasThread() {
        if (held_) release_one_blas_thread();
    }
    OneBlasThread(const OneBlasThread&) = delete;
    OneBlasThread& operator=(const OneBlasThread&) = delete;

private:
    bool held_;
};

}  // namespace ferro::cpu
