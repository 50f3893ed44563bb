// ferro-inspect: what is installed, can I trust it, and why isn't X working (docs/inspector.md).
//
// Exit codes: 0 success; 1 the command ran and found a problem (a plugin that fails to load);
// 2 bad command line; 3 the inspector itself failed.
#include "doctor.hpp"
#include "listing.hpp"
#include "probe.hpp"
#include "show.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>

namespace {

std::string self_path(const char* argv0) {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(argv0) : p.string();
}

constexpr const char* exit_codes =
    "Exit codes: 0 success; 1 a problem was found (a plugin fails to load); 2 bad command line; "
    "3 the inspector itself failed.";

}  // namespace

int main(int argc, char** argv) {
    CLI::App app("ferro-inspect: the plugins ferro finds, what they provide, and why one does not load", "ferro-inspect");
    app.footer(exit_codes);
    app.require_subcommand(0, 1);
    app.fallthrough();  // --json and --timeout after the subcommand too
    bool json = false;
    double timeout = 10;
    std::vector<std::string> probe_files;
    bool detail = false, matrix = false;
    app.add_flag("--json", json, "machine-readable output (schema: docs/inspector.md)");
    app.add_option("--timeout", timeout, "seconds a plugin may take to load before it counts as hung")->capture_default_str();
    app.add_option("--probe", probe_files, "internal: load FILE... in this process and report (the isolated child)")->group("");
    app.add_flag("--detail", detail, "internal: with --probe, every op's attributes and every device")->group("");
    app.add_flag("--matrix", matrix, "internal: with --probe, the op x engine x dtype support")->group("");

    ferro::inspect::ListOptions options;
    auto* list = app.add_subcommand("list", "every file in the plugin search path, with its status, plugin, ABI and what it provides");
    list->add_option("--path", options.dirs, "inspect these directories instead of the search path");
    auto* doctor = app.add_subcommand("doctor", "search path, engines and why they have no device, plugins that do not load, settings");
    doctor->add_option("--path", options.dirs, "inspect these directories instead of the search path");
    std::string target, engine, family;
    auto* show = app.add_subcommand("show", "one plugin's full descriptor: ops with attributes, dtypes and rules; modules; devices");
    show->add_option("plugin", target, "a plugin name (as list shows it) or a file")->required();
    show->add_option("--path", options.dirs, "look for the plugin in these directories instead of the search path");
    auto* ops = app.add_subcommand("ops", "the op x engine x dtype support matrix, with the reason where a module declines");
    ops->add_option("--engine", engine, "only this engine (cpu, vulkan:0, ...)");
    ops->add_option("--family", family, "only this family's ops");
    ops->add_option("--path", options.dirs, "inspect these directories instead of the search path");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    try {
        if (!probe_files.empty()) return ferro::inspect::run_probe(probe_files, detail, matrix);
        options.self = self_path(argv[0]);
        options.timeout_s = timeout;
        if (*doctor) {
            const auto report = ferro::inspect::doctor(options);
            std::cout << (json ? report.dump(2) + "\n" : ferro::inspect::render_doctor(report));
            return report["summary"]["failed"].get<int>() > 0 ? 1 : 0;
        }
        if (*show) {
            const auto report = ferro::inspect::show(options, target);
            std::cout << (json ? report.dump(2) + "\n" : ferro::inspect::render_show(report));
            return report["plugin"]["status"] == "loaded" ? 0 : 1;
        }
        if (*ops) {
            const auto report = ferro::inspect::ops(options, engine, family);
            std::cout << (json ? report.dump(2) + "\n" : ferro::inspect::render_ops(report));
            return 0;
        }
        if (*list || app.get_subcommands().empty()) {
            const auto report = ferro::inspect::list_plugins(options);
            std::cout << (json ? report.dump(2) + "\n" : ferro::inspect::render_list(report));
            return report["summary"]["failed"].get<int>() > 0 ? 1 : 0;
        }
    } catch (const ferro::inspect::NotFound& e) {
        std::fprintf(stderr, "ferro-inspect: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ferro-inspect: %s\n", e.what());
        return 3;
    }
    return 0;
}
