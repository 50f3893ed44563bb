// ferro-inspect: what is installed, can I trust it, and why isn't X working (docs/inspector.md).
//
// Exit codes: 0 success; 1 the command ran and found a problem (a plugin that fails to load);
// 2 bad command line; 3 the inspector itself failed.
#include "check.hpp"
#include "doctor.hpp"
#include "listing.hpp"
#include "probe.hpp"
#include "program.hpp"
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
    "Exit codes: 0 success; 1 a problem was found (a plugin fails to load, a check fails); 2 bad command line; "
    "3 the inspector itself failed.";

}  // namespace

// The command line, parsed and run; main adds the last catch.
int run(int argc, char** argv) {
    CLI::App app("ferro-inspect: the plugins ferro finds, what they provide, and why one does not load", "ferro-inspect");
    app.footer(exit_codes);
    app.require_subcommand(0, 1);
    app.fallthrough();  // --json and --timeout after the subcommand too
    bool json = false;
    double timeout = 10;
    ferro::inspect::ProbeRequest probe;
    app.add_flag("--json", json, "machine-readable output (schema: docs/inspector.md)");
    app.add_option("--timeout", timeout, "seconds a plugin may take to load before it counts as hung")->capture_default_str();
    app.add_option("--probe", probe.files, "internal: load FILE... in this process and report (the isolated child)")->group("");
    app.add_flag("--detail", probe.detail, "internal: with --probe, every op's attributes and every device")->group("");
    app.add_flag("--matrix", probe.matrix, "internal: with --probe, the op x engine x dtype support")->group("");
    app.add_option("--matrix-family", probe.family, "internal: with --matrix, this family's ops only")->group("");
    app.add_option("--check", probe.check, "internal: with --probe, the conformance kit on this plugin")->group("");
    app.add_option("--only-engine", probe.engine, "internal: with --matrix or --check, this engine only")->group("");
    app.add_flag("--quick", probe.quick, "internal: with --check, the quick kit")->group("");
    app.add_option("--from", probe.from, "internal: with --matrix or --check, the first case to run")->group("");

    ferro::inspect::ListOptions options;
    auto* list =
        app.add_subcommand("list", "every file in the plugin search path, with its status, plugin, ABI and what it provides");
    list->add_option("--path", options.dirs, "inspect these directories instead of the search path");
    auto* doctor =
        app.add_subcommand("doctor", "search path, engines and why they have no device, plugins that do not load, settings");
    doctor->add_option("--path", options.dirs, "inspect these directories instead of the search path");
    std::string target, engine, family;
    auto* show =
        app.add_subcommand("show", "one plugin's full descriptor: ops with attributes, dtypes and rules; modules; devices");
    show->add_option("plugin", target, "a plugin name (as list shows it) or a file")->required();
    show->add_option("--path", options.dirs, "look for the plugin in these directories instead of the search path");
    ferro::inspect::CheckOptions check_options;
    auto* check = app.add_subcommand("check",
                                     "the conformance kit: every op on every engine and dtype against the cpu result, "
                                     "gradcheck of every differentiable output");
    check->add_option("plugin", target, "a plugin name (as list shows it) or a file")->required();
    check->add_option("--engine", check_options.engine, "only this engine (cpu, vulkan:0, ...)");
    check->add_flag("--quick", check_options.quick, "the first example of each op and dtype; gradcheck in f64 only");
    check->add_option("--path", options.dirs, "look for plugins in these directories instead of the search path");
    auto* ops = app.add_subcommand("ops", "the op x engine x dtype support matrix, with the reason where a module declines");
    ops->add_option("--engine", engine, "only this engine (cpu, vulkan:0, ...)");
    ops->add_option("--family", family, "only this family's ops");
    ops->add_option("--path", options.dirs, "inspect these directories instead of the search path");
    std::string program_file;
    auto* program = app.add_subcommand("program",
                                       "a prepared program's description (saved from PreparedProgram::describe): steps, "
                                       "plans, memory, gradients");
    program->add_option("file", program_file, "the saved description (JSON)")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    try {
        if (!probe.files.empty()) return ferro::inspect::run_probe(probe);
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
        if (*check) {
            const auto report = ferro::inspect::check(options, target, check_options);
            std::cout << (json ? report.dump(2) + "\n" : ferro::inspect::render_check(report));
            return report["summary"]["fail"].get<int>() > 0 ? 1 : 0;
        }
        if (*program) {
            nlohmann::json report;
            try {
                report = ferro::inspect::read_program(program_file);
            } catch (const std::runtime_error& e) {
                std::fprintf(stderr, "ferro-inspect: %s\n", e.what());
                return 1;
            }
            std::cout << (json ? report.dump(2) + "\n" : ferro::inspect::render_program(report));
            return 0;
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

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {  // setting up the command line itself failed
        std::fprintf(stderr, "ferro-inspect: %s\n", e.what());
        return 3;
    }
}
