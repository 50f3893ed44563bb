// Runtime behaviour around loading: epochs, copy-on-write transactions, pinned snapshots,
// unloading, duplicate loads, logging.
#include "corpus.hpp"

#include <filesystem>
#include <stdexcept>
#include <vector>

using ferro::host::Runtime;
using namespace ferro::test;

TEST_CASE("runtime: each successful reconfigure publishes epoch + 1", "[loader]") {
    Runtime rt(isolated_options());
    const auto start = rt.epoch();
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
    CHECK(rt.epoch() == start + 1);
}

TEST_CASE("runtime: an edit that throws publishes nothing", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
    auto before = rt.snapshot();
    CHECK_THROWS_AS(rt.reconfigure([](ferro::host::Snapshot& s) {
        s.ops.clear();
        throw std::runtime_error("edit fails halfway");
    }),
                    std::runtime_error);
    auto after = rt.snapshot();
    CHECK(after == before);
    CHECK(after->find_op("fixture_good.identity") != nullptr);
}

TEST_CASE("runtime: a failed load changes no registry entry", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("dup_a")).diagnostic);
    const auto ops_before = rt.snapshot()->ops.size();
    REQUIRE(rt.load_plugin(corpus_file("dup_b")).diagnostic);
    auto snap = rt.snapshot();
    CHECK(snap->ops.size() == ops_before);
    CHECK(snap->find_plugin("fixture_dup_b") == nullptr);
    CHECK(snap->families.at("fixture_dup").plugin == "fixture_dup_a");
}

TEST_CASE("runtime: loading a loaded file again, by any spelling, is reported as already loaded", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
    const auto epoch = rt.epoch();
    const auto link = std::filesystem::temp_directory_path() / "ferro_test_corpus_link";
    std::filesystem::remove(link);
    std::filesystem::create_directory_symlink(corpus_dir(), link);
    for (const std::filesystem::path& spelling :
         {std::filesystem::path(corpus_file("good_family")), link / "libferro_fixture_good_family.so",
          std::filesystem::path(corpus_dir() + "/./../corpus//libferro_fixture_good_family.so")}) {
        INFO(spelling);
        const auto again = rt.load_plugin(spelling);
        CHECK(again.already_loaded);
        CHECK_FALSE(again.diagnostic);
        CHECK(again.plugin == "fixture_good");
    }
    std::filesystem::remove(link);
    CHECK(rt.epoch() == epoch);
    CHECK(rt.snapshot()->diagnostics.empty());
    std::filesystem::remove(link);
}

TEST_CASE("runtime: a second file with a loaded plugin's name is refused naming both files and the rule", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
    const auto dir = std::filesystem::temp_directory_path() / "ferro_test_copy";
    std::filesystem::create_directories(dir);
    const auto copy = dir / "libferro_fixture_good_family.so";
    std::filesystem::copy_file(corpus_file("good_family"), copy, std::filesystem::copy_options::overwrite_existing);
    const auto again = rt.load_plugin(copy);
    std::filesystem::remove_all(dir);
    REQUIRE(again.diagnostic);
    CHECK_FALSE(again.already_loaded);
    CHECK(again.diagnostic->code == FERRO_ALREADY_EXISTS);
    CHECK(again.diagnostic->file == copy.string());
    CHECK_THAT(again.diagnostic->message,
               Catch::Contains("plugin name 'fixture_good' is already provided by plugin 'fixture_good' (" +
                               corpus_file("good_family") + "), loaded first") &&
                   Catch::Contains("the first file on the search path wins"));
}

TEST_CASE("runtime: an op missing from a family another file won names both files", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("dup_a")).diagnostic);
    REQUIRE(rt.load_plugin(corpus_file("dup_b")).diagnostic);
    const std::string message = rt.snapshot()->missing_op_message("fixture_dup.absent");
    CHECK_THAT(message, Catch::StartsWith("no op named 'fixture_dup.absent': family 'fixture_dup' is provided by "
                                          "plugin 'fixture_dup_a' (" +
                                          corpus_file("dup_a") + "), which has no op 'absent'"));
    CHECK_THAT(message, Catch::Contains(corpus_file("dup_b") + " also provides family 'fixture_dup' but was not "
                                                               "registered, because the first file on the search path wins"));
    CHECK(rt.snapshot()->missing_op_message("nofamily.op") ==
          "no op named 'nofamily.op': no loaded plugin provides "
          "family 'nofamily' (1 plugin file(s) failed to load: see "
          "the runtime's diagnostics or ferro-inspect doctor)");
}

