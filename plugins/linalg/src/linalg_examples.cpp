// Sample calls of every linalg op for conformance checks (ferro_module_iface.examples, ABI 1.3;
// ferro-inspect check): inputs each op accepts (well-conditioned, symmetric positive definite,
// Hermitian, LU factors and pivots), batched where the op batches, made with host op calls on
// the requested engine from fixed seeds.
#include "linalg.hpp"

#include <ferro/rules.hpp>

#include <initializer_list>

namespace ferro::linalg {
namespace {

using plugin::TensorRef;

class Samples : public plugin::Rules {
public:
    Samples(const ferro_host_api* host, const ferro_examples_args& a) : Rules(host), a_(a) {}

    TensorRef random(std::initializer_list<int64_t> shape, int64_t seed) const {
        return rand({shape.begin(), shape.size()}, a_.dtype, seed, a_.engine);
    }
    TensorRef eye(int64_t n) const {
        return call(FERRO_CORE_OP_EYE, {},
                    {plugin::attr_i64("n", n), plugin::attr_str("dtype", plugin::dtype_attr_name(a_.dtype)),
                     plugin::attr_str("engine", a_.engine)});
    }
    // random + n I: far from singular.
    TensorRef well_conditioned(std::initializer_list<int64_t> shape, int64_t seed) const {
        const int64_t n = *(shape.end() - 1);
        return add(random(shape, seed), mul(eye(n), scalar(eye(n), static_cast<double>(n))));
    }
    TensorRef hermitian(std::initializer_list<int64_t> shape, int64_t seed) const {
        const TensorRef x = random(shape, seed);
        return add(x, conj(transpose(x)));
    }
    // X X^H + n I.
    TensorRef spd(std::initializer_list<int64_t> shape, int64_t seed) const {
        const int64_t n = *(shape.end() - 1);
        const TensorRef x = random(shape, seed);
        return add(matmul(x, conj(transpose(x))), mul(eye(n), scalar(eye(n), static_cast<double>(n))));
    }

