#include "doctor.hpp"

#include <ferro/ferro.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <thread>

namespace ferro::inspect {
namespace {

// A setting: its value from the environment, or what the host uses without it.
nlohmann::json setting(const char* name, const std::string& fallback, const char* effect) {
    const char* v = std::getenv(name);
    return {{"name", name},
            {"value", v != nullptr ? v : fallback},
            {"from", v != nullptr ? "environment" : "default"},
            {"effect", effect}};
}

// This process's rank and size as the comm plugin of the listing answers them (under mpirun,
// each rank's doctor says its own), or why it cannot.
nlohmann::json communicator(const nlohmann::json& list) {
    const char* launched = std::getenv("OMPI_COMM_WORLD_SIZE");
    nlohmann::json c = {{"plugin", ""}, {"rank", 0}, {"size", 1}, {"launcher_size", launched != nullptr ? launched : ""}};
    for (const auto& p : list["plugins"]) {
        if (p["status"] != "loaded" || p["name"] != "comm") continue;
        c["plugin"] = p["file"];
        try {
            Runtime::Options ro;
            ro.autoload = false;
            ro.use_environment_path = false;
            ro.use_default_dir = false;
            ro.log_level = FERRO_LOG_OFF;
            Runtime rt(ro);
            rt.load_plugin(p["file"].get<std::string>());
            const Runtime::RankSize rs = rt.rank_size();
            c["rank"] = rs.rank;
            c["size"] = rs.size;
            c["reason"] = "";
        } catch (const Error& e) {
            c["reason"] = e.what();
        }
        return c;
    }
    c["reason"] = "no comm plugin in the search path: one process, no collectives";
    return c;
}

}  // namespace

nlohmann::json doctor(const ListOptions& options) {
    const nlohmann::json list = list_plugins(options);
    nlohmann::json r = {{"command", "doctor"}, {"schema", 1}, {"search_path", list["search_path"]}};
    r["engines"] = nlohmann::json::array();
    Runtime::Options ro;
    ro.autoload = false;
    const Runtime builtin(ro);
    const ferro_plan_cache_stats cache = builtin.plan_cache_stats();
    r["plan_cache"] = {{"max_entries", cache.max_entries}, {"max_bytes", cache.max_bytes}};
    for (const EngineInfo& e : builtin.inventory().engines) {  // built in
        r["engines"].push_back({{"kind", e.kind},
                                {"plugin", e.plugin},
                                {"devices", 1},
                                {"names", {e.name}},
                                {"reason", ""},
                                {"details", e.details}});
    }
    r["problems"] = nlohmann::json::array();
    for (const auto& p : list["plugins"]) {
        if (p["status"] == "loaded") {
            for (const auto& e : p["engines"]) {
                r["engines"].push_back({{"kind", e["kind"]},
                                        {"plugin", p["name"]},
                                        {"devices", e["devices"]},
                                        {"names", e["names"]},
                                        {"reason", e["reason"]}});
            }
        } else {
            r["problems"].push_back(
                {{"file", p["file"]}, {"status", p["status"]}, {"stage", p.value("stage", "")}, {"reason", p["reason"]}});
        }
    }
    r["communicator"] = communicator(list);
    const std::string cores = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
    r["settings"] = {
        setting("FERRO_PLUGIN_PATH", "", "extra plugin directories, searched before the default one"),
        setting("FERRO_LOG_LEVEL", "warn", "trace | debug | info | warn | error | off, unless the application sets one"),
        setting("FERRO_CPU_THREADS", cores, "the cpu engine's pool, and FFTW's threads on large transforms"),
        setting("FERRO_CPU_CACHE_MB", "1/8 of physical memory",
                "freed blocks of 64 KiB and more the cpu engine keeps for reuse (0 also stops the reuse of 1-64 KiB blocks)"),
        setting("FERRO_CPU_HUGE_PAGES", "1", "0: no 2 MiB page advice for the cpu engine's fresh blocks of 4 MiB and more"),
        setting("FERRO_FFT_WISDOM", "", "FFTW wisdom files PREFIX.f64 / PREFIX.f32, read at start and kept up to date"),
        setting("FERRO_FUSE", "1", "0: a prepared program runs its elementwise steps one by one (read at prepare)"),
        setting("FERRO_RECORD", "1",
                "0: a prepared program records its engine sessions at each run instead of submitting a recording again "
                "(read at prepare)"),
        setting("FERRO_COMM_TIMEOUT", "600",
                "seconds a collective waits for every rank before DEADLINE_EXCEEDED, unless the call gives its own"),
        setting("OPENBLAS_NUM_THREADS", cores, "OpenBLAS's threads for gemm and LAPACK"),
        setting("LD_LIBRARY_PATH", "",
                "a directory with another libblas.so.3 / liblapack.so.3 first (e.g. /usr/lib/x86_64-linux-gnu/blis-pthread) "
                "runs that BLAS in this process; update-alternatives chooses the system's"),
    };
    r["summary"] = list["summary"];
    return r;
}

std::string render_doctor(const nlohmann::json& r) {
    std::string t = "search path:\n";
    for (const auto& d : r["search_path"]) {
        t += fmt::format("  {} ({}){}\n", d["path"].get<std::string>(), d["origin"].get<std::string>(),
                         d["exists"].get<bool>() ? "" : ": does not exist");
    }
    t += "engines:\n";
    for (const auto& e : r["engines"]) {
        const int n = e["devices"];
        t += fmt::format("  {:<12} {} device{} (plugin {}){}\n", e["kind"].get<std::string>(), n, n == 1 ? "" : "s",
                         e["plugin"].get<std::string>(), n == 0 ? ": " + e["reason"].get<std::string>() : "");
        if (const std::string details = e.value("details", ""); !details.empty()) t += fmt::format("  {:<12} {}\n", "", details);
    }
    t += r["problems"].empty() ? "plugins: every file in the search path loads\n" : "plugins that do not load:\n";
    for (const auto& p : r["problems"]) {
        const std::string stage = p["stage"];
        t += fmt::format("  {}: {}{}\n", p["file"].get<std::string>(),
                         p["status"].get<std::string>() == "skipped" ? "skipped, " : "", p["reason"].get<std::string>());
    }
    const auto& c = r["communicator"];
    const std::string reason = c["reason"];
    t += reason.empty() ? fmt::format("communicator: rank {} of {} (comm plugin {})\n", c["rank"].get<int64_t>(),
                                      c["size"].get<int64_t>(), c["plugin"].get<std::string>())
                        : fmt::format("communicator: {}\n", reason);
    t += fmt::format("plan cache: at most {} plans, {} MiB\n", r["plan_cache"]["max_entries"].get<uint64_t>(),
                     r["plan_cache"]["max_bytes"].get<uint64_t>() >> 20);
    t += "settings:\n";
    for (const auto& s : r["settings"]) {
        const std::string value = s["value"];
        t += fmt::format("  {:<22} {:<24} ({}) {}\n", s["name"].get<std::string>(), value.empty() ? "-" : value,
                         s["from"].get<std::string>(), s["effect"].get<std::string>());
    }
    return t;
}

}  // namespace ferro::inspect
