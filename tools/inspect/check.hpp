// `ferro-inspect check PLUGIN|FILE`: the conformance kit, through the conformance library
// (tools/conformance) the engine test suites use too. For each engine the plugin provides, the
// engine suite (core ops, products, einsum, gradients against the cpu engine), a row per part.
// For every op of the plugin, every dtype it declares and every engine with a module for its
// family, the family's sample calls (ferro_module_iface.examples) run there and, off the cpu
// engine, are compared with the cpu result; on the cpu engine they must be deterministic. In
// f64 and c128 every differentiable output is gradchecked (VJP and JVP against central
// differences) with respect to every differentiable input. Runs in a child process, like every
// other command.
#pragma once

#include "listing.hpp"

#include <ferro/ferro.hpp>

namespace ferro::inspect {

struct CheckOptions {
    std::string engine;  // only this engine ("" = all)
    bool quick = false;  // the first example per op and dtype; gradcheck in f64 only
};

// Child side: checks the ops of plugin `plugin` in runtime `rt` (everything loaded), one case per
// op, dtype and engine (cases.hpp: each case's result is its row), from case `from` on.
void run_check(Runtime& rt, const std::string& plugin, const CheckOptions& options, size_t from);

// Parent side.
nlohmann::json check(const ListOptions& list, const std::string& target, const CheckOptions& options);
std::string render_check(const nlohmann::json& report);

}  // namespace ferro::inspect
