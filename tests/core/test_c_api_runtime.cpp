// The embedding C API for runtimes, plugin loading and inventories, through libferro.so.
#include "build_dir.hpp"

#include <ferro/ferro.h>

#include <map>
#include <string>

using ferro::test::corpus_file;

namespace {

// Takes code and message out of a status and frees it.
struct Outcome {
    uint32_t code;
    std::string message;
};
Outcome take(ferro_status st) {
    Outcome o{ferro_status_code(st), ferro_status_message(st)};
    ferro_status_free(st);
    return o;
}

ferro_runtime* isolated_runtime(const char* const* paths = nullptr, uint32_t n = 0, bool autoload = true) {
    ferro_runtime_options options;
    ferro_runtime_options_init(&options);
    options.use_environment_path = 0;
    options.use_default_dir = 0;
    options.autoload = autoload;
    options.plugin_paths = paths;
    options.n_plugin_paths = n;
    options.log_level_set = 1;
    options.log_level = FERRO_LOG_OFF;
    ferro_runtime* rt = nullptr;
    REQUIRE(ferro_runtime_create(&options, &rt) == nullptr);
    REQUIRE(rt != nullptr);
    return rt;
}

}  // namespace

TEST_CASE("c api: version and ABI are reported", "[core]") {
    CHECK(std::string(ferro_version()) == "0.1.0");
    uint32_t major = 0, minor = 99;
    ferro_abi_version(&major, &minor);
    CHECK(major == FERRO_ABI_MAJOR);
    CHECK(minor == FERRO_ABI_MINOR);
    CHECK(std::string(ferro_status_code_name(FERRO_NOT_DIFFERENTIABLE)) == "NOT_DIFFERENTIABLE");
    CHECK(ferro_status_code(nullptr) == FERRO_OK);
}

TEST_CASE("c api: a failed load returns a status naming file, stage and reason", "[core]") {
    ferro_runtime* rt = isolated_runtime();
    const auto o = take(ferro_runtime_load_plugin(rt, corpus_file("abi_major").c_str()));
    CHECK(o.code == FERRO_INCOMPATIBLE);
    CHECK_THAT(o.message, Catch::StartsWith(corpus_file("abi_major") + ": stage abi: "));
    CHECK_THAT(o.message, Catch::Contains("ABI 2.3"));
    ferro_runtime_destroy(rt);
}

TEST_CASE("c api: the inventory lists plugins, engines, ops and diagnostics of one snapshot", "[core]") {
    const std::string corpus = ferro::test::corpus_dir();
    const char* paths[] = {corpus.c_str()};
    ferro_runtime* rt = isolated_runtime(paths, 1);
    ferro_inventory* inv = nullptr;
    REQUIRE(ferro_runtime_inventory(rt, &inv) == nullptr);
    CHECK(ferro_inventory_epoch(inv) == ferro_runtime_epoch(rt));

    bool found_good = false;
    for (uint32_t i = 0; i < ferro_inventory_plugin_count(inv); ++i) {
        ferro_plugin_info info{};
        info.struct_size = sizeof info;
        REQUIRE(ferro_inventory_plugin(inv, i, &info) == nullptr);
        if (std::string(info.name) == "fixture_good") {
            found_good = true;
            CHECK(info.n_families == 1);
            CHECK(info.abi_major == 1);
            CHECK_THAT(info.path, Catch::EndsWith("libferro_fixture_good_family.so"));
        }
    }
    CHECK(found_good);

    // The built-in cpu engine and the fixture engine's one working device, in name order.
    REQUIRE(ferro_inventory_engine_count(inv) == 2);
    ferro_engine_info engine{};
    engine.struct_size = sizeof engine;
    REQUIRE(ferro_inventory_engine(inv, 0, &engine) == nullptr);
    CHECK(std::string(engine.name) == "cpu");
    CHECK(std::string(engine.plugin) == "engine_cpu");
    CHECK((engine.flags & FERRO_ENGINE_HOST_ADDRESSABLE) != 0);
    REQUIRE(ferro_inventory_engine(inv, 1, &engine) == nullptr);
    CHECK(std::string(engine.name) == "fixture:0");
    CHECK(std::string(engine.plugin) == "fixture_engine");
    CHECK(std::string(engine.device) == "fixture device");

    bool found_identity = false;
    for (uint32_t i = 0; i < ferro_inventory_op_count(inv); ++i) {
        ferro_op_info op{};
        op.struct_size = sizeof op;
        REQUIRE(ferro_inventory_op(inv, i, &op) == nullptr);
        if (std::string(op.name) == "fixture_good.identity") {
            found_identity = true;
            CHECK(std::string(op.family) == "fixture_good");
            CHECK(op.n_inputs == 1);
            CHECK_FALSE(op.has_vjp);
        }
    }
    CHECK(found_identity);

    CHECK(ferro_inventory_diagnostic_count(inv) == 15);
    ferro_diagnostic_info d{};
    d.struct_size = sizeof d;
    REQUIRE(ferro_inventory_diagnostic(inv, 0, &d) == nullptr);
    CHECK(std::string(d.file).find("/libferro_fixture_") != std::string::npos);
    CHECK(std::string(d.message).size() > 0);

    REQUIRE(ferro_inventory_search_dir_count(inv) == 1);
    ferro_search_dir_info dir{};
    dir.struct_size = sizeof dir;
    REQUIRE(ferro_inventory_search_dir(inv, 0, &dir) == nullptr);
    CHECK(std::string(dir.origin) == "runtime option");
    CHECK(dir.exists == 1);
    ferro_inventory_destroy(inv);
    ferro_runtime_destroy(rt);
}

