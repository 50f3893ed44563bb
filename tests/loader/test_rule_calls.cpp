// The ops rules call, resolved once per runtime (ABI 1.12): every core op by its number in
// ferro/core_ops.h, and what a family declares in its FERRO_EXT_RULE_CALLS link, checked when
// the descriptor is validated and reported when an op it names is missing.
#include "../fixtures/fixture_common.hpp"
#include "corpus.hpp"

#include "loader/descriptor_check.hpp"
#include "loader/load_error.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <set>
#include <string>
#include <vector>

using ferro::host::check_descriptor;
using ferro::host::family_rule_calls;
using ferro::host::LoadError;
using ferro::test::build_dir;
using ferro::test::isolated_options;

namespace {

struct Described {
    ferro_op_schema ops[1] = {fixture::identity_op("op")};
    ferro_family_desc families[1] = {fixture::family("fixture_calls", ops, 1)};
    ferro_plugin_desc desc = fixture::plugin_with_families("fixture_calls", families, 1);
    explicit Described(const ferro_extension* chain) { desc.extensions = chain; }
};

ferro_rule_calls_ext calls_of(const char* const* names, uint32_t n, const char* family = "fixture_calls") {
    ferro_rule_calls_ext ext{};
    ext.base = {sizeof ext, FERRO_EXT_RULE_CALLS, nullptr};
    ext.family_id = family;
    ext.n_ops = n;
    ext.ops = names;
    return ext;
}

std::string refusal(const ferro_plugin_desc& desc) {
    try {
        check_descriptor(desc);
        return "";
    } catch (const LoadError& e) {
        CHECK(e.code() == FERRO_INVALID_ARGUMENT);
        return e.what();
    }
}

struct Captured {
    std::mutex mutex;
    std::vector<std::string> warnings;
};
void capture(void* user, uint32_t level, const char*, const char* message) {
    auto* c = static_cast<Captured*>(user);
    std::lock_guard lock(c->mutex);
    if (level == FERRO_LOG_WARN) c->warnings.emplace_back(message);
}

}  // namespace

TEST_CASE("rule calls: a family's declared list is checked and read back", "[loader]") {
    const char* const names[] = {"fixture_calls.op", "core.mul", "linalg.svd"};
    const ferro_rule_calls_ext ext = calls_of(names, 3);
    const Described d(&ext.base);
    CHECK(refusal(d.desc).empty());
    const auto found = family_rule_calls(d.desc, "fixture_calls");
    REQUIRE(found.size() == 3);
    CHECK(std::string(found[2]) == "linalg.svd");
    CHECK(family_rule_calls(d.desc, "another").empty());

    const char *const unqualified[] = {"svd"}, *const upper[] = {"Linalg.svd"}, *const null_name[] = {nullptr},
                      *const empty_op[] = {"linalg."};
    const ferro_rule_calls_ext a = calls_of(unqualified, 1), b = calls_of(upper, 1), c = calls_of(null_name, 1),
                               e = calls_of(empty_op, 1), f = calls_of(names, 1, "elsewhere"), g = calls_of(nullptr, 2),
                               h = calls_of(names, FERRO_MAX_RULE_CALLS + 1);
    const std::string expected = "expected a qualified op name ('family.op', lower-case identifiers)";
    CHECK_THAT(refusal(Described(&a.base).desc), Catch::Contains("extensions[0].ops[0] is 'svd', " + expected));
    CHECK_THAT(refusal(Described(&b.base).desc), Catch::Contains("ops[0] is 'Linalg.svd'"));
    CHECK_THAT(refusal(Described(&c.base).desc), Catch::Contains("ops[0] is NULL, " + expected));
    CHECK_THAT(refusal(Described(&e.base).desc), Catch::Contains("ops[0] is 'linalg.'"));
    CHECK_THAT(refusal(Described(&f.base).desc), Catch::Contains("extensions[0].family_id names no family of this plugin"));
    CHECK_THAT(refusal(Described(&g.base).desc), Catch::Contains("extensions[0].ops is NULL"));
    CHECK_THAT(refusal(Described(&h.base).desc), Catch::Contains("extensions[0]: 1025 ops, at most 1024"));
    // Two lists for one family: which would the rules get?
    ferro_rule_calls_ext first = calls_of(names, 1);
    const ferro_rule_calls_ext second = calls_of(names + 1, 1);
    first.base.next = &second.base;
    CHECK_THAT(refusal(Described(&first.base).desc),
               Catch::Contains("extensions[1]: a second FERRO_EXT_RULE_CALLS link for family 'fixture_calls'"));
}

TEST_CASE("rule calls: every core op has a number, and every number is a core op", "[loader]") {
    ferro::host::Runtime rt(isolated_options());
    std::set<std::string> core_ops;
    for (const auto& [name, entry] : rt.snapshot()->ops) {
        if (entry.family_id == "core") core_ops.insert(name);
    }
    std::set<std::string> numbered;
    for (uint32_t i = 0; i < FERRO_CORE_OP_COUNT; ++i) {
        numbered.insert(ferro_core_op_name(i));
        CHECK(rt.core_rule_ops()[i] == &rt.op(ferro_core_op_name(i)));
    }
    CHECK(numbered == core_ops);
    CHECK(ferro_core_op_name(FERRO_CORE_OP_COUNT) == nullptr);
    CHECK(std::string(ferro_core_op_name(FERRO_CORE_OP_MUL)) == "core.mul");
}

TEST_CASE("rule calls: an op a family's rules call that no loaded plugin provides is reported at load", "[loader]") {
    Captured captured;
    auto options = isolated_options();
    options.log_level = FERRO_LOG_WARN;
    options.log_callback = capture;
    options.log_user = &captured;
    const std::string dir = build_dir() + "/tests/fixtures/autodiff";
    {
        ferro::host::Runtime rt(options);
        REQUIRE(rt.load_plugin(dir + "/libferro_fixture_ad.so").diagnostic == std::nullopt);
        REQUIRE(captured.warnings.size() == 1);
        CHECK(captured.warnings[0] ==
              "plugin 'fixture_ad': the rules of family 'fixture_ad' call fixture_nowhere.op, which "
              "no loaded plugin provides; gradients that need it will fail");
        rt.load_plugin(dir + "/libferro_fixture_ad.so");  // already loaded: nothing new to report
        CHECK(captured.warnings.size() == 1);
    }
    // Loading a directory reports once everything in it is loaded, once per missing op.
    captured.warnings.clear();
    options.plugin_paths = {dir};
    options.autoload = true;
    ferro::host::Runtime rt(options);
    REQUIRE(rt.snapshot()->find_plugin("fixture_ad") != nullptr);
    REQUIRE(captured.warnings.size() == 1);
    CHECK_THAT(captured.warnings[0], Catch::Contains("call fixture_nowhere.op"));
}
