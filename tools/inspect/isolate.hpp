// Runs the inspector itself in probe mode on one plugin file, in a child process with a
// timeout, so that a plugin that segfaults, aborts, hangs or exits while it loads is reported
// ("crashed in stage query (signal 11, SIGSEGV)") instead of taking the inspector down.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ferro::inspect {

struct ProbeOutcome {
    bool finished = false;     // the child printed its result line and exited 0
    nlohmann::json result;     // that result (probe.cpp's schema), when finished
    std::string last_stage;    // the last load stage the child announced ("" before any)
    bool timed_out = false;
    int signal = 0;            // the signal that ended the child, 0 if none
    int exit_code = 0;         // its exit status when it exited without a result
    std::string stderr_tail;   // the end of what it wrote to stderr
    // One line for a report: "crashed in stage query (signal 11, SIGSEGV)", ...
    std::string failure() const;
    // A report entry for `file` whose probe died: status failed, stage, reason, crash details.
    nlohmann::json failed_entry(const std::string& file) const;
};

// `self`: the inspector's own executable; `timeout_s`: seconds before the child is killed;
// `flags`: more probe-mode options ("--detail", "--matrix").
ProbeOutcome probe_isolated(const std::string& self, const std::vector<std::string>& files, double timeout_s,
                            const std::vector<std::string>& flags = {});

}  // namespace ferro::inspect
