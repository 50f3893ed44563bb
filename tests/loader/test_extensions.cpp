// The extension chain of a plugin descriptor (ABI 1.11, ferro/extension.h): links of unknown
// types are skipped, known ones are checked, op views are the host's own, and a family's
// declared rule calls (1.12) are qualified op names.
#include "../fixtures/fixture_common.hpp"

#include "loader/descriptor_check.hpp"
#include "loader/load_error.hpp"

#include <catch2/catch.hpp>

#include <string>

using ferro::host::check_descriptor;
using ferro::host::DescriptorSource;
using ferro::host::family_rule_calls;
using ferro::host::family_views;
using ferro::host::LoadError;

namespace {

// A one-family plugin whose op 0 has one input and one output, with `chain` hung off it.
struct Described {
    ferro_op_schema ops[1] = {fixture::identity_op("view_like")};
    ferro_family_desc families[1] = {fixture::family("fixture_ext", ops, 1)};
    ferro_plugin_desc desc = fixture::plugin_with_families("fixture_ext", families, 1);
    explicit Described(const ferro_extension* chain) { desc.extensions = chain; }
};

ferro_op_views_ext views_of(const ferro_op_view* views, uint32_t n, const char* family = "fixture_ext") {
    ferro_op_views_ext ext{};
    ext.base = {sizeof ext, FERRO_EXT_OP_VIEWS, nullptr};
    ext.family_id = family;
    ext.n_views = n;
    ext.views = views;
    return ext;
}

ferro_rule_calls_ext calls_of(const char* const* names, uint32_t n, const char* family = "fixture_ext") {
    ferro_rule_calls_ext ext{};
    ext.base = {sizeof ext, FERRO_EXT_RULE_CALLS, nullptr};
    ext.family_id = family;
    ext.n_ops = n;
    ext.ops = names;
    return ext;
}

// check_descriptor's validate error, or "" when the descriptor passes.
std::string refusal(const ferro_plugin_desc& desc, DescriptorSource source) {
    try {
        check_descriptor(desc, source);
        return "";
    } catch (const LoadError& e) {
        CHECK(e.stage() == ferro::host::LoadStage::validate);
        CHECK(e.code() == FERRO_INVALID_ARGUMENT);
        return e.what();
    }
}

}  // namespace

TEST_CASE("extensions: links of types the host does not know are skipped", "[loader]") {
    ferro_extension unknown_b{sizeof(ferro_extension), 0xBEEF, nullptr};
    ferro_extension unknown_a{sizeof(ferro_extension), 0xABCD, &unknown_b};
    const Described d(&unknown_a);
    CHECK(refusal(d.desc, DescriptorSource::file).empty());
    CHECK(family_views(d.desc, "fixture_ext").empty());
    CHECK(ferro_find_extension(&unknown_a, 0xBEEF) == &unknown_b);
    CHECK(ferro_find_extension(&unknown_a, FERRO_EXT_OP_VIEWS) == nullptr);
    // A descriptor built before 1.11 has no chain at all: its struct ends before the field.
    Described old(nullptr);
    old.desc.struct_size = FERRO_STRUCT_SIZE_UP_TO(ferro_plugin_desc, module_providers);
    CHECK(refusal(old.desc, DescriptorSource::file).empty());
}

TEST_CASE("extensions: a plugin file may not declare op views; the host's own ops may", "[loader]") {
    const ferro_op_view views[] = {{0, 0, 0, 0}};
    const ferro_op_views_ext ext = views_of(views, 1);
    const Described d(&ext.base);
    CHECK_THAT(refusal(d.desc, DescriptorSource::file),
               Catch::Contains("extensions[0]: declares op views, but a plugin's op outputs are buffers the host allocates; "
                               "in ABI 1.x only the host's own ops return views"));
    CHECK(refusal(d.desc, DescriptorSource::builtin).empty());
    const auto found = family_views(d.desc, "fixture_ext");
    REQUIRE(found.size() == 1);
    CHECK(found[0].op == 0);
    CHECK(family_views(d.desc, "another").empty());
}

