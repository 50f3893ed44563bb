// The cpu module's prepare and execute for every op: the family's geometry, then the op's own
// configure (op_row.hpp); at run time its whole-call executor or its kernel over the batch.
#include "cpu_exec.hpp"
#include "op_row.hpp"

#include <algorithm>

namespace ferro::linalg {
namespace {

// A hold on the engine's BLAS at one thread (ABI 1.2; older hosts: no hold) for the scope.
class OneBlasThread {
public:
    OneBlasThread(const void* native, bool wanted) {
        const auto* ctx = static_cast<const ferro_cpu_context*>(native);
        if (wanted && ctx != nullptr && FERRO_HAS_FIELD(ctx, ferro_cpu_context, blas_one_thread) &&
            ctx->blas_one_thread != nullptr) {
            ctx_ = ctx;
            ctx_->blas_one_thread(ctx_, 1);
        }
    }
    ~OneBlasThread() {
        if (ctx_ != nullptr) ctx_->blas_one_thread(ctx_, 0);
    }
    OneBlasThread(const OneBlasThread&) = delete;
    OneBlasThread& operator=(const OneBlasThread&) = delete;

private:
    const ferro_cpu_context* ctx_ = nullptr;
};

}  // namespace

bool holds_one_blas_thread(const Plan& p, const void* cpu_context) {
    const auto* ctx = static_cast<const ferro_cpu_context*>(cpu_context);
    if (ctx == nullptr) return false;
    const bool named = FERRO_HAS_FIELD(ctx, ferro_cpu_context, blas_name) && ctx->blas_name != nullptr;
    return holds_one_blas_thread(p.threaded_routine, std::max(p.m, p.n), fans_out(p, *ctx), named ? ctx->blas_name : "OpenBLAS");
}

void ask_column_major(const ferro_prepare_args& args, uint32_t i) {
    if (!FERRO_HAS_FIELD(&args, ferro_prepare_args, output_strides) || args.output_strides == nullptr) return;
    const ferro_signature& s = args.outputs[i];
    int64_t* strides = args.output_strides + static_cast<size_t>(i) * FERRO_MAX_NDIM;
    const int nd = s.ndim;
    strides[nd - 2] = 1;
    strides[nd - 1] = std::max<int64_t>(s.shape[nd - 2], 1);
    int64_t step = strides[nd - 1] * std::max<int64_t>(s.shape[nd - 1], 1);
    for (int d = nd - 3; d >= 0; --d) {
        strides[d] = step;
        step *= std::max<int64_t>(s.shape[d], 1);
    }
}

Plan make_plan(Op op, const ferro_prepare_args& args) {
    const OpRow& row = op_row(op);
    Plan p;
    static_cast<Geometry&>(p) = read_geometry(op, args);
    p.op = op;
    p.dtype = args.inputs[0].dtype;
    p.matrix_dims.assign(args.n_inputs, 2);
    constexpr int64_t lapack_max = std::numeric_limits<lapack_int>::max();
    if (row.cpu.kernels && (p.m > lapack_max || p.n > lapack_max || p.k > lapack_max || p.m * p.n > lapack_max)) {
        invalid(op, "input 0 has shape " + shape_str(dims(args.inputs[0])) + ", larger than LAPACK's 32-bit indices allow");
    }
    row.cpu.configure(p, args);
    // Never a NULL workspace; a cache line of slack after the last array for BLAS's overreads
    // (lapack::kOverreadPad).
    p.scratch_bytes += 64;
    return p;
}

void execute(const Plan& plan, const ferro_exec_args& args, const void* cpu_context) {
    const CpuExecutor& exec = op_row(plan.op).cpu;
    if (exec.whole != nullptr) return exec.whole(plan, args);
    if (plan.count == 0) return;
    const OneBlasThread threads(cpu_context, holds_one_blas_thread(plan, cpu_context));
    visit_float(plan.dtype, [&](auto t) {
        using T = decltype(t);
        MatrixCall<T>(plan, args).run(exec.kernels.get<T>(), exec.runs_on_empty, cpu_context, args.workspace);
    });
}

}  // namespace ferro::linalg
