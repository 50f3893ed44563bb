// ferro-inspect's probe mode (`ferro-inspect --probe FILE`, run by probe_isolated in a child):
// loads one plugin file into a fresh runtime that loads nothing else and prints JSON lines on
// stdout: {"event": "stage", "stage": S} as the loader enters each stage (from its trace log),
// then one {"event": "result", ...} describing the plugin or why it failed to load.
#pragma once

#include <string>

namespace ferro::inspect {

int run_probe(const std::string& file);  // the process's exit code

}  // namespace ferro::inspect
