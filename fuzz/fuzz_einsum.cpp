// einsum's front end through the op: subscripts (any bytes, UTF-8 or not), sublists, explicit
// paths and order strings, optimisers, on operands whose ranks follow the subscripts' terms
// (so seeds written as plain subscripts parse) with a fuzzed difference now and then. Sizes
// stay at 1 or 2 (and sometimes 0): the contraction itself is not what this target explores.
// Every call must end in a result or a status; einsum.path must agree to run or refuse.
#include "fuzz_runtime.hpp"
#include "fuzz_values.hpp"

#include <string>
#include <vector>

using ferro::fuzz::Call;

namespace {

// Operand ranks as the subscripts' terms suggest: the characters of each term before "->",
// without '.' and ' ', plus a few axes for '...'.
std::vector<int> ranks_of(const std::string& subscripts, FuzzedDataProvider& in) {
    std::vector<int> ranks{0};
    const std::string lhs = subscripts.substr(0, subscripts.find("->"));
    for (char c : lhs) {
        if (c == ',') ranks.push_back(0);
        else if (c != '.' && c != ' ') ++ranks.back();
        if (ranks.size() > 6) break;
    }
    if (lhs.find("...") != std::string::npos) ranks.back() += in.ConsumeIntegralInRange(0, 2);
    for (int& r : ranks) r = std::min(6, std::max(0, r + (ferro::fuzz::rarely(in, 8) ? in.ConsumeIntegralInRange(-1, 1) : 0)));
    return ranks;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    ferro_runtime* rt = ferro::fuzz::runtime_with("libferro_einsum.so");
    const std::string subscripts = in.ConsumeRandomLengthString(200);
    const std::string order = in.ConsumeRandomLengthString(80);
    const std::vector<int> ranks = ranks_of(subscripts, in);
    const ferro_dtype dtype =
        in.PickValueInArray<ferro_dtype>({FERRO_DTYPE_F64, FERRO_DTYPE_C128, FERRO_DTYPE_F32, FERRO_DTYPE_I64});
    Call call(rt, in.ConsumeBool() ? "einsum.path" : "einsum.einsum");
    for (int r : ranks) {
        std::vector<int64_t> shape(static_cast<size_t>(r));
        for (int64_t& s : shape) s = ferro::fuzz::rarely(in, 16) ? 0 : in.ConsumeIntegralInRange(1, 2);
        call.input(shape, dtype);
    }
    std::vector<int64_t> sublists, path;
    if (ferro::fuzz::rarely(in, 4)) {
        for (int n = in.ConsumeIntegralInRange(0, 16); n > 0; --n) sublists.push_back(in.ConsumeIntegralInRange<int64_t>(-4, 60));
        call.attr_i64_array("sublists", sublists);
    } else {
        call.attr_str("subscripts", subscripts);
    }
    switch (order.empty() ? in.ConsumeIntegralInRange(0, 5) : 1) {
        case 1: call.attr_str("order", order); break;
        case 2:
            for (int n = in.ConsumeIntegralInRange(0, 8); n > 0; --n) path.push_back(in.ConsumeIntegralInRange<int64_t>(-1, 6));
            call.attr_i64_array("path", path);
            break;
        case 3:
            call.attr_str("optimize", in.PickValueInArray<const char*>({"greedy", "optimal", "random-greedy", "auto", "x"}));
            break;
        default: break;
    }
    call.run();
    return 0;
}
