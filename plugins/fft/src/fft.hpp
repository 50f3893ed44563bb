// The fft family: op table, the transform a call describes (shared by infer, prepare and the
// rules), and the cpu plan around an FFTW plan. numpy.fft semantics throughout: `n`/`s` pad
// with zeros or truncate each transformed axis before the transform, the last axis of
// `axes` is the halved one of the real transforms, and `norm` is backward | ortho | forward.
#pragma once

#include <ferro/rules.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferro::fft {

// Index of each op in the family's schema table (fft_schemas.cpp keeps the same order).
enum class Op : uint32_t { fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2, irfft2, fftn, ifftn, rfftn, irfftn, count };

const ferro_op_schema* schemas();  // Op::count entries
std::string qualified(Op op);      // "fft.rfft"

// complex -> complex, real -> half spectrum, half spectrum -> real.
enum class Kind { c2c, r2c, c2r };
enum class Norm { backward, ortho, forward };
enum class Planner { estimate, measure, patient, exhaustive };

const char* norm_name(Norm norm);
// numpy's _swap_direction: backward <-> forward, ortho stays. It is also the norm of the
// adjoint transform (the adjoint of a scaling by c is the same scaling).
inline Norm dual(Norm norm) {
    return norm == Norm::backward ? Norm::forward : norm == Norm::forward ? Norm::backward : Norm::ortho;
}

// A call as the transform it is, validated (bad input throws INVALID_ARGUMENT naming the op).
struct Transform {
    Op op = Op::count;
    Kind kind = Kind::c2c;
    bool inverse = false;   // scaled by 1/N under norm "backward" (ifft*, irfft*, ihfft)
    int sign = -1;          // exponent sign of the DFT FFTW computes (c2c: +1 for ifft*)
    bool conj_in = false;   // hfft: irfft of conj(x)
    bool conj_out = false;  // ihfft: conj of rfft(x)
    Norm norm = Norm::backward;
    Planner planner = Planner::estimate;
    ferro_dtype in_dtype = FERRO_DTYPE_INVALID;    // as given
    ferro_dtype work_dtype = FERRO_DTYPE_INVALID;  // what FFTW reads: complex, or real for r2c
    ferro_dtype out_dtype = FERRO_DTYPE_INVALID;
    std::vector<int64_t> in_shape;   // the input's
    std::vector<int64_t> fit_shape;  // after padding / truncation (c2r: last axis n/2 + 1)
    std::vector<int64_t> out_shape;
    std::vector<int64_t> axes;       // normalised, in the order given: the last is halved (r2c, c2r)
    std::vector<int64_t> lengths;    // logical transform length per axis (numpy's s)
    double scale = 1;                // applied to the output

    int64_t logical_size() const;    // N: product of lengths
    int64_t half_len() const { return lengths.back() / 2 + 1; }  // the halved axis' half spectrum
};

Transform describe(Op op, const ferro_attr_value* attrs, const ferro_signature& input);

// ---- cpu execution (fft_exec.cpp) ----

struct Plan;  // an FFTW plan for one call signature, plus how to feed it
Plan* make_plan(const Transform& t, const ferro_signature& input, uint64_t* workspace_bytes);
void destroy_plan(Plan* plan);
void execute(const Plan& plan, const ferro_exec_args& args, const void* cpu_context);
// FFTW threads and wisdom: once per process, before any other FFTW call.
void init_fftw();

// ---- autodiff rules (fft_rules.cpp) ----

// Every op is linear: the JVP applies the op to the tangent; the VJP applies the adjoint
// transform (the opposite direction with the dual norm), then the adjoint of the padding or
// truncation, with the Hermitian-symmetry corrections of the real transforms.
ferro_status vjp(Op op, const ferro_host_api* host, const ferro_vjp_args* args);
ferro_status jvp(Op op, const ferro_host_api* host, const ferro_jvp_args* args);

}  // namespace ferro::fft
