// ferro-inspect's probe mode (`ferro-inspect --probe FILE...`, run by probe_isolated in a
// child): loads the plugin files into a fresh runtime that loads nothing else and prints JSON
// lines on stdout: {"event": "stage", "stage": S, "file": F} as the loader enters each stage
// (from its trace log), then one {"event": "result", "plugins": [...]} describing each plugin
// or why it failed to load; with detail, every op's attributes, dtypes and rules, modules and
// devices; with matrix, the op x engine x dtype support of the whole runtime.
#pragma once

#include <string>
#include <vector>

namespace ferro::inspect {

int run_probe(const std::vector<std::string>& files, bool detail, bool matrix);  // the exit code

}  // namespace ferro::inspect
