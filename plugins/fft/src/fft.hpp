// The fft family: op table, and the cpu plan around an FFTW plan. The transform a call
// describes (shared by infer, prepare and the rules), with numpy.fft's semantics, is the
// family's public contract (ferro/family/fft.hpp).
#pragma once

#include <ferro/family/fft.hpp>
#include <ferro/rules.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferro::fft {

// The family's contract (ops, attributes, numpy's semantics as Transform): public, since the
// modules of other plugins serve the same family.
using namespace ferro::family::fft;

const ferro_op_schema* schemas();  // Op::count entries

// ---- cpu execution (fft_exec.cpp) ----

struct Plan;  // an FFTW plan for one call signature, plus how to feed it
// `threads`: the engine's thread budget (ferro_engine_target.threads), for FFTW's own threads.
Plan* make_plan(const Transform& t, const ferro_signature& input, int threads, uint64_t* workspace_bytes);
void destroy_plan(Plan* plan);
void execute(const Plan& plan, const ferro_exec_args& args, const void* cpu_context);
// FFTW threads and wisdom: once per process, before any other FFTW call.
void init_fftw();

// ---- autodiff rules (fft_rules.cpp) ----

// Every op is linear: the JVP applies the op to the tangent; the VJP applies the adjoint
// transform (the opposite direction with the dual norm), then the adjoint of the padding or
// truncation, with the Hermitian-symmetry corrections of the real transforms.
ferro_status vjp(Op op, const ferro_host_api* host, const ferro_vjp_args* args);
// The ops the rules call, as the family's FERRO_EXT_RULE_CALLS link declares them: every op,
// in Op order (a JVP applies its own op, a VJP an adjoint transform).
std::span<const char* const> rule_calls();
inline plugin::DeclaredOp rule_op(Op op) { return {static_cast<uint32_t>(op)}; }
ferro_status jvp(Op op, const ferro_host_api* host, const ferro_jvp_args* args);

}  // namespace ferro::fft
