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

struct ProbeRequest {
    std::vector<std::string> files;
    bool detail = false;       // every op's attributes and every device
    bool matrix = false;       // the op x engine x dtype support
    std::string check;         // run the conformance kit on this plugin ("" = no)
    std::string check_engine;  // ... on this engine only
    bool quick = false;
};

int run_probe(const ProbeRequest& request);  // the exit code

}  // namespace ferro::inspect
