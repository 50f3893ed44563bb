// ferro-inspect, run as a user runs it: crash isolation on the crashing fixtures, agreement
// with the runtime's own loading on the loader corpus, golden text and JSON on the fixtures
// and on the build's real plugins, doctor, exit codes.
#include "ferro_test.hpp"

#include <ferro/capture.hpp>
#include <ferro/linalg.hpp>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace ferro;
using namespace ferro::test;
using nlohmann::json;

namespace {

struct Run {
    int exit_code = -1;
    std::string out;
};

// Runs the inspector with `args` (a shell command line tail), stdout captured, stderr dropped.
Run inspect(const std::string& args, const std::string& env = "") {
    const std::string cmd = env + " " + build_dir() + "/bin/ferro-inspect " + args + " 2>/dev/null";
    Run r;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string crashing_dir() { return build_dir() + "/tests/fixtures/crashing"; }

std::string file_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The entries of a list report by file name.
std::map<std::string, json> by_file(const json& report) {
    std::map<std::string, json> out;
    for (const json& p : report["plugins"]) out[file_name(p["file"])] = p;
    return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

std::string golden(const std::string& name) {
    std::ifstream f(std::string(FERRO_INSPECTOR_GOLDEN) + "/" + name);
    REQUIRE(f.good());
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE(
    "inspector: plugins that segfault, abort, hang or exit while loading are reported by stage, and the good one still loads",
    "[inspector]") {
    const Run r = inspect("list --json --timeout 2 --path " + crashing_dir());
    CHECK(r.exit_code == 1);  // something failed to load
    const json report = json::parse(r.out);
    CHECK(report["command"] == "list");
    CHECK(report["schema"] == 1);
    const auto plugins = by_file(report);
    REQUIRE(plugins.size() == 6);
    const json& segv = plugins.at("libferro_fixture_crash_query.so");
    CHECK(segv["status"] == "failed");
    CHECK(segv["reason"] == "crashed in stage query (signal 11, SIGSEGV)");
    CHECK(segv["crash"]["signal"] == 11);
    CHECK(plugins.at("libferro_fixture_abort_probe.so")["reason"] == "crashed in stage probe (signal 6, SIGABRT)");
    CHECK(plugins.at("libferro_fixture_hang_query.so")["reason"] == "timed out in stage query");
    CHECK(plugins.at("libferro_fixture_hang_query.so")["crash"]["timed_out"] == true);
    CHECK(plugins.at("libferro_fixture_exit_query.so")["reason"] == "exited with status 3 in stage query");
    const json& good = plugins.at("libferro_fixture_good_neighbour.so");
    CHECK(good["status"] == "loaded");
    CHECK(good["name"] == "fixture_good");
    CHECK(good["families"] == json::parse(R"([{"name": "fixture_good", "ops": 2}])"));
    // A plugin that prints to stdout while it loads does not garble the probe's report.
    CHECK(plugins.at("libferro_fixture_noisy_query.so")["status"] == "loaded");
    CHECK(plugins.at("libferro_fixture_noisy_query.so")["name"] == "fixture_noisy");
    CHECK(report["summary"] == json::parse(R"({"files": 6, "loaded": 2, "skipped": 0, "failed": 4})"));
}

TEST_CASE("inspector: list's text output on the crashing fixtures matches the golden file", "[inspector]") {
    const Run r = inspect("list --timeout 2 --path " + crashing_dir());
    CHECK(r.exit_code == 1);
    const std::string abi = "ABI " + std::to_string(FERRO_ABI_MAJOR) + "." + std::to_string(FERRO_ABI_MINOR);
    CHECK(replace_all(replace_all(r.out, crashing_dir(), "{dir}"), abi, "ABI {abi}") == golden("list_crashing.txt"));
}

// Every file of the loader corpus gets, from the isolated probes, the status the runtime gives it
// when it loads the same directory itself (in this process: nothing in the corpus crashes).
TEST_CASE("inspector: list agrees with the runtime's own loading of the loader corpus, stage by stage", "[inspector]") {
    const Run r = inspect("list --json --path " + corpus_dir());
    const auto listed = by_file(json::parse(r.out));
    Runtime::Options o;
    o.plugin_paths = {corpus_dir()};
    o.use_environment_path = false;
    o.use_default_dir = false;
    o.log_level = FERRO_LOG_OFF;
    const Inventory inv = Runtime(o).inventory();
    size_t checked = 0;
    for (const PluginInfo& p : inv.plugins) {
        if (p.builtin) continue;
        INFO(p.path);
        CHECK(listed.at(file_name(p.path))["status"] == "loaded");
        CHECK(listed.at(file_name(p.path))["name"] == p.name);
        ++checked;
    }
    for (const DiagnosticInfo& d : inv.diagnostics) {
        INFO(d.file << ": " << d.message);
        const json& entry = listed.at(file_name(d.file));
        CHECK(entry["status"] != "loaded");
        CHECK(entry["stage"] == d.stage);
        if (d.stage != "register") CHECK(entry["reason"] == d.message);  // the duplicate's wording is the inspector's
        ++checked;
    }
    CHECK(checked == listed.size());
}

TEST_CASE("inspector: the build's real plugins, in text and JSON", "[inspector]") {
    const Run r = inspect("list --json");
    CHECK(r.exit_code == 0);
    const auto plugins = by_file(json::parse(r.out));
    const std::string abi = std::to_string(FERRO_ABI_MAJOR) + "." + std::to_string(FERRO_ABI_MINOR);
    struct Want {
        const char* file;
        const char* name;
        const char* kind;
        const char* family;
        int ops;
    };
    for (const Want& w :
         {Want{"libferro_linalg.so", "linalg", "family", "linalg", 26},
          Want{"libferro_einsum.so", "einsum", "family", "einsum", 2}, Want{"libferro_fft.so", "fft", "family", "fft", 18},
          Want{"libferro_comm.so", "comm", "family", "comm", 7},
          Want{"libferro_engine_null.so", "engine_null", "engine", "", 0}}) {
        INFO(w.file);
        const json& p = plugins.at(w.file);
        CHECK(p["status"] == "loaded");
        CHECK(p["name"] == w.name);
        CHECK(p["kind"] == w.kind);
        CHECK(p["abi"] == abi);
        if (*w.family) CHECK(p["families"] == json::array({{{"name", w.family}, {"ops", w.ops}}}));
    }
    const json& null_engine = plugins.at("libferro_engine_null.so")["engines"][0];
    CHECK(null_engine["kind"] == "null");
    CHECK(null_engine["devices"] == 0);
    CHECK_THAT(null_engine["reason"].get<std::string>(), Catch::Contains("no devices"));
    const Run text = inspect("list");
    CHECK_THAT(text.out, Catch::Contains("libferro_fft.so                    loaded   fft 0.1.0 (ABI " + abi +
                                         ", family): family fft (18 ops)"));
    // The vulkan engine when the build has it: loaded, with its devices or the reason for none.
    const bool vulkan = plugins.count("libferro_engine_vulkan.so") > 0;
    if (vulkan) {
        const json& p = plugins.at("libferro_engine_vulkan.so");
        CHECK(p["status"] == "loaded");
        CHECK(p["kind"] == "engine");
        const json& engine = p["engines"][0];
        CHECK(engine["kind"] == "vulkan");
        if (engine["devices"] == 0) CHECK(!engine["reason"].get<std::string>().empty());
    }
    // VkFFT's module with it: a plugin of modules for a family it does not define.
    const bool vkfft = plugins.count("libferro_fft_vulkan.so") > 0;
    if (vkfft) {
        const json& p = plugins.at("libferro_fft_vulkan.so");
        CHECK(p["status"] == "loaded");
        CHECK(p["kind"] == "modules");
        CHECK(p["module_families"] == json::array({"fft"}));
        CHECK_THAT(text.out, Catch::Contains("fft_vulkan 0.1.0 (ABI " + abi + ", modules): modules for family fft"));
    }
    // The cuda engine when the build has it: loaded everywhere; without a GPU, 0 devices and
    // the CUDA runtime's error by name.
    const bool cuda = plugins.count("libferro_engine_cuda.so") > 0;
    if (cuda) {
        const json& p = plugins.at("libferro_engine_cuda.so");
        CHECK(p["status"] == "loaded");
        CHECK(p["kind"] == "engine");
        const json& engine = p["engines"][0];
        CHECK(engine["kind"] == "cuda");
        if (engine["devices"] == 0)
            CHECK_THAT(engine["reason"].get<std::string>(), Catch::Contains("cuda", Catch::CaseSensitive::No));
    }
    // cuFFT's module with it.
    const bool cufft = plugins.count("libferro_fft_cuda.so") > 0;
    if (cufft) {
        const json& p = plugins.at("libferro_fft_cuda.so");
        CHECK(p["status"] == "loaded");
        CHECK(p["kind"] == "modules");
        CHECK(p["module_families"] == json::array({"fft"}));
    }
    // cuSOLVER's module with it.
    const bool cusolver = plugins.count("libferro_linalg_cuda.so") > 0;
    if (cusolver) {
        const json& p = plugins.at("libferro_linalg_cuda.so");
        CHECK(p["status"] == "loaded");
        CHECK(p["kind"] == "modules");
        CHECK(p["module_families"] == json::array({"linalg"}));
    }
    const int files = 5 + vulkan + vkfft + cuda + cufft + cusolver;
    CHECK_THAT(text.out, Catch::Contains("files: " + std::to_string(files) + " loaded, 0 skipped, 0 failed"));
}

TEST_CASE("inspector: doctor shows the search path with its origins, engines with their reasons, problems and settings",
          "[inspector]") {
    const Run r = inspect("doctor --json --timeout 2 --path " + crashing_dir(), "FERRO_LOG_LEVEL=error");
    CHECK(r.exit_code == 1);
    const json d = json::parse(r.out);
    CHECK(d["command"] == "doctor");
    CHECK(d["search_path"] == json::array({{{"path", crashing_dir()}, {"origin", "runtime option"}, {"exists", true}}}));
    CHECK(d["engines"][0]["kind"] == "cpu");
    CHECK(d["engines"][0]["devices"] == 1);
    CHECK(d["problems"].size() == 4);  // the four that crash, hang or exit
    bool log_level = false;
    for (const json& s : d["settings"]) {
        if (s["name"] == "FERRO_LOG_LEVEL") {
            CHECK(s["value"] == "error");
            CHECK(s["from"] == "environment");
            log_level = true;
        }
    }
    CHECK(log_level);
    CHECK(d["plan_cache"]["max_entries"].get<uint64_t>() > 0);
    CHECK(d["communicator"]["reason"] == "no comm plugin in the search path: one process, no collectives");
    const Run text = inspect("doctor");
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("communicator: rank 0 of 1 (comm plugin "));
    CHECK_THAT(text.out, Catch::Contains("libferro_comm.so)"));
    CHECK_THAT(text.out, Catch::Contains("null         0 devices (plugin engine_null): the null engine has no devices"));
    CHECK_THAT(text.out, Catch::Contains("plugins: every file in the search path loads"));
}

TEST_CASE("inspector: doctor names both files of a family two plugins provide, and the rule that chose", "[inspector]") {
    const auto dir = std::filesystem::temp_directory_path() / "ferro_inspect_conflict";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const char* name : {"dup_a", "dup_b"}) {
        std::filesystem::copy_file(corpus_dir() + "/libferro_fixture_" + name + ".so",
                                   dir / ("libferro_fixture_" + std::string(name) + ".so"));
    }
    const std::string first = (dir / "libferro_fixture_dup_a.so").string();
    const std::string second = (dir / "libferro_fixture_dup_b.so").string();
    const Run r = inspect("doctor --json --path " + dir.string());
    const Run text = inspect("doctor --path " + dir.string());
    std::filesystem::remove_all(dir);
    const json d = json::parse(r.out);
    REQUIRE(d["problems"].size() == 1);
    CHECK(d["problems"][0]["file"] == second);
    CHECK(d["problems"][0]["stage"] == "register");
    const std::string reason = "family 'fixture_dup' is already provided by " + first +
                               ", loaded first; this file is not registered (the first file on the search path wins)";
    CHECK(d["problems"][0]["reason"] == reason);
    CHECK_THAT(text.out, Catch::Contains("plugins that do not load:\n  " + second + ": skipped, " + reason));
}

TEST_CASE("inspector: an op that kills its process is that op's cell or row; ops and check report the rest", "[inspector]") {
    const std::string dir = build_dir() + "/tests/fixtures/crashing_op";
    const std::string crash = "crashed while running fixture_crash.crashes_in_f64 in f64 on cpu (signal 11, SIGSEGV)";
    // ops failed as a whole (exit 3) for every family before, blaming "stage create".
    for (const std::string filter : {"", " --family fixture_crash", " --family core --engine cpu"}) {
        INFO(filter);
        const Run r = inspect("ops --json --path " + dir + filter);
        CHECK(r.exit_code == 0);
        const json report = json::parse(r.out);
        bool crashed = false, square = false, core = false;
        for (const json& row : report["ops"]) {
            core = core || row["op"] == "core.add";
            if (row["op"] == "fixture_crash.square") square = row["dtypes"].size() == 2 && row["dtypes"][1]["supported"] == true;
            if (row["op"] != "fixture_crash.crashes_in_f64") continue;
            REQUIRE(row["dtypes"].size() == 2);
            CHECK(row["dtypes"][0]["supported"] == true);
            CHECK(row["dtypes"][1]["supported"] == false);
            CHECK(row["dtypes"][1]["reason"] == crash);
            crashed = true;
        }
        CHECK(crashed == (filter.find("core") == std::string::npos));
        CHECK(square == crashed);
        CHECK(core == (filter.find("fixture_crash") == std::string::npos));
    }
    const Run check = inspect("check fixture_crash --json --path " + dir);
    CHECK(check.exit_code == 1);
    const json c = json::parse(check.out);
    CHECK(c["summary"] == json::parse(R"({"pass": 3, "fail": 1, "not_checked": 0})"));
    for (const json& row : c["results"]) {
        const bool culprit = row["op"] == "fixture_crash.crashes_in_f64" && row["dtype"] == "f64";
        CHECK(row["status"] == (culprit ? "fail" : "pass"));
        if (culprit) CHECK(row["messages"] == json::array({crash}));
    }
}

TEST_CASE("inspector: show gives a plugin's ops with attributes, defaults, dtypes and rules, its modules and devices",
          "[inspector]") {
    const Run r = inspect("show fft --json");
    CHECK(r.exit_code == 0);
    const json p = json::parse(r.out)["plugin"];
    CHECK(p["name"] == "fft");
    REQUIRE(p["families"].size() == 1);
    const json& family = p["families"][0];
    CHECK(family["modules"] == json::parse(R"([{"engine": "cpu", "available": true, "reason": ""}])"));
    REQUIRE(family["op_details"].size() == 18);
    json rfft;
    for (const json& op : family["op_details"]) {
        if (op["name"] == "fft.rfft") rfft = op;
    }
    REQUIRE(rfft.is_object());
    CHECK(rfft["dtypes"] == json::parse(R"(["f32", "f64"])"));
    CHECK(rfft["differentiable_inputs"] == json::parse("[0]"));
    CHECK(rfft["vjp"] == true);
    CHECK(rfft["jvp"] == true);
    CHECK(rfft["attrs"][0]["name"] == "n");
    CHECK(rfft["attrs"][0]["default"] == "None");
    CHECK(rfft["attrs"][0]["optional"] == true);
    CHECK(rfft["attrs"][1]["default"] == "-1");
    CHECK(rfft["attrs"][2]["default"] == "\"backward\"");
    // By file, in text; an engine plugin's devices (or why none).
    const Run text = inspect("show " + build_dir() + "/lib/ferro/plugins/libferro_engine_null.so");
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("engine null: 0 devices — the null engine has no devices"));
    const Run linalg = inspect("show linalg");
    CHECK_THAT(linalg.out, Catch::Contains("upper: bool = false — return U with A = U^H U instead of L"));
    // A plugin that crashes is reported, not fatal; an unknown name exits 1 and says where to look.
    const Run crash = inspect("show " + crashing_dir() + "/libferro_fixture_crash_query.so --json");
    CHECK(crash.exit_code == 1);
    CHECK(json::parse(crash.out)["plugin"]["reason"] == "crashed in stage query (signal 11, SIGSEGV)");
    CHECK(inspect("show no_such_plugin").exit_code == 1);
}

TEST_CASE("inspector: ops gives the op x engine x dtype support, with the reason where a module declines", "[inspector]") {
    const Run r = inspect("ops --json --family fft --engine cpu");
    CHECK(r.exit_code == 0);
    const json rows = json::parse(r.out)["ops"];
    REQUIRE(rows.size() == 18);
    for (const json& row : rows) {
        INFO(row.dump());
        CHECK(row["engine"] == "cpu");
        const std::string op = row["op"];
        const bool real_input = op == "fft.rfft" || op == "fft.rfft2" || op == "fft.rfftn" || op.starts_with("fft.ihfft");
        const size_t n = real_input ? 2 : 4;
        CHECK(row["dtypes"].size() == n);
        for (const json& cell : row["dtypes"]) CHECK(cell["supported"] == true);
    }
    // The corpus' fixture_good declines the cpu engine and runs on the fixture engine of another plugin.
    const Run corpus = inspect("ops --json --family fixture_good --path " + corpus_dir());
    const json corpus_report = json::parse(corpus.out);
    std::map<std::string, json> by_engine;
    for (const json& row : corpus_report["ops"]) {
        if (row["op"] == "fixture_good.identity") by_engine[row["engine"].get<std::string>()] = row;
    }
    REQUIRE(by_engine.count("cpu") == 1);
    CHECK(by_engine["cpu"]["reason"] == "fixture_good runs on fixture engines only, not cpu");
    REQUIRE(by_engine.count("fixture:0") == 1);
    CHECK_FALSE(by_engine["fixture:0"].contains("reason"));
    const Run text = inspect("ops --family linalg --engine cpu");
    CHECK_THAT(text.out, Catch::Contains("linalg.svd"));
    CHECK_THAT(text.out, Catch::Contains("engine kind null has no devices"));
}

TEST_CASE("inspector: check passes every real plugin: each op, dtype and engine from the family's examples, gradchecked",
          "[inspector]") {
    for (const char* plugin : {"fft", "linalg", "einsum"}) {
        INFO(plugin);
        const Run r = inspect(std::string("check --json ") + plugin);
        CHECK(r.exit_code == 0);
        const json report = json::parse(r.out);
        CHECK(report["summary"]["fail"] == 0);
        CHECK(report["summary"]["not_checked"] == 0);
        CHECK(report["summary"]["pass"].get<int>() >= 8);
        bool gradchecked = false;
        for (const json& row : report["results"]) gradchecked = gradchecked || row["gradcheck"] == true;
        CHECK(gradchecked);
    }
    // 60 calls on the cpu, and as many on vulkan:0 where the build has VkFFT and a device runs it.
    const auto plugins = by_file(json::parse(inspect("list --json").out));
    bool vulkan_device = false;
    if (plugins.count("libferro_engine_vulkan.so") > 0 && plugins.count("libferro_fft_vulkan.so") > 0) {
        vulkan_device = plugins.at("libferro_engine_vulkan.so")["engines"][0]["devices"].get<int>() > 0;
    }
    const Run text = inspect("check fft --quick");
    CHECK_THAT(text.out, Catch::Contains("PASS        fft.rfft"));
    CHECK_THAT(text.out, Catch::Contains(std::to_string(vulkan_device ? 120 : 60) + " pass, 0 fail, 0 not checked"));
}

TEST_CASE("inspector: check fails, naming the op, on wrong values and on a wrong VJP, and passes the right op next to them",
          "[inspector]") {
    const Run r = inspect("check --json fixture_wrong --path " + build_dir() + "/tests/fixtures/checking");
    CHECK(r.exit_code == 1);
    const json report = json::parse(r.out);
    std::map<std::string, json> by_op;
    for (const json& row : report["results"]) by_op[row["op"].get<std::string>() + " " + row["dtype"].get<std::string>()] = row;
    for (const char* key : {"fixture_wrong.square", "fixture_wrong.square_wrong_values", "fixture_wrong.square_wrong_vjp"}) {
        by_op[key] = by_op[std::string(key) + " f64"];
    }
    REQUIRE(by_op.size() == 8);
    CHECK(by_op["fixture_wrong.square"]["status"] == "pass");
    CHECK(by_op["fixture_wrong.square_wrong_values"]["status"] == "fail");
    CHECK_THAT(by_op["fixture_wrong.square_wrong_values"]["messages"][0].get<std::string>(),
               Catch::Contains("gradcheck: jvp output 0"));
    CHECK(by_op["fixture_wrong.square_wrong_vjp"]["status"] == "fail");
    const std::string vjp_message = by_op["fixture_wrong.square_wrong_vjp"]["messages"][0];
    CHECK_THAT(vjp_message, Catch::Contains("gradcheck: vjp input 0"));
    CHECK_THAT(vjp_message, !Catch::Contains("jvp"));  // its JVP is right
    // A dtype the op declares but its prepare declines fails, with the module's reason.
    CHECK(by_op["fixture_wrong.square_declines_f32 f64"]["status"] == "pass");
    CHECK(by_op["fixture_wrong.square_declines_f32 f32"]["status"] == "fail");
    CHECK_THAT(by_op["fixture_wrong.square_declines_f32 f32"]["messages"][0].get<std::string>(),
               Catch::Contains("fixture_wrong prepares f64 only"));
    CHECK(report["summary"] == json::parse(R"({"pass": 2, "fail": 3, "not_checked": 0})"));
    // ops runs the first example in each dtype: the decline shows as the reason.
    const json ops =
        json::parse(inspect("ops --json --family fixture_wrong --path " + build_dir() + "/tests/fixtures/checking").out);
    bool found = false;
    for (const json& row : ops["ops"]) {
        if (row["op"] != "fixture_wrong.square_declines_f32") continue;
        found = true;
        REQUIRE(row["dtypes"].size() == 2);
        CHECK(row["dtypes"][0]["supported"] == false);
        CHECK_THAT(row["dtypes"][0]["reason"].get<std::string>(), Catch::Contains("fixture_wrong prepares f64 only"));
        CHECK(row["dtypes"][1]["supported"] == true);
        CHECK(row["dtypes"][1]["tried"] == true);
    }
    CHECK(found);
    const Run text = inspect("check fixture_wrong --path " + build_dir() + "/tests/fixtures/checking");
    CHECK_THAT(text.out, Catch::Contains("FAIL        fixture_wrong.square_wrong_vjp"));
}

// The C++ face of the examples hook (ABI 1.3): what check runs.
TEST_CASE("inspector: check runs the engine suite on an engine plugin's engines: it fails on kernels an engine claims and lacks",
          "[inspector]") {
    const Run r = inspect("check --json fixture_unimplemented_engine --path " + build_dir() + "/tests/fixtures/checking_engine");
    CHECK(r.exit_code == 1);
    const json report = json::parse(r.out);
    REQUIRE(report["results"].size() == 7);  // one row per part of the suite, on its one device
    std::map<std::string, json> by_part;
    for (const json& row : report["results"]) {
        CHECK(row["engine"] == "fixture:0");
        by_part[row["op"].get<std::string>()] = row;
    }
    // It claims f64: every part that runs in f64 fails, naming the call and the engine's refusal.
    const json& fill = by_part.at("core: fill and casts");
    CHECK(fill["status"] == "fail");
    CHECK_THAT(fill["messages"][0].get<std::string>(), Catch::Contains("fill and casts in f64: stopped: UNIMPLEMENTED"));
    CHECK_THAT(fill["messages"][0].get<std::string>(), Catch::Contains("fixture engine"));
    const json& unary = by_part.at("core: unary ops");
    CHECK(unary["status"] == "fail");
    CHECK_THAT(unary["messages"][0].get<std::string>(), Catch::Contains("fixture:0 refused what the cpu engine runs"));
    CHECK(by_part.at("core: gradients")["status"] == "fail");
    // The corpus engine claims no dtype: nothing to compare is "not checked", never "pass".
    const json none = json::parse(inspect("check --json fixture_engine --path " + build_dir() + "/tests/fixtures/corpus").out);
    CHECK(none["summary"] == json::parse(R"({"pass": 0, "fail": 0, "not_checked": 7})"));
    CHECK_THAT(none["results"][0]["messages"][0].get<std::string>(), Catch::Contains("reports none of the dtypes"));
}

TEST_CASE("inspector: a family's examples through the runtime: inputs on the asked engine, attributes, errors", "[inspector]") {
    Runtime::Options o;
    o.use_environment_path = false;
    o.use_default_dir = false;
    o.plugin_paths = {build_dir() + "/lib/ferro/plugins"};
    o.log_level = FERRO_LOG_OFF;
    const Runtime rt(o);
    const auto fft = rt.op_examples("fft.rfft", DType::f32);
    REQUIRE(fft.size() == 2);
    CHECK(fft[0].inputs[0].dtype() == DType::f32);
    CHECK(fft[0].inputs[0].shape() == Shape{3, 10});
    CHECK(fft[1].attrs.size() == 3);
    CHECK_FALSE(fft[1].what.empty());
    const auto chol = rt.op_examples("linalg.cholesky", DType::c128);
    REQUIRE_FALSE(chol.empty());
    CHECK(chol[0].input_flags[0] == FERRO_EXAMPLE_HERMITIAN);
    CHECK(rt.op_examples("core.add", DType::f64).empty());  // the core family has no hook
    check_error([&] { rt.op_examples("fft.nothing", DType::f64); }, FERRO_NOT_FOUND,
                "ferro_op_examples: no op named 'fft.nothing'");
    check_error([&] { rt.op_examples("fft.fft", DType::f64, "vulkan:7"); }, FERRO_NOT_FOUND,
                "ferro_op_examples: no engine named 'vulkan:7'");
}

TEST_CASE("inspector: exit codes (bad command line 2) and help that documents them", "[inspector]") {
    CHECK(inspect("frobnicate").exit_code == 2);
    CHECK(inspect("list --no-such-flag").exit_code == 2);
    const Run help = inspect("--help");
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("Exit codes: 0 success; 1 a problem was found"));
}

