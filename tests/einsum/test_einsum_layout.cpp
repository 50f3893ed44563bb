// einsum's compiled programs, as the trace log shows them: an intermediate is laid out as the
// contraction that reads it wants, so that it is not packed (copied) there.
#include "einsum_test.hpp"

#include <mutex>
#include <regex>

using namespace ferro;
using namespace ferro::test;

namespace {

// The steps the einsum plugin logs at trace level ("step 3: copy [4, 16] strides ...",
// "step 4: gemm batch ..."): how many gemms, and the element count of each copy.
struct LoggedSteps {
    std::mutex mutex;
    int gemms = 0;
    std::vector<int64_t> sizes;
};

void record_steps(void* user, uint32_t, const char*, const char* message) {
    static const std::regex copy(R"(step \d+: copy \[([0-9, ]*)\])"), gemm(R"(step \d+: gemm )");
    auto* steps = static_cast<LoggedSteps*>(user);
    if (std::regex_search(message, gemm)) {
        std::lock_guard lock(steps->mutex);
        ++steps->gemms;
    }
    std::cmatch m;
    if (!std::regex_search(message, m, copy)) return;
    int64_t n = 1;
    const std::string shape = m[1].str();
    for (size_t at = 0; at < shape.size();) {
        const size_t end = std::min(shape.find(',', at), shape.size());
        n *= std::stoll(shape.substr(at, end - at));
        at = end + 1;
    }
    std::lock_guard lock(steps->mutex);
    steps->sizes.push_back(n);
}

}  // namespace

TEST_CASE(
    "einsum layout: an intermediate is laid out as the contraction that reads it wants, its partner made before or after it",
    "[einsum]") {
    // As in lm_batch_likelihood_brackets: T = X Y is a batch (L) of products [a b] x [c d];
    // the step that reads T sums a, b and d against P (made from P1 and P2) and keeps L and
    // c. T laid out [L, a, b, c, d] has no strided dimension for (L, c) and would be packed
    // there; laid out [L, c, d, a, b] it is read as it is (a transposed operand of that
    // gemm). Made after T, P follows T's order; made before, T follows P's.
    LoggedSteps steps;
    const Runtime rt = einsum_runtime_logging(FERRO_LOG_TRACE, record_steps, &steps);

    const Case c = make_case({"Labk", "Lkcd", "dax", "xbm"}, "Lcm",
                             {{'L', 64}, {'a', 4}, {'b', 4}, {'c', 4}, {'d', 4}, {'k', 4}, {'x', 3}, {'m', 5}});
    std::vector<Tensor> operands;
    std::vector<std::vector<cd>> values(c.inputs.size());
    for (size_t k = 0; k < c.inputs.size(); ++k) {
        operands.push_back(make_operand(rt, c.shapes[k], DType::f64, 11 + static_cast<uint32_t>(k), false, values[k]));
    }
    const std::vector<cd> want = naive_einsum(c, values);
    const int64_t t_size = 64 * 4 * 4 * 4 * 4;
    const std::vector<std::pair<const char*, std::vector<std::pair<int64_t, int64_t>>>> paths = {
        {"T = X Y, then P = P1 P2, then T P", {{0, 1}, {0, 1}, {0, 1}}},
        {"P = P1 P2, then T = X Y, then T P", {{2, 3}, {0, 1}, {0, 1}}}};
    for (const auto& [name, pairs] : paths) {
        INFO(name);
        {
            std::lock_guard lock(steps.mutex);
            steps.gemms = 0;
            steps.sizes.clear();
        }
        EinsumOptions path;
        path.path = pairs;
        check_close(values_of(einsum(c.subscripts(), operands, path)), want, 1e-11, 1e-11);
        std::lock_guard lock(steps.mutex);
        REQUIRE(steps.gemms >= 3);  // the program was logged: T, P and T P are gemms
        CHECK(std::find(steps.sizes.begin(), steps.sizes.end(), t_size) == steps.sizes.end());
        // What copies remain are of the small tensors (P has 320 elements).
        for (int64_t n : steps.sizes) CHECK(n <= 320);
    }
}
