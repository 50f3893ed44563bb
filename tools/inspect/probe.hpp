// ferro-inspect's probe mode (`ferro-inspect --probe FILE...`, run by probe_isolated in a
// child): loads the plugin files into a fresh runtime that loads nothing else and prints JSON
// lines on stdout: {"event": "stage", "stage": S, "file": F} as the loader enters each stage
// (from its trace log), then one {"event": "result", "plugins": [...]} describing each plugin
// or why it failed to load; with detail, every op's attributes, dtypes and rules, modules and
// devices. With matrix (the op x engine x dtype support) or check (the conformance kit), the
// cases stream before the result line, as cases.hpp describes.
#pragma once

#include <string>
#include <vector>

namespace ferro::inspect {

struct ProbeRequest {
    std::vector<std::string> files;
    bool detail = false;  // every op's attributes and every device
    bool matrix = false;  // the op x engine x dtype support
    std::string family;   // ... of this family's ops only ("" = all)
    std::string engine;   // ... and the check, on this engine only ("" = all)
    std::string check;    // run the conformance kit on this plugin ("" = no)
    bool quick = false;
    size_t from = 0;  // the matrix's or the check's first case to run (cases.hpp)
};

int run_probe(const ProbeRequest& request);  // the exit code

}  // namespace ferro::inspect
