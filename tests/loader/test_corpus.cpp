// The fixture corpus: every broken plugin produces a diagnostic naming its file, the stage
// that failed and a clear message, while the runtime keeps working and the good plugins load.
#include "corpus.hpp"

#include <map>

using ferro::host::Diagnostic;
using ferro::host::LoadStage;
using ferro::host::Runtime;
using namespace ferro::test;

namespace {

struct Expected {
    LoadStage stage;
    uint32_t code;
    std::string message_part;
};

const std::map<std::string, Expected>& expected_diagnostics() {
    static const std::map<std::string, Expected> table = {
        {"empty", {LoadStage::open, FERRO_INVALID_ARGUMENT, "empty file"}},
        {"garbage", {LoadStage::open, FERRO_INVALID_ARGUMENT, "invalid ELF header"}},
        {"elf32", {LoadStage::open, FERRO_INVALID_ARGUMENT, "wrong ELF class: ELFCLASS32"}},
        // Each of these three took the process down inside dlopen before it was checked first.
        {"aarch64", {LoadStage::open, FERRO_INVALID_ARGUMENT, "built for AArch64, this process runs on x86-64"}},
        {"truncated",
         {LoadStage::open, FERRO_INVALID_ARGUMENT, "reaches past the end of the file (3000 bytes): is it truncated?"}},
        {"zero_padded", {LoadStage::open, FERRO_INVALID_ARGUMENT, "the dynamic section has no symbol table"}},
        {"missing_dep", {LoadStage::open, FERRO_INVALID_ARGUMENT, "libfixture_dep.so"}},
        {"no_entry", {LoadStage::entry, FERRO_NOT_FOUND, "does not export ferro_plugin_query"}},
        {"entry_error", {LoadStage::query, FERRO_FAILED_PRECONDITION, "no licence"}},
        {"entry_throws", {LoadStage::query, FERRO_INTERNAL, "fixture exception from query"}},
        {"abi_major",
         {LoadStage::abi, FERRO_INCOMPATIBLE,
          "built for ABI 2.3, this host speaks ABI " + std::to_string(FERRO_ABI_MAJOR) + "." + std::to_string(FERRO_ABI_MINOR)}},
        {"small_struct", {LoadStage::validate, FERRO_INVALID_ARGUMENT, "ferro_plugin_desc.struct_size is 16"}},
        {"null_infer", {LoadStage::validate, FERRO_INVALID_ARGUMENT, "ops[0] ('broken').infer is NULL"}},
        {"dup_b",
         {LoadStage::register_, FERRO_ALREADY_EXISTS, "family 'fixture_dup' is already provided by plugin 'fixture_dup_a'"}},
        {"probe_fails", {LoadStage::probe, FERRO_INTERNAL, "fixture driver crashed while counting"}},
    };
    return table;
}

}  // namespace

TEST_CASE("loader: each broken fixture gives a diagnostic with file, stage and message", "[loader]") {
    for (const auto& [name, expected] : expected_diagnostics()) {
        Runtime rt(isolated_options());
        // The duplicate collides with its twin, which must be loaded first.
        if (name == "dup_b") REQUIRE_FALSE(rt.load_plugin(corpus_file("dup_a")).diagnostic);
        const auto result = rt.load_plugin(corpus_file(name));
        INFO("fixture " << name);
        REQUIRE(result.diagnostic.has_value());
        const Diagnostic& d = *result.diagnostic;
        CHECK(d.file == corpus_file(name));
        CHECK(ferro::host::load_stage_name(d.stage) == std::string(ferro::host::load_stage_name(expected.stage)));
        CHECK(d.code == expected.code);
        CHECK_THAT(d.message, Catch::Contains(expected.message_part));
        // The diagnostic is kept in the runtime's snapshot too.
        auto snap = rt.snapshot();
        REQUIRE_FALSE(snap->diagnostics.empty());
        CHECK(snap->diagnostics.back().file == d.file);
    }
}

