// The conformance library: "the same call on this engine gives the cpu engine's answer", for
// any engine, through the public API only. One implementation serves the engine test suites
// (tests/vulkan, tests/cuda: a finding fails the test) and `ferro-inspect check` (a finding is
// a message of the row): the engine suite for an engine plugin's engines, and the op examples
// of a family plugin's ops.
#pragma once

#include <ferro/ferro.hpp>
#include <ferro/gradcheck.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

namespace ferro::conformance {

inline constexpr DType kDtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128, DType::i64, DType::boolean};

// The dtypes `engine` reports (empty when there is no such engine).
std::set<DType> engine_dtypes(const Runtime& rt, const std::string& engine);
// Seeded values of `dtype` on the cpu: reals and complexes in (-0.9, 0.9), integers in
// [-20, 20], booleans in a pattern.
Tensor seeded_input(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed);

// Element by element (real and imaginary parts each): NaN where the reference has NaN, the
// same infinities, else |got - want| <= atol + rtol |want|; with `scaled`, atol is multiplied
// by max(1, the reference's largest magnitude) (a normwise bound, for results computed through
// long sums: transforms, factorisations).
struct Tolerance {
    double rtol = 0, atol = 0;
    bool scaled = false;
};
// An engine's core ops against the cpu engine's: 2e-5 in single precision, 1e-12 in double.
Tolerance elementwise_tolerance(DType dtype);
// An op's examples against the cpu engine's: normwise 1e-4 in single precision, 1e-10 in double.
Tolerance computed_tolerance(DType dtype);

struct Difference {
    bool ok = true;
    double error = 0;  // max |got - want| / max(1, max |want|) over the outputs
    std::string why;   // the first difference beyond the tolerance, or the shape or dtype that differs
};
// `got` (on any engine) against `want` (on the cpu).
Difference difference(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const Tolerance& tolerance);

// What one run of checks on an engine found.
class Report {
public:
    Report(const Runtime& rt, std::string engine);
    const std::string& engine() const { return engine_; }
    bool has(DType d) const { return dtypes_.count(d) != 0; }

    // `got` (a result on the engine) equals `want` (the cpu engine's) within the elementwise
    // tolerance of `dtype`.
    void same(const std::string& what, const Tensor& got, const Tensor& want, DType dtype);
    // `f` on the cpu input and on its copy on the engine; skipped when the cpu engine refuses
    // it too, a finding when only the engine refuses it.
    void compare(const std::string& what, DType dtype, const std::function<Tensor(const Tensor&)>& f, const Tensor& x_cpu);
    void gradcheck(const std::string& what, const GradcheckResult& result);
    // Runs `body` (a group of checks, `what`: "matmul and einsum in f32"); an error it throws is
    // a finding, and the next group runs.
    void attempt(const std::string& what, const std::function<void()>& body);
    void fail(const std::string& what, const std::string& why);

    struct Finding {
        std::string what, why;
    };
    const std::vector<Finding>& findings() const { return findings_; }
    size_t checks() const { return checks_; }
    double max_error() const { return max_error_; }

private:
    std::string engine_;
    std::set<DType> dtypes_;
    std::vector<Finding> findings_;
    size_t checks_ = 0;
    double max_error_ = 0;
};

// The core ops the suite runs on every engine, unary and binary.
inline constexpr const char* kUnaryOps[] = {
    "neg",    "conj",    "abs",  "exp",        "log",    "sin",   "cos",   "tan",         "tanh",  "sqrt",   "rsqrt",
    "sign",   "real",    "imag", "reciprocal", "square", "expm1", "log1p", "sinh",        "cosh",  "arcsin", "arccos",
    "arctan", "sigmoid", "erf",  "floor",      "ceil",   "round", "angle", "logical_not", "isnan", "isinf",  "isfinite"};
inline constexpr const char* kBinaryOps[] = {"add", "sub", "mul", "div", "pow", "maximum",     "minimum",    "arctan2", "eq",
                                             "ne",  "lt",  "le",  "gt",  "ge",  "logical_and", "logical_or", "complex"};

// ---- the engine suite (engine_suite.cpp): core ops, products, einsum and gradients on the
// report's engine against the cpu engine, in every dtype the engine reports.

// zeros, ones, full, the round trip, permuted, sliced and broadcast copies, and every cast.
void fill_and_casts(const Runtime& rt, Report& r);
// Every unary op on dense and strided inputs.
void unary(const Runtime& rt, Report& r);
// Every binary op with broadcasting, where, and integer division and powers at numpy's edges.
void binary(const Runtime& rt, Report& r);
// Every reduction over several axis sets, on 3-d inputs of each of `shapes` (an engine's suite
// picks shapes that reach each of its reduction strategies).
void reductions(const Runtime& rt, Report& r, std::initializer_list<Shape> shapes);
// matmul on every operand layout and einsum chains, batches, column-major results, diagonals.
void products(const Runtime& rt, Report& r);
// Gradients through the engine's tensors against finite differences, in each of `dtypes`.
void gradients(const Runtime& rt, Report& r, std::initializer_list<DType> dtypes);
// NaN, infinities and out-of-range floats cast to i64, and the angle of NaN.
void special_casts(const Runtime& rt, Report& r);

struct SuitePart {
    const char* name;
    std::function<void(const Runtime&, Report&)> run;
};
// Every part with general shapes and dtypes: what `ferro-inspect check` runs on an engine.
std::vector<SuitePart> engine_suite();

// ---- op examples (op_examples.cpp): a family's sample calls on an engine.

struct OpCheck {
    std::string status = "pass";  // "pass" | "fail" | "not checked"
    size_t examples = 0;
    bool gradchecked = false;
    double max_error = 0;
    std::vector<std::string> messages;
};
// The examples of `op` in `dtype` on `engine`: against the cpu engine's results (on the cpu
// engine: a second run must agree exactly); in f64 (and c128 unless quick), on the cpu, every
// differentiable output gradchecked with respect to every differentiable input. `quick`: the
// first example only.
OpCheck check_op_examples(const Runtime& rt, const OpInfo& op, DType dtype, const std::string& engine, bool quick);

}  // namespace ferro::conformance
