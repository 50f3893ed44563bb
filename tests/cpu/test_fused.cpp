// The cpu engine's fused elementwise kernel through the engine ABI: a program gives what its
// instructions give run one by one with the unary and binary kernels, over every layout the
// strided loop walks, and a malformed program is refused with the reason.
#include "cpu_fixture.hpp"

#include <cmath>
#include <numeric>
#include <string>

using namespace ferro::test;

namespace {

ferro_tensor_view view_of(std::vector<double>& data, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
    return view(data, FERRO_DTYPE_F64, shape, strides);
}

}  // namespace

TEST_CASE("cpu fused: a program equals its instructions run one by one, broadcast and strided operands included", "[cpu]") {
    CpuEngine e;
    ferro_engine_session s = nullptr;
    REQUIRE(e.f().session_begin(e.inst.self, &s) == nullptr);
    for (const int64_t rows : {int64_t{3}, int64_t{700}}) {  // 700 x 97: on the pool, several blocks per run
        const int64_t cols = 97, n = rows * cols;
        const std::vector<int64_t> shape{rows, cols}, dense{cols, 1}, transposed{1, rows}, row{0, 1};
        std::vector<double> x(n), xt(n), bias(cols), out0(n), out1(n);
        std::iota(x.begin(), x.end(), -0.5 * double(n));
        for (double& v : x) v /= double(n);
        for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < cols; ++j) xt[j * rows + i] = x[i * cols + j];  // x again, column-major
        }
        for (int64_t j = 0; j < cols; ++j) bias[j] = 0.01 * double(j);
        // out0 = tanh(x * xt + bias); out1 = exp(out0) - x, with one temporary reused in place.
        const ferro_tensor_view inputs[3] = {view_of(x, shape, dense), view_of(xt, shape, transposed), view_of(bias, shape, row)};
        const ferro_tensor_view outputs[2] = {view_of(out0, shape, dense), view_of(out1, shape, dense)};
        const ferro_fused_instr program[] = {
            {FERRO_FUSED_BINARY, FERRO_BINARY_MUL, 5, 0, 1, 0}, {FERRO_FUSED_BINARY, FERRO_BINARY_ADD, 5, 5, 2, 0},
            {FERRO_FUSED_UNARY, FERRO_UNARY_TANH, 3, 5, 0, 0},  {FERRO_FUSED_UNARY, FERRO_UNARY_EXP, 5, 3, 0, 0},
            {FERRO_FUSED_BINARY, FERRO_BINARY_SUB, 4, 5, 0, 0},
        };
        const ferro_fused_args args{sizeof args, FERRO_DTYPE_F64, 3, 2, 1, 5, inputs, outputs, program};
        REQUIRE(e.f().elementwise_fused(e.inst.self, s, &args) == nullptr);

        std::vector<double> t(n), want0(n), want1(n);  // the same, op by op
        const auto run1 = [&](uint32_t op, ferro_tensor_view in, ferro_tensor_view o) {
            const ferro_unary_args u{sizeof u, op, in, o};
            REQUIRE(e.f().unary(e.inst.self, s, &u) == nullptr);
        };
        const auto run2 = [&](uint32_t op, ferro_tensor_view a, ferro_tensor_view b, ferro_tensor_view o) {
            const ferro_binary_args bin{sizeof bin, op, a, b, o};
            REQUIRE(e.f().binary(e.inst.self, s, &bin) == nullptr);
        };
        run2(FERRO_BINARY_MUL, inputs[0], inputs[1], view_of(t, shape, dense));
        run2(FERRO_BINARY_ADD, view_of(t, shape, dense), inputs[2], view_of(t, shape, dense));
        run1(FERRO_UNARY_TANH, view_of(t, shape, dense), view_of(want0, shape, dense));
        run1(FERRO_UNARY_EXP, view_of(want0, shape, dense), view_of(t, shape, dense));
        run2(FERRO_BINARY_SUB, view_of(t, shape, dense), inputs[0], view_of(want1, shape, dense));
        CHECK(out0 == want0);
        CHECK(out1 == want1);
        CHECK(std::abs(out0[5] - std::tanh(x[5] * x[5] + bias[5])) < 1e-15);
    }
    REQUIRE(e.f().session_end(e.inst.self, s, 1) == nullptr);
}

TEST_CASE("cpu fused: a malformed program or an op the kernels refuse is an error naming it", "[cpu]") {
    CpuEngine e;
    ferro_engine_session s = nullptr;
    REQUIRE(e.f().session_begin(e.inst.self, &s) == nullptr);
    std::vector<double> x{1, 2, 3}, y(3);
    const std::vector<int64_t> shape{3}, strides{1};
    const ferro_tensor_view in = view_of(x, shape, strides), out = view_of(y, shape, strides);
    const auto status_of = [&](const ferro_fused_instr& instr) {
        const ferro_fused_args args{sizeof args, FERRO_DTYPE_F64, 1, 1, 0, 1, &in, &out, &instr};
        return take_status(e.host.api, e.f().elementwise_fused(e.inst.self, s, &args)).message;
    };
    CHECK(status_of({FERRO_FUSED_UNARY, FERRO_UNARY_NEG, 0, 0, 0, 0}).find("instruction 0") !=
          std::string::npos);  // writes an input
    CHECK(status_of({FERRO_FUSED_UNARY, FERRO_UNARY_NEG, 1, 7, 0, 0}).find("instruction 0") !=
          std::string::npos);                                                                       // reads nothing
    CHECK(status_of({9, FERRO_UNARY_NEG, 1, 0, 0, 0}).find("instruction 0") != std::string::npos);  // no such kind
    CHECK(status_of({FERRO_FUSED_BINARY, FERRO_BINARY_LT, 1, 0, 0, 0}).find("changes the dtype") != std::string::npos);  // bool
    CHECK(status_of({FERRO_FUSED_UNARY, FERRO_UNARY_NEG, 1, 0, 0, 0}).empty());
    CHECK(y == std::vector<double>{-1, -2, -3});
    REQUIRE(e.f().session_end(e.inst.self, s, 1) == nullptr);
}