TEST_CASE("loader: scanning the corpus loads the good plugins despite every broken one", "[loader]") {
    auto options = isolated_options();
    options.plugin_paths = {corpus_dir()};
    options.autoload = true;
    Runtime rt(options);
    auto snap = rt.snapshot();

    CHECK(snap->find_plugin("fixture_good") != nullptr);
    CHECK(snap->find_plugin("fixture_engine") != nullptr);
    CHECK(snap->find_plugin("fixture_dup_a") != nullptr);
    CHECK(snap->find_plugin("fixture_dup_b") == nullptr);
    CHECK(snap->find_op("fixture_good.identity") != nullptr);
    CHECK(snap->find_op("fixture_good.copy") != nullptr);
    CHECK(snap->find_op("fixture_dup.identity") != nullptr);
    CHECK(snap->find_engine("fixture:0") != nullptr);

    std::map<std::string, LoadStage> seen;
    for (const auto& d : snap->diagnostics) seen[d.file] = d.stage;
    for (const auto& [name, expected] : expected_diagnostics()) {
        INFO("fixture " << name);
        REQUIRE(seen.count(corpus_file(name)) == 1);
        CHECK(seen[corpus_file(name)] == expected.stage);
    }
    CHECK(snap->diagnostics.size() == expected_diagnostics().size());
}

TEST_CASE("loader: a device that fails to create is reported while its sibling registers", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_engine")).diagnostic);
    auto snap = rt.snapshot();
    const auto* record = snap->find_plugin("fixture_engine");
    REQUIRE(record != nullptr);
    REQUIRE(record->engine_kinds.size() == 1);
    CHECK(record->engine_kinds[0].device_count == 1);
    CHECK_THAT(record->engine_kinds[0].reason, Catch::Contains("fixture device 1 is broken"));
    const auto* engine = snap->find_engine("fixture:0");
    REQUIRE(engine != nullptr);
    CHECK(std::string(engine->props().name) == "fixture device");
    CHECK(snap->find_engine("fixture:1") == nullptr);
}

TEST_CASE("loader: an engine table with some of the recorded-session entries is refused, naming them", "[loader]") {
    Runtime rt(isolated_options());
    (void)rt.load_plugin(build_dir() + "/tests/fixtures/half_recording_engine/libferro_fixture_half_recording_engine.so");
    auto snap = rt.snapshot();
    const auto* record = snap->find_plugin("fixture_half_recording_engine");
    REQUIRE(record != nullptr);
    REQUIRE(record->engine_kinds.size() == 1);
    CHECK(record->engine_kinds[0].device_count == 0);
    CHECK_THAT(record->engine_kinds[0].reason, Catch::Contains("recording entries") && Catch::Contains("all set or all NULL"));
    CHECK(snap->find_engine("fixture:0") == nullptr);
}

TEST_CASE("registry: a family gets a module on engines its factory accepts, a reason elsewhere", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
    // Only the built-in cpu engine so far: the factory declines it with its reason.
    const auto& cpu = rt.snapshot()->families.at("fixture_good").modules.at("cpu");
    REQUIRE(cpu.size() == 1);
    CHECK(cpu[0].module == nullptr);
    CHECK(cpu[0].decline_reason == "fixture_good runs on fixture engines only, not cpu");
    // A later engine gets asked too.
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_engine")).diagnostic);
    auto snap = rt.snapshot();
    const auto& slots = snap->families.at("fixture_good").modules.at("fixture:0");
    REQUIRE(slots.size() == 1);
    CHECK(slots[0].module != nullptr);
    CHECK(slots[0].plugin == "fixture_good");
    // The core family runs on every engine: it got a module on the fixture engine too.
    CHECK(snap->families.at("core").modules.at("fixture:0").at(0).module != nullptr);
}

TEST_CASE("registry: the null engine plugin loads and reports why it has no device", "[loader]") {
    Runtime rt(isolated_options());
    const auto path = plugin_dir() + "/libferro_engine_null.so";
    REQUIRE_FALSE(rt.load_plugin(path).diagnostic);
    auto snap = rt.snapshot();
    const auto* record = snap->find_plugin("engine_null");
    REQUIRE(record != nullptr);
    REQUIRE(record->engine_kinds.size() == 1);
    CHECK(record->engine_kinds[0].device_count == 0);
    CHECK_THAT(record->engine_kinds[0].reason, Catch::Contains("no devices"));
    CHECK(record->engines.empty());
}