TEST_CASE("runtime: rescanning, or a search path naming one directory twice, loads each file once", "[loader]") {
    const auto link = std::filesystem::temp_directory_path() / "ferro_test_plugins_link";
    std::filesystem::remove(link);
    std::filesystem::create_directory_symlink(plugin_dir(), link);
    auto options = isolated_options();
    options.plugin_paths = {plugin_dir() + "/", link.string(), plugin_dir() + "/../plugins"};
    Runtime rt(options);
    REQUIRE(rt.search_path().size() == 1);
    const auto first = rt.load_search_path();
    REQUIRE(first.size() == ferro::host::plugin_candidates(plugin_dir()).size());
    for (const auto& r : first) CHECK_FALSE((r.already_loaded || r.diagnostic));
    const auto epoch = rt.epoch();
    for (const auto& r : rt.load_search_path()) {
        INFO(r.plugin);
        CHECK(r.already_loaded);
        CHECK_FALSE(r.diagnostic);
    }
    CHECK(rt.epoch() == epoch);
    CHECK(rt.snapshot()->diagnostics.empty());
    std::filesystem::remove(link);
}

TEST_CASE("runtime: a missing file is NOT_FOUND at stage open", "[loader]") {
    Runtime rt(isolated_options());
    const auto result = rt.load_plugin("/nonexistent/libferro_nothing.so");
    REQUIRE(result.diagnostic);
    CHECK(result.diagnostic->stage == ferro::host::LoadStage::open);
    CHECK(result.diagnostic->code == FERRO_NOT_FOUND);
}

TEST_CASE("runtime: unload removes a plugin but a pinned snapshot still sees it", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
    auto pinned = rt.snapshot();
    rt.unload_plugin("fixture_good");
    auto now = rt.snapshot();
    CHECK(now->find_op("fixture_good.identity") == nullptr);
    CHECK(now->families.count("fixture_good") == 0);
    // The pinned snapshot keeps the library mapped: its schema is still readable.
    const auto* op = pinned->find_op("fixture_good.identity");
    REQUIRE(op != nullptr);
    CHECK(std::string(op->schema->doc) == "returns its input");
    // And the plugin can be loaded again.
    CHECK_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
}

TEST_CASE("runtime: unload is refused while the plugin's objects are alive", "[loader]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
    auto library = rt.snapshot()->find_plugin("fixture_good")->library;
    library->add_user_object();
    try {
        rt.unload_plugin("fixture_good");
        FAIL("unload succeeded with a live object");
    } catch (const ferro::host::Error& e) {
        CHECK(e.code() == FERRO_FAILED_PRECONDITION);
        CHECK_THAT(e.what(), Catch::Contains("1 live object"));
    }
    CHECK(rt.snapshot()->find_plugin("fixture_good") != nullptr);
    library->remove_user_object();
    rt.unload_plugin("fixture_good");
    CHECK(rt.snapshot()->find_plugin("fixture_good") == nullptr);
}

TEST_CASE("runtime: unloading an unknown plugin is NOT_FOUND", "[loader]") {
    Runtime rt(isolated_options());
    try {
        rt.unload_plugin("no_such_plugin");
        FAIL("unload of an unknown plugin succeeded");
    } catch (const ferro::host::Error& e) {
        CHECK(e.code() == FERRO_NOT_FOUND);
        CHECK_THAT(e.what(), Catch::Contains("no_such_plugin"));
    }
}

TEST_CASE("runtime: an application log callback receives loader messages", "[loader]") {
    ferro::test::CapturedLog captured;
    auto options = isolated_options();
    options.log_level = FERRO_LOG_INFO;
    options.log_callback = ferro::test::capture_log;
    options.log_user = &captured;
    Runtime rt(options);
    rt.load_plugin(corpus_file("good_family"));
    rt.load_plugin(corpus_file("garbage"));
    REQUIRE(captured.lines.size() == 2);
    CHECK_THAT(captured.lines[0], Catch::StartsWith("info loader: loaded plugin 'fixture_good'"));
    CHECK_THAT(captured.lines[1], Catch::StartsWith("warn loader: skipped"));
    CHECK_THAT(captured.lines[1], Catch::Contains("stage open"));
}