// What ferro-inspect's show and ops read: op attributes (with defaults), dtypes and derivative
// masks, engine dtypes and details, families with their plugin, modules with decline reasons.
TEST_CASE("c api: inventory details: op attributes, dtypes and masks, engine details, families, modules", "[core]") {
    const std::string corpus = ferro::test::corpus_dir();
    const char* paths[] = {corpus.c_str()};
    ferro_runtime* rt = isolated_runtime(paths, 1);
    ferro_inventory* inv = nullptr;
    REQUIRE(ferro_runtime_inventory(rt, &inv) == nullptr);

    bool found_sum = false;
    for (uint32_t i = 0; i < ferro_inventory_op_count(inv); ++i) {
        ferro_op_info op{};
        op.struct_size = sizeof op;
        REQUIRE(ferro_inventory_op(inv, i, &op) == nullptr);
        if (std::string(op.name) != "core.sum") continue;
        found_sum = true;
        ferro_op_detail_info d{};
        d.struct_size = sizeof d;
        REQUIRE(ferro_inventory_op_detail(inv, i, &d) == nullptr);
        CHECK(d.diff_inputs == 1);
        CHECK((d.diff_outputs & 1) == 1);
        CHECK(d.n_views == 0);  // a plan op: its output is a new buffer
        REQUIRE(op.n_attrs == 2);
        ferro_op_attr_info a{};
        a.struct_size = sizeof a;
        REQUIRE(ferro_inventory_op_attr(inv, i, 1, &a) == nullptr);
        CHECK(std::string(a.name) == "keepdim");
        CHECK(a.type == FERRO_ATTR_BOOL);
        CHECK(a.default_value.type == FERRO_ATTR_BOOL);
        CHECK(a.default_value.v.boolean == 0);
        auto o = take(ferro_inventory_op_attr(inv, i, 2, &a));
        CHECK(o.code == FERRO_OUT_OF_RANGE);
        CHECK(o.message == "ferro_inventory_op_attr: index 2 is out of range (count 2)");
    }
    CHECK(found_sum);
    // The views (1.11): transpose always shares its input's storage, reshape when the layout
    // allows; a caller built against 1.10 passes its smaller struct and gets the 1.10 fields.
    std::map<std::string, ferro_op_detail_info> detail;
    for (uint32_t i = 0; i < ferro_inventory_op_count(inv); ++i) {
        ferro_op_info op{};
        op.struct_size = sizeof op;
        REQUIRE(ferro_inventory_op(inv, i, &op) == nullptr);
        ferro_op_detail_info d{};
        d.struct_size = sizeof d;
        REQUIRE(ferro_inventory_op_detail(inv, i, &d) == nullptr);
        detail[op.name] = d;
        if (std::string(op.name) == "core.transpose") {
            ferro_op_detail_info old{};
            old.struct_size = FERRO_STRUCT_SIZE_UP_TO(ferro_op_detail_info, dtypes);
            old.n_views = 77;  // beyond the caller's struct_size: left alone
            REQUIRE(ferro_inventory_op_detail(inv, i, &old) == nullptr);
            CHECK(old.struct_size == FERRO_STRUCT_SIZE_UP_TO(ferro_op_detail_info, dtypes));
            CHECK(old.n_views == 77);
        }
    }
    for (const char* name : {"core.transpose", "core.permute", "core.slice", "core.expand", "core.squeeze", "core.unsqueeze",
                             "core.diagonal", "core.reshape", "core.contiguous"}) {
        INFO(name);
        const ferro_op_detail_info& d = detail.at(name);
        REQUIRE(d.n_views == 1);
        CHECK(d.views[0].output == 0);
        CHECK(d.views[0].input == 0);
        const bool may_copy = std::string(name) == "core.reshape" || std::string(name) == "core.contiguous";
        CHECK(((d.views[0].flags & FERRO_OP_VIEW_MAY_COPY) != 0) == may_copy);
    }
    for (const char* name : {"core.add", "core.copy", "core.randn", "core.matmul"}) {
        INFO(name);
        CHECK(detail.at(name).n_views == 0);
    }

    ferro_engine_detail_info e{};
    e.struct_size = sizeof e;
    REQUIRE(ferro_inventory_engine_detail(inv, 0, &e) == nullptr);  // cpu
    CHECK(e.n_dtypes >= 4);
    CHECK(std::string(e.details).find("BLAS: ") != std::string::npos);  // the one loaded (blas_backend.hpp)

    std::string good_plugin;
    for (uint32_t i = 0; i < ferro_inventory_family_count(inv); ++i) {
        ferro_family_info f{};
        f.struct_size = sizeof f;
        REQUIRE(ferro_inventory_family(inv, i, &f) == nullptr);
        if (std::string(f.id) == "fixture_good") {
            good_plugin = f.plugin;
            CHECK(f.n_ops == 2);
        }
    }
    CHECK(good_plugin == "fixture_good");
    bool declined = false, available = false;
    for (uint32_t i = 0; i < ferro_inventory_module_count(inv); ++i) {
        ferro_module_info m{};
        m.struct_size = sizeof m;
        REQUIRE(ferro_inventory_module(inv, i, &m) == nullptr);
        if (std::string(m.family) != "fixture_good") continue;
        if (std::string(m.engine) == "cpu") {
            declined = !m.available && std::string(m.reason) == "fixture_good runs on fixture engines only, not cpu";
        } else {
            available = m.available && std::string(m.reason).empty();
        }
    }
    CHECK(declined);
    CHECK(available);
    ferro_inventory_destroy(inv);
    ferro_runtime_destroy(rt);
}

