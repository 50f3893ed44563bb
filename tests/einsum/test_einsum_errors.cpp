// einsum's error paths: every bad expression, operand and option is an INVALID_ARGUMENT that
// says what is wrong and where.
#include "einsum_test.hpp"

using namespace ferro;
using namespace ferro::test;

TEST_CASE("einsum errors: bad subscripts point at the character", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({2, 3}, DType::f64, 1), B = rt.rand({3, 4}, DType::f64, 2);
    const auto bad = [&](const std::string& subscripts, const std::vector<Tensor>& ops, const std::string& part) {
        INFO(subscripts);
        check_error([&] { einsum(subscripts, ops); }, FERRO_INVALID_ARGUMENT, part);
    };
    bad("ij,jk->il", {A, B}, "label 'l' of the output does not appear in any operand (character 8 of \"ij,jk->il\")");
    bad("ij,jk->ii", {A, B}, "label 'i' appears twice in the output (character 8");
    bad("ij,jk", {A}, "the subscripts name 2 operands but 1 was given");
    bad("ij", {A, B}, "the subscripts name 1 operand but 2 were given");
    bad("ijk,jk->i", {A, B}, "operand 0 has 2 dimensions but its subscripts name 3");
    bad("i,jk->i", {A, B}, "operand 0 has 2 dimensions but its subscripts name 1 (use ... for the others)");
    bad("ij,ik->jk", {A, B}, "dimension mismatch for label 'i': 2 (operand 0, axis 0) vs 3 (operand 1, axis 0)");
    bad("ii->i", {A},
        "dimension mismatch for label 'i': 2 (operand 0, axis 0) vs 3 (operand 0, axis 1): a repeated label takes a diagonal");
    bad("ij-jk", {A}, "'-' must start '->' (character 2");
    bad("ij>", {A}, "'>' without '-' (character 2");
    bad("i.j", {A}, "'.' must be part of '...' (character 1");
    bad("......", {A}, "a second '...' in one term (character 3");
    bad("ij->i->j", {A}, "a second '->' (character 5");
    bad("ij->i,j", {A}, "',' after '->' (character 5");
    bad("...->......", {A}, "a second '...' in the output (character 8");
    bad(std::string("i\xff"), {rt.rand({2, 2}, DType::f64, 3)}, "subscripts are not valid UTF-8 (byte 1)");
    // Digits and ASCII punctuation are not labels (numpy refuses them too): "a1" would otherwise
    // transpose through the implicit output's code point order, and "&,a->" would run.
    const std::string letters = ": labels are ASCII letters or characters beyond ASCII";
    bad("a1", {A}, "einsum: '1' is not a label (character 1 of \"a1\")" + letters);
    bad("&,a->", {rt.ones({2}, DType::f64), rt.ones({2}, DType::f64)}, "'&' is not a label (character 0 of \"&,a->\")");
    bad("ab,b0->a0", {A, B}, "'0' is not a label (character 4");
    bad("i_j", {A}, "'_' is not a label (character 1");
    bad("ij\r", {A}, "U+000D is not a label (character 2");
}

