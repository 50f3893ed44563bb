// The host's logger: spdlog to stderr, or the application's callback when one is installed.
// One per runtime, so two runtimes in one process can log to different places.
#pragma once

#include <ferro/types.h>

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spdlog {
class logger;
}

namespace ferro::host {

// Same signature as ferro_log_callback in ferro.h. May be called from any thread.
using LogCallback = void (*)(void* user, uint32_t level, const char* source, const char* message);

// "trace" | "debug" | "info" | "warn" | "error" | "off" (case-insensitive), or nullopt.
std::optional<uint32_t> parse_log_level(std::string_view text);
const char* log_level_name(uint32_t level);

class Logger {
public:
    // level: FERRO_LOG_* when the application chose one; otherwise FERRO_LOG_LEVEL from the
    // environment, otherwise warn.
    Logger(std::optional<uint32_t> level, LogCallback callback, void* user);
    ~Logger();
    Logger(const Logger&) = delete;
    Logger& operator=(const Logger&) = delete;

    bool enabled(uint32_t level) const noexcept { return level >= level_ && level_ != FERRO_LOG_OFF; }
    uint32_t level() const noexcept { return level_; }
    void log(uint32_t level, std::string_view source, std::string_view message) const noexcept;

    template <class... Args>
    void logf(uint32_t level, std::string_view source, fmt::format_string<Args...> format, Args&&... args) const noexcept {
        if (!enabled(level)) return;
        try {
            log(level, source, fmt::format(format, std::forward<Args>(args)...));
        } catch (...) {  // a log line is never worth an exception
        }
    }

private:
    uint32_t level_;
    LogCallback callback_;
    void* user_;
    std::shared_ptr<spdlog::logger> spd_;
};

}  // namespace ferro::host