TEST_CASE("c api: bad arguments give INVALID_ARGUMENT or OUT_OF_RANGE naming the function", "[core]") {
    auto o = take(ferro_runtime_create(nullptr, nullptr));
    CHECK(o.code == FERRO_INVALID_ARGUMENT);
    CHECK(o.message == "ferro_runtime_create: out_runtime is NULL");

    ferro_runtime_options small{};
    small.struct_size = 8;
    ferro_runtime* rt = nullptr;
    o = take(ferro_runtime_create(&small, &rt));
    CHECK(o.code == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(o.message, Catch::Contains("struct_size is too small"));
    CHECK(rt == nullptr);

    rt = isolated_runtime();
    o = take(ferro_runtime_load_plugin(rt, nullptr));
    CHECK(o.message == "ferro_runtime_load_plugin: path is NULL");

    ferro_inventory* inv = nullptr;
    REQUIRE(ferro_runtime_inventory(rt, &inv) == nullptr);
    ferro_plugin_info info{};
    info.struct_size = sizeof info;
    o = take(ferro_inventory_plugin(inv, 7, &info));
    CHECK(o.code == FERRO_OUT_OF_RANGE);
    CHECK(o.message == "ferro_inventory_plugin: index 7 is out of range (count 2)");  // cpu, core
    ferro_inventory_destroy(inv);

    o = take(ferro_runtime_unload_plugin(rt, "nothing"));
    CHECK(o.code == FERRO_NOT_FOUND);
    ferro_runtime_destroy(rt);
}

TEST_CASE("c api: scan counts loaded and failed plugins on the search path", "[core]") {
    const std::string corpus = ferro::test::corpus_dir();
    const char* paths[] = {corpus.c_str()};
    ferro_runtime* rt = isolated_runtime(paths, 1, /*autoload=*/false);
    CHECK(ferro_runtime_epoch(rt) == 2);  // the two built-ins: cpu engine, core family
    uint32_t loaded = 0, failed = 0;
    REQUIRE(ferro_runtime_scan(rt, &loaded, &failed) == nullptr);
    CHECK(loaded == 4);  // good family, good engine, bad family (loads fine), first duplicate
    CHECK(failed == 15);
    ferro_inventory* before = nullptr;
    REQUIRE(ferro_runtime_inventory(rt, &before) == nullptr);
    // Again: the loaded files are left alone, the broken ones fail again and replace their
    // diagnostics instead of adding to them.
    REQUIRE(ferro_runtime_scan(rt, &loaded, &failed) == nullptr);
    CHECK(loaded == 0);
    CHECK(failed == 15);
    ferro_inventory* after = nullptr;
    REQUIRE(ferro_runtime_inventory(rt, &after) == nullptr);
    CHECK(ferro_inventory_diagnostic_count(after) == ferro_inventory_diagnostic_count(before));
    CHECK(ferro_inventory_plugin_count(after) == ferro_inventory_plugin_count(before));
    ferro_inventory_destroy(before);
    ferro_inventory_destroy(after);
    ferro_runtime_destroy(rt);
}