    // Appends one example; returns false when the host's storage is full.
    bool add_example(std::initializer_list<TensorRef*> inputs, std::initializer_list<ferro_named_attr> attrs, const char* what,
                     uint32_t first_input_flags = 0) {
        if (n_ >= a_.capacity) return false;
        ferro_example& e = a_.examples[n_];
        e = {};
        e.input_flags[0] = first_input_flags;
        for (TensorRef* t : inputs) e.inputs[e.n_inputs++] = t->release();
        for (const ferro_named_attr& at : attrs) e.attrs[e.n_attrs++] = at;
        e.what = what;
        ++n_;
        return true;
    }
    uint32_t count() const { return n_; }

private:
    const ferro_examples_args& a_;
    uint32_t n_ = 0;
};

void make(Op op, Samples& s) {
    using plugin::attr_bool;
    using plugin::attr_f64;
    using plugin::attr_str;
    static constexpr int64_t last_axis[] = {-1};
    switch (op) {
        case Op::solve:
        case Op::solve_with_lu: {
            TensorRef A = s.well_conditioned({2, 4, 4}, 1), B = s.random({2, 4, 3}, 2);
            s.add_example({&A, &B}, {}, "batched 4 x 4, 3 right-hand sides");
            TensorRef A2 = s.well_conditioned({4, 4}, 3), b = s.random({4}, 4);
            s.add_example({&A2, &b}, {}, "one vector right-hand side");
            return;
        }
        case Op::inv:
        case Op::det:
        case Op::slogdet:
        case Op::cond: {
            TensorRef A = s.well_conditioned({2, 4, 4}, 5);
            s.add_example({&A}, {}, "batched 4 x 4, well conditioned");
            return;
        }
        case Op::cholesky: {
            TensorRef A = s.spd({2, 4, 4}, 6), U = s.spd({4, 4}, 7);
            s.add_example({&A}, {}, "batched SPD, lower", FERRO_EXAMPLE_HERMITIAN);
            s.add_example({&U}, {attr_bool("upper", true)}, "SPD, upper", FERRO_EXAMPLE_HERMITIAN);
            return;
        }
        case Op::qr: {
            TensorRef tall = s.random({2, 5, 3}, 8), wide = s.random({3, 5}, 9);
            s.add_example({&tall}, {}, "batched tall 5 x 3, reduced");
            s.add_example({&wide}, {}, "wide 3 x 5, reduced");
            return;
        }
        case Op::eigh:
        case Op::eigvalsh: {
            TensorRef H = s.hermitian({2, 4, 4}, 10);
            s.add_example({&H}, {}, "batched Hermitian 4 x 4", FERRO_EXAMPLE_HERMITIAN);
            return;
        }
        case Op::svd: {
            TensorRef A = s.random({2, 5, 3}, 11);
            s.add_example({&A}, {attr_bool("full_matrices", false)}, "batched 5 x 3, thin");
            return;
        }
        case Op::svdvals:
        case Op::pinv:
        case Op::matrix_rank: {
            TensorRef A = s.random({2, 5, 3}, 12);
            s.add_example({&A}, {}, "batched 5 x 3");
            return;
        }
        case Op::triangular_solve: {
            TensorRef A = s.well_conditioned({4, 4}, 13), B = s.random({4, 3}, 14);
            s.add_example({&A, &B}, {attr_bool("upper", true)}, "upper, A X = B");
            TensorRef L = s.well_conditioned({4, 4}, 15), Br = s.random({3, 4}, 16);
            s.add_example({&L, &Br}, {attr_bool("upper", false), attr_bool("left", false)}, "lower, X A = B");
            return;
        }
        case Op::lu_factor:
        case Op::lu: {
            TensorRef A = s.well_conditioned({2, 4, 4}, 17);
            s.add_example({&A}, {}, "batched 4 x 4");
            return;
        }
        case Op::lu_unpack:
        case Op::lu_solve: {
            auto factors = s.call_all("linalg.lu_factor", {s.well_conditioned({2, 4, 4}, 18)});
            if (op == Op::lu_unpack) {
                s.add_example({&factors[0], &factors[1]}, {}, "lu_factor of a batched 4 x 4");
                return;
            }
            TensorRef B = s.random({2, 4, 3}, 19);
            s.add_example({&factors[0], &factors[1], &B}, {}, "lu_factor of a batched 4 x 4, 3 right-hand sides");
            return;
        }
        case Op::eig:
        case Op::eigvals: {
            TensorRef A = s.well_conditioned({4, 4}, 20);
            s.add_example({&A}, {}, "general 4 x 4");
            return;
        }
        case Op::matrix_exp: {
            TensorRef A = s.random({2, 4, 4}, 21);
            s.add_example({&A}, {}, "batched 4 x 4");
            return;
        }
        case Op::vector_norm: {
            TensorRef x = s.random({3, 4}, 22), y = s.random({3, 4}, 23);
            s.add_example({&x}, {}, "2-norm of everything");
            s.add_example({&y}, {attr_f64("ord", 3.0), plugin::attr_i64s("axes", last_axis)}, "3-norm over the last axis");
            return;
        }
        case Op::matrix_norm: {
            TensorRef A = s.random({2, 3, 4}, 24), B = s.random({3, 4}, 25);
            s.add_example({&A}, {}, "batched Frobenius");
            s.add_example({&B}, {attr_str("ord", "nuc")}, "nuclear");
            return;
        }
        case Op::lstsq: {
            TensorRef A = s.random({5, 3}, 26), B = s.random({5, 2}, 27);
            s.add_example({&A, &B}, {}, "overdetermined 5 x 3");
            return;
        }
        case Op::inverse_gaps: {
            TensorRef x = s.random({2, 5}, 28);
            s.add_example({&x}, {}, "batched, 5 values");
            return;
        }
        case Op::count: return;
    }
}

}  // namespace

ferro_status examples(void*, const ferro_host_api* host, ferro_examples_args* args) {
    return plugin::guard(host, [&] {
        if (args->op_index >= static_cast<uint32_t>(Op::count)) return;
        Samples s(host, *args);
        make(static_cast<Op>(args->op_index), s);
        args->n_examples = s.count();
    });
}

}  // namespace ferro::linalg
