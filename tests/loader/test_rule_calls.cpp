// The ops rules call, resolved once per runtime (ABI 1.12): every core op by its number in
// ferro/core_ops.h, and what a family declares in its FERRO_EXT_RULE_CALLS link (checked with
// the descriptor: test_extensions.cpp), reported at load when an op it names is missing.
#include "corpus.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

using ferro::test::build_dir;
using ferro::test::isolated_options;

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
    ferro::test::CapturedLog captured;
    auto& warnings = captured.lines;  // the level: warnings only
    auto options = isolated_options();
    options.log_level = FERRO_LOG_WARN;
    options.log_callback = ferro::test::capture_log;
    options.log_user = &captured;
    const std::string dir = build_dir() + "/tests/fixtures/autodiff";
    {
        ferro::host::Runtime rt(options);
        REQUIRE(rt.load_plugin(dir + "/libferro_fixture_ad.so").diagnostic == std::nullopt);
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0] ==
              "warn loader: plugin 'fixture_ad': the rules of family 'fixture_ad' call fixture_nowhere.op, which "
              "no loaded plugin provides; gradients that need it will fail");
        rt.load_plugin(dir + "/libferro_fixture_ad.so");  // already loaded: nothing new to report
        CHECK(warnings.size() == 1);
    }
    // Loading a directory reports once everything in it is loaded, once per missing op.
    warnings.clear();
    options.plugin_paths = {dir};
    options.autoload = true;
    ferro::host::Runtime rt(options);
    REQUIRE(rt.snapshot()->find_plugin("fixture_ad") != nullptr);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains("call fixture_nowhere.op"));
}