TEST_CASE("extensions: malformed links are refused, naming the link and the field", "[loader]") {
    // A known type whose link is smaller than its struct.
    ferro_op_views_ext small = views_of(nullptr, 0);
    small.base.struct_size = sizeof(ferro_extension);
    CHECK_THAT(refusal(Described(&small.base).desc, DescriptorSource::builtin),
               Catch::Contains("extensions[0].struct_size is 16, expected at least 40"));
    // A link smaller than the base itself, second in the chain.
    ferro_extension tiny{4, 0x77, nullptr};
    ferro_extension first{sizeof(ferro_extension), 0x76, &tiny};
    CHECK_THAT(refusal(Described(&first).desc, DescriptorSource::file), Catch::Contains("extensions[1].struct_size is 4"));
    // A cycle: the chain never ends.
    ferro_extension loop{sizeof(ferro_extension), 0x99, nullptr};
    loop.next = &loop;
    CHECK_THAT(refusal(Described(&loop).desc, DescriptorSource::file), Catch::Contains("longer than 64 links"));
    CHECK(ferro_find_extension(&loop, 0x1234) == nullptr);  // the helper stops too
    // Views that name what the family does not have.
    const ferro_op_view no_op[] = {{3, 0, 0, 0}}, no_output[] = {{0, 1, 0, 0}}, no_input[] = {{0, 0, 2, 0}},
                        bad_flags[] = {{0, 0, 0, 0x80}};
    const ferro_op_views_ext a = views_of(no_op, 1), b = views_of(no_output, 1), c = views_of(no_input, 1),
                             e = views_of(bad_flags, 1), f = views_of(no_op, 1, "elsewhere"), g = views_of(nullptr, 1);
    CHECK_THAT(refusal(Described(&a.base).desc, DescriptorSource::builtin),
               Catch::Contains("views[0]: op 3 is not an op of family 'fixture_ext'"));
    CHECK_THAT(refusal(Described(&b.base).desc, DescriptorSource::builtin), Catch::Contains("'view_like' has no output 1"));
    CHECK_THAT(refusal(Described(&c.base).desc, DescriptorSource::builtin), Catch::Contains("'view_like' has no input 2"));
    CHECK_THAT(refusal(Described(&e.base).desc, DescriptorSource::builtin), Catch::Contains("unknown flags 0x80"));
    CHECK_THAT(refusal(Described(&f.base).desc, DescriptorSource::builtin),
               Catch::Contains("family_id names no family of this plugin"));
    CHECK_THAT(refusal(Described(&g.base).desc, DescriptorSource::builtin), Catch::Contains("extensions[0].views is NULL"));
}

TEST_CASE("rule calls: a family's declared list is checked and read back", "[loader]") {
    const char* const names[] = {"fixture_ext.view_like", "core.mul", "linalg.svd"};
    const ferro_rule_calls_ext ext = calls_of(names, 3);
    const Described d(&ext.base);
    CHECK(refusal(d.desc, DescriptorSource::file).empty());
    const auto found = family_rule_calls(d.desc, "fixture_ext");
    REQUIRE(found.size() == 3);
    CHECK(std::string(found[2]) == "linalg.svd");
    CHECK(family_rule_calls(d.desc, "another").empty());

    const char *const unqualified[] = {"svd"}, *const upper[] = {"Linalg.svd"}, *const null_name[] = {nullptr},
                      *const empty_op[] = {"linalg."};
    const ferro_rule_calls_ext a = calls_of(unqualified, 1), b = calls_of(upper, 1), c = calls_of(null_name, 1),
                               e = calls_of(empty_op, 1), f = calls_of(names, 1, "elsewhere"), g = calls_of(nullptr, 2),
                               h = calls_of(names, FERRO_MAX_RULE_CALLS + 1);
    const std::string expected = "expected a qualified op name ('family.op', lower-case identifiers)";
    CHECK_THAT(refusal(Described(&a.base).desc, DescriptorSource::file),
               Catch::Contains("extensions[0].ops[0] is 'svd', " + expected));
    CHECK_THAT(refusal(Described(&b.base).desc, DescriptorSource::file), Catch::Contains("ops[0] is 'Linalg.svd'"));
    CHECK_THAT(refusal(Described(&c.base).desc, DescriptorSource::file), Catch::Contains("ops[0] is NULL, " + expected));
    CHECK_THAT(refusal(Described(&e.base).desc, DescriptorSource::file), Catch::Contains("ops[0] is 'linalg.'"));
    CHECK_THAT(refusal(Described(&f.base).desc, DescriptorSource::file),
               Catch::Contains("extensions[0].family_id names no family of this plugin"));
    CHECK_THAT(refusal(Described(&g.base).desc, DescriptorSource::file), Catch::Contains("extensions[0].ops is NULL"));
    CHECK_THAT(refusal(Described(&h.base).desc, DescriptorSource::file),
               Catch::Contains("extensions[0]: 1025 ops, at most 1024"));
    // Two lists for one family: which would the rules get?
    ferro_rule_calls_ext first = calls_of(names, 1);
    const ferro_rule_calls_ext second = calls_of(names + 1, 1);
    first.base.next = &second.base;
    CHECK_THAT(refusal(Described(&first.base).desc, DescriptorSource::file),
               Catch::Contains("extensions[1]: a second FERRO_EXT_RULE_CALLS link for family 'fixture_ext'"));
}
