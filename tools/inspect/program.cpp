#include "program.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <stdexcept>

namespace ferro::inspect {
namespace {

std::string shape_of(const nlohmann::json& j) {
    return fmt::format("[{}]", fmt::join(j.at("shape").get<std::vector<int64_t>>(), ", "));
}

std::string place_of(const nlohmann::json& out) {
    if (!out.contains("place")) return "made by the host op";
    const std::string place = out.at("place");
    if (place == "arena")
        return fmt::format("arena {} at {}", out.at("engine").get<std::string>(), out.at("offset").get<uint64_t>());
    if (place == "owned") return "own buffer, kept";
    return "allocated by each run";
}

}  // namespace

nlohmann::json read_program(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error(fmt::format("program: cannot read {}", file));
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("program: {} is not JSON: {}", file, e.what()));
    }
    if (!doc.is_object() || doc.value("schema", 0) != 1 || !doc.contains("steps")) {
        throw std::runtime_error(
            fmt::format("program: {} is not a program description (schema 1, from "
                        "PreparedProgram::describe or ferro_prepared_describe)",
                        file));
    }
    return doc;
}

std::string render_program(const nlohmann::json& p) {
    std::string s = fmt::format("program: {} inputs, {} constants, {} steps, {} outputs\n", p.at("inputs").size(),
                                p.at("constants").size(), p.at("steps").size(), p.at("outputs").size());
    s += "inputs:\n";
    size_t i = 0;
    for (const auto& in : p.at("inputs")) {
        s += fmt::format("  {:>3}  {} {} on {}", i++, in.at("dtype").get<std::string>(), shape_of(in),
                         in.at("engine").get<std::string>());
        if (in.contains("bounds"))
            s += fmt::format("  (bounds [{}], 0: fixed)", fmt::join(in.at("bounds").get<std::vector<int64_t>>(), ", "));
        s += "\n";
    }
    s += "steps:\n";
    size_t k = 0;
    for (const auto& step : p.at("steps")) {
        std::string runs = "host op";
        if (step.at("runs") == "plan") {
            const std::string module = step.at("module");
            runs = module == "built-in" ? "built-in plan" : "plan of " + module;
        }
        const auto reads = step.at("inputs").get<std::vector<std::string>>();
        std::string op = step.at("op").get<std::string>();
        if (step.contains("ops")) op = fmt::format("fused ({})", fmt::join(step.at("ops").get<std::vector<std::string>>(), ", "));
        s += fmt::format("  {:>3}  {} on {}, {}; reads {}\n", k++, op, step.at("engine").get<std::string>(), runs,
                         reads.empty() ? "nothing" : fmt::format("{}", fmt::join(reads, ", ")));
        for (const auto& out : step.at("outputs")) {
            s += out.contains("dtype") ? fmt::format("         -> {} {}, {} bytes, {}\n", out.at("dtype").get<std::string>(),
                                                     shape_of(out), out.at("bytes").get<uint64_t>(), place_of(out))
                                       : fmt::format("         -> {}\n", place_of(out));
        }
        if (step.value("workspace_bytes", uint64_t{0}) > 0) {
            s += fmt::format("         workspace {} bytes\n", step.at("workspace_bytes").get<uint64_t>());
        }
    }
    s += fmt::format("outputs: {}\n", fmt::join(p.at("outputs").get<std::vector<std::string>>(), ", "));
    const auto& m = p.at("memory");
    s += fmt::format("memory: intermediates {} bytes as eager calls allocate them; a run keeps {} bytes\n",
                     m.at("intermediate_bytes").get<uint64_t>(), m.at("run_bytes").get<uint64_t>());
    for (const auto& a : m.at("arenas")) {
        s += fmt::format("  arena on {}: {} bytes\n", a.at("engine").get<std::string>(), a.at("bytes").get<uint64_t>());
    }
    if (p.contains("recorded_sessions")) {
        const auto& r = p.at("recorded_sessions");
        const auto made = r.at("recordings").get<uint64_t>(), refused = r.at("refused").get<uint64_t>();
        if (made + refused > 0) {
            s += fmt::format("recorded sessions: {} recorded, submitted again by {} runs; {} the engine could not record\n", made,
                             r.at("resubmissions").get<uint64_t>(), refused);
        }
    }
    if (p.at("gradients").empty()) s += "gradients: none built yet\n";
    for (const auto& g : p.at("gradients")) {
        s += fmt::format("gradient wrt inputs [{}]: forward {} steps, backward {} steps, {} residuals\n",
                         fmt::join(g.at("wrt").get<std::vector<int>>(), ", "), g.at("forward_steps").get<size_t>(),
                         g.at("backward_steps").get<size_t>(), g.at("residuals").get<size_t>());
    }
    return s;
}

}  // namespace ferro::inspect