TEST_CASE("inspector: program shows a saved description of a prepared program: steps, plans, memory, gradients", "[inspector]") {
    Runtime rt = make_runtime({build_dir() + "/lib/ferro/plugins"});
    const Tensor x = rt.rand({3, 4}, DType::f64, 1), w = rt.rand({4, 4}, DType::f64, 2);
    Capture capture(rt, {x, w});
    const Tensor y = (linalg::inv(w + rt.eye(4) * 4.0).matmul(x.transpose()).tanh() * 0.5).reshape({12});
    const PreparedProgram step = capture.end({y.sum(), y}).prepare();
    Tensor w2 = rt.rand({4, 4}, DType::f64, 3);
    w2.set_requires_grad();
    (void)grad({step({x, w2}).at(0)}, {w2});  // builds the gradient for input 1
    const json doc = json::parse(step.describe());
    CHECK(doc["schema"] == 1);
    REQUIRE(doc["inputs"].size() == 2);
    CHECK(doc["inputs"][0]["shape"] == json::array({3, 4}));
    std::map<std::string, json> steps;  // by op, fused steps by the ops they run
    for (const json& s : doc["steps"]) steps[s["op"] == "fused" ? s["ops"].dump() : s["op"].get<std::string>()] = s;
    REQUIRE(steps.count("linalg.inv") == 1);
    CHECK(steps["linalg.inv"]["runs"] == "plan");
    CHECK(steps["linalg.inv"]["module"] == "linalg");
    CHECK(steps["core.transpose"]["runs"] == "host op");
    CHECK(steps["core.matmul"]["module"] == "built-in");
    CHECK(steps["core.matmul"]["outputs"][0]["place"] == "arena");               // an intermediate
    const std::string tanh_mul = json::array({"core.tanh", "core.mul"}).dump();  // fused
    REQUIRE(steps.count(tanh_mul) == 1);
    CHECK(steps[tanh_mul]["outputs"][0]["place"] == "fresh");  // the reshape returned views it
    CHECK(doc["memory"]["run_bytes"].get<uint64_t>() < doc["memory"]["intermediate_bytes"].get<uint64_t>());
    REQUIRE(doc["gradients"].size() == 1);
    CHECK(doc["gradients"][0]["wrt"] == json::array({1}));

    const std::string file = std::filesystem::temp_directory_path() / "ferro-inspector-program.json";
    std::ofstream(file) << step.describe();
    const Run text = inspect("program " + file);
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("program: 2 inputs, "));
    CHECK_THAT(text.out, Catch::Contains("linalg.inv on cpu, plan of linalg; reads"));
    CHECK_THAT(text.out, Catch::Contains("core.transpose on cpu, host op; reads input 0"));
    CHECK_THAT(text.out, Catch::Contains("fused (core.tanh, core.mul) on cpu, built-in plan; reads step"));
    CHECK_THAT(text.out, Catch::Contains("gradient wrt inputs [1]: forward"));
    const Run as_json = inspect("program --json " + file);
    CHECK(as_json.exit_code == 0);
    CHECK(json::parse(as_json.out) == doc);
    std::ofstream(file) << "{\"plugins\": []}";
    CHECK(inspect("program " + file).exit_code == 1);
    CHECK(inspect("program /nonexistent/program.json").exit_code == 1);
    std::filesystem::remove(file);
}
