#include "isolate.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <vector>

extern char** environ;

namespace ferro::inspect {
namespace {

// Reads what is available on `fd` into `out`; false at end of file.
bool drain(int fd, std::string& out) {
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    out.append(buf, static_cast<size_t>(n));
    return true;
}

void parse_lines(const std::string& text, ProbeOutcome& o) {
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const auto line = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(start),
                                                text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
        start = end + 1;
        if (!line.is_object()) continue;
        const std::string event = line.value("event", "");
        if (event == "stage") o.last_stage = line.value("stage", "");
        if (event == "result") o.result = line;
        if (event == "case") {
            o.running = line["case"];
            o.running_index = line.value("index", size_t{0});
        }
        if (event == "done") {
            o.done.push_back(line["result"]);
            o.running = nullptr;
        }
    }
}

// The child's environment. In a build with AddressSanitizer (the asan test preset), its
// handler would turn the plugin's SIGSEGV into exit(1); the probe must die of the signal
// itself, so the sanitizer leaves those signals alone in the child.
std::vector<std::string> child_environment() {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
#if defined(__SANITIZE_ADDRESS__)
    const std::string keep = "handle_segv=0:handle_sigbus=0:handle_sigfpe=0";
    auto it = std::find_if(env.begin(), env.end(), [](const std::string& v) { return v.rfind("ASAN_OPTIONS=", 0) == 0; });
    if (it == env.end()) env.push_back("ASAN_OPTIONS=" + keep);
    else *it += ":" + keep;
#endif
    return env;
}

}  // namespace

std::string ProbeOutcome::failure() const {
    std::string where = last_stage.empty() ? "before loading" : "in stage " + last_stage;
    if (running.is_object()) {
        where = fmt::format("while running {}{} on {}", running.value("op", "?"),
                            running.contains("dtype") ? " in " + running["dtype"].get<std::string>() : "",
                            running.value("engine", "?"));
    }
    if (timed_out) return fmt::format("timed out {}", where);
    if (signal != 0) {
        const char* name = sigabbrev_np(signal);
        return fmt::format("crashed {} (signal {}{}{})", where, signal, name ? ", SIG" : "", name ? name : "");
    }
    if (exit_code != 0) return fmt::format("exited with status {} {}", exit_code, where);
    return fmt::format("ended without a result {}", where);
}

nlohmann::json ProbeOutcome::failed_entry(const std::string& file) const {
    return {{"file", file},
            {"status", "failed"},
            {"stage", last_stage},
            {"reason", failure()},
            {"crash", {{"signal", signal}, {"exit_code", exit_code}, {"timed_out", timed_out}, {"stderr", stderr_tail}}}};
}

ProbeOutcome probe_isolated(const std::string& self, const std::vector<std::string>& files, double timeout_s,
                            const std::vector<std::string>& flags) {
    ProbeOutcome o;
    int out_pipe[2], err_pipe[2];
    // Close-on-exec: a child spawned at the same time by another thread must not inherit these
    // ends, or this child's end of file would wait for that child too. dup2 onto the child's
    // stdout and stderr clears the flag there.
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
    posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
    std::vector<std::string> args{self};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("--probe");
    args.insert(args.end(), files.begin(), files.end());
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = child_environment();
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (rc != 0) {
        close(out_pipe[0]);
        close(err_pipe[0]);
        throw std::runtime_error(fmt::format("cannot run {} in probe mode: {}", self, std::strerror(rc)));
    }
    std::string out, err;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    bool out_open = true, err_open = true;
    while (out_open || err_open) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            o.timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
        if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
        if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) out_open = drain(out_pipe[0], out);
        if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) err_open = drain(err_pipe[0], err);
    }
    close(out_pipe[0]);
    close(err_pipe[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    parse_lines(out, o);
    if (!o.timed_out) {
        if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
        if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    }
    o.finished = !o.timed_out && o.signal == 0 && o.exit_code == 0 && o.result.is_object();
    o.stderr_tail = err.size() > 400 ? err.substr(err.size() - 400) : err;
    return o;
}

std::vector<nlohmann::json> run_cases(const std::string& self, const std::vector<std::string>& files, double timeout_s,
                                      const std::vector<std::string>& flags, KilledCase killed) {
    std::vector<nlohmann::json> results;
    for (size_t from = 0;;) {
        std::vector<std::string> with_from = flags;
        with_from.insert(with_from.end(), {"--from", std::to_string(from)});
        const ProbeOutcome o = probe_isolated(self, files, timeout_s, with_from);
        results.insert(results.end(), o.done.begin(), o.done.end());
        if (o.finished) return results;
        if (!o.running.is_object()) throw std::runtime_error("the plugins that load one by one failed together: " + o.failure());
        results.push_back(killed(o.running, o));
        from = o.running_index + 1;
    }
}

}  // namespace ferro::inspect