TEST_CASE("einsum errors: operands, sublists and options", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({2, 3}, DType::f64, 1), B = rt.rand({3, 4}, DType::f64, 2);
    check_error(
        [&] {
            einsum("ij,jk->ik", {A, rt.ones({3, 4}, DType::i64)});
        },
        FERRO_INVALID_ARGUMENT, "operand 1 has dtype i64; einsum takes f32, f64, c64 or c128");
    check_error(
        [&] {
            einsum({A, B}, {{0, 1}, {1, -5}});
        },
        FERRO_INVALID_ARGUMENT, "einsum: sublist label -5 of operand 1 is negative: labels are >= 0");
    // -2 and -3 separate operands and start the output in the op's encoding; as labels they are refused.
    check_error(
        [&] {
            einsum({A}, {{0, -3}}, std::vector<int64_t>{0});
        },
        FERRO_INVALID_ARGUMENT, "sublist label -3 of operand 0 is negative");
    check_error(
        [&] {
            einsum({A, B}, {{0, 1}, {1, 2}}, std::vector<int64_t>{0, -2});
        },
        FERRO_INVALID_ARGUMENT, "sublist label -2 of the output is negative");
    // The op itself (what a C caller passes) refuses negative labels other than its markers.
    check_error(
        [&] {
            call_one(A.runtime_ref(), "einsum.einsum", {A, B}, {Attr("sublists", std::vector<int64_t>{0, 1, -2, 1, -5})});
        },
        FERRO_INVALID_ARGUMENT, "-5 is not a label (sublists entry 4): labels are >= 0");
    check_error(
        [&] {
            einsum({A}, {{0, 1}}, std::vector<int64_t>{2});
        },
        FERRO_INVALID_ARGUMENT, "label 2 of the output does not appear in any operand (sublists entry 3)");
    EinsumOptions o;
    o.optimize = "fastest";
    check_error(
        [&] {
            einsum("ij,jk->ik", {A, B}, o);
        },
        FERRO_INVALID_ARGUMENT, "optimize must be auto, greedy, optimal or random-greedy, got \"fastest\"");
    o = {};
    o.minimize = "memory";
    check_error(
        [&] {
            einsum("ij,jk->ik", {A, B}, o);
        },
        FERRO_INVALID_ARGUMENT, "minimize must be flops or size, got \"memory\"");
    o = {};
    o.optimize = "random-greedy";
    o.repeats = 0;
    check_error([&] { einsum("ij,jk->ik", {A, B}, o); }, FERRO_INVALID_ARGUMENT, "repeats must be >= 1, got 0");
    // Explicit paths are checked against the operands.
    const Tensor C = rt.rand({4, 2}, DType::f64, 3);
    o = {};
    o.path = {{0, 3}, {0, 1}};
    check_error(
        [&] {
            einsum("ij,jk,kl->il", {A, B, C}, o);
        },
        FERRO_INVALID_ARGUMENT, "path step 0 (0, 3) names an operand that does not exist: 3 remain");
    o.path = {{1, 1}, {0, 1}};
    check_error([&] { einsum("ij,jk,kl->il", {A, B, C}, o); }, FERRO_INVALID_ARGUMENT, "path step 0 names operand 1 twice");
    o.path = {{0, 1}};
    check_error(
        [&] {
            einsum("ij,jk,kl->il", {A, B, C}, o);
        },
        FERRO_INVALID_ARGUMENT, "the path (0, 1) leaves 2 operands uncontracted; a complete path has 2 steps");
    o = {};
    const auto bad_order = [&](const std::string& order, const std::string& part) {
        EinsumOptions n;
        n.order = order;
        INFO(order);
        check_error([&] { einsum("ij,jk,kl->il", {A, B, C}, n); }, FERRO_INVALID_ARGUMENT, part);
    };
    bad_order("((0, 1), 3)", "operand 3 does not exist (3 operands) at character 9 of order \"((0, 1), 3)\"");
    bad_order("((0, 1), 1)", "operand 1 appears twice at character 9");
    bad_order("(0, 1)", "order \"(0, 1)\" leaves operand 2 out");
    bad_order("((0 1), 2)", "expected ',' at character 4");
    bad_order("((0, 1), 2))", "unexpected ')' at character 11");
    o.path = {{0, 1}, {0, 1}};
    o.order = "((0, 1), 2)";
    check_error([&] { einsum("ij,jk,kl->il", {A, B, C}, o); }, FERRO_INVALID_ARGUMENT, "give path or order, not both");
    // optimal beyond 128 operands (or its pair budget) gives up, and says what to use instead.
    std::vector<Tensor> many(129, rt.rand({2, 2}, DType::f64, 4));
    std::vector<std::vector<int64_t>> chain;
    for (int64_t k = 0; k < 129; ++k) chain.push_back({k, k + 1});
    o = {};
    o.optimize = "optimal";
    check_error(
        [&] {
            einsum(many, chain, {0, 129}, o);
        },
        FERRO_INVALID_ARGUMENT,
        "the optimal path search over connected subnetworks gave up on 129 operands (more than 128 operands); "
        "use optimize=\"auto\", \"greedy\" or \"random-greedy\"");
    // Operands on different engines or none at all are the host's and the API's to refuse.
    check_error([&] { einsum("ij", {}); }, FERRO_INVALID_ARGUMENT, "at least one operand is required");
}

TEST_CASE("einsum errors: a message names the op once, and no stage of the host", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({2, 3}, DType::f64, 1), B = rt.rand({3, 4}, DType::f64, 2);
    try {
        einsum("ij,jk->il", {A, B});
        FAIL("einsum with an unknown output label ran");
    } catch (const Error& e) {
        // It read "einsum.einsum: infer: einsum: label 'l' ...".
        CHECK(std::string(e.what()) ==
              "einsum.einsum: label 'l' of the output does not appear in any operand (character 8 of \"ij,jk->il\")");
    }
}
