// The conformance library (tools/conformance) in Catch2 terms, for the engine suites (vulkan,
// cuda): a part of the engine suite as a test, where each finding fails the test, and "this
// result on the engine is the cpu engine's" for the suites' own cases.
#pragma once

#include "ferro_test.hpp"

#include <catch2/catch.hpp>
#include <conformance.hpp>

#include <string>

namespace ferro::test {

using conformance::engine_dtypes;
using conformance::kBinaryOps;
using conformance::kUnaryOps;
using conformance::seeded_input;
inline constexpr const auto& kEngineDtypes = conformance::kDtypes;

inline bool is_single_dtype(DType d) { return detail::is_single(d); }

// Runs `part(rt, report)` on `engine`; every finding fails the test, and the part must have
// checked something.
template <class Part> void expect_conformant(const Runtime& rt, const std::string& engine, Part&& part) {
    conformance::Report report(rt, engine);
    part(rt, report);
    for (const auto& f : report.findings()) {
        INFO(f.what);
        FAIL_CHECK(f.why);
    }
    CHECK(report.checks() > 0);
}

// The result on `engine`, brought to the cpu, equals the cpu result (the suite's elementwise
// tolerance of `dtype`).
inline void check_same_on(const std::string& engine, const Tensor& got_on_engine, const Tensor& on_cpu, DType dtype) {
    REQUIRE(got_on_engine.engine() == engine);
    const conformance::Difference d =
        conformance::difference({got_on_engine}, {on_cpu}, conformance::elementwise_tolerance(dtype));
    INFO(d.why);
    CHECK(d.ok);
}

}  // namespace ferro::test
