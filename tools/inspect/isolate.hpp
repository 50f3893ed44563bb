// Runs the inspector itself in probe mode on one plugin file, in a child process with a
// timeout, so that a plugin that segfaults, aborts, hangs or exits while it loads is reported
// ("crashed in stage query (signal 11, SIGSEGV)") instead of taking the inspector down.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ferro::inspect {

struct ProbeOutcome {                  // NOLINT(bugprone-exception-escape): its members' moves do not allocate
    bool finished = false;             // the child printed its result line and exited 0
    nlohmann::json result;             // that result (probe.cpp's schema), when finished
    std::string last_stage;            // the last load stage the child announced ("" before any)
    std::vector<nlohmann::json> done;  // the results of the cases it finished (cases.hpp), in order
    nlohmann::json running;            // the case it announced and did not finish, null when none
    size_t running_index = 0;          // that case's number
    bool timed_out = false;
    int signal = 0;           // the signal that ended the child, 0 if none
    int exit_code = 0;        // its exit status when it exited without a result
    std::string stderr_tail;  // the end of what it wrote to stderr
    // One line for a report: "crashed in stage query (signal 11, SIGSEGV)", "crashed while running
    // linalg.det in f64 on cpu (signal 11, SIGSEGV)", ...
    std::string failure() const;
    // A report entry for `file` whose probe died: status failed, stage, reason, crash details.
    nlohmann::json failed_entry(const std::string& file) const;
};

// `self`: the inspector's own executable; `timeout_s`: seconds before the child is killed;
// `flags`: more probe-mode options ("--detail", "--matrix").
ProbeOutcome probe_isolated(const std::string& self, const std::vector<std::string>& files, double timeout_s,
                            const std::vector<std::string>& flags = {});

// A probe whose work is cases (cases.hpp), isolated case by case: runs it from case 0, and again
// after each case that kills its child (a crash, an abort, a hang), until a child finishes.
// Returns every case's result in order: those the children reported and, for each case that
// killed one, `killed(case, outcome)`. Throws when a child dies outside any case (loading the
// plugins, creating modules): there is no case to skip then.
using KilledCase = nlohmann::json (*)(const nlohmann::json& the_case, const ProbeOutcome& outcome);
std::vector<nlohmann::json> run_cases(const std::string& self, const std::vector<std::string>& files, double timeout_s,
                                      const std::vector<std::string>& flags, KilledCase killed);

}  // namespace ferro::inspect
