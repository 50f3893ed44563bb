#include "support/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ferro::host {

std::optional<uint32_t> parse_log_level(std::string_view text) {
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower == "trace") return FERRO_LOG_TRACE;
    if (lower == "debug") return FERRO_LOG_DEBUG;
    if (lower == "info") return FERRO_LOG_INFO;
    if (lower == "warn" || lower == "warning") return FERRO_LOG_WARN;
    if (lower == "error") return FERRO_LOG_ERROR;
    if (lower == "off") return FERRO_LOG_OFF;
    return std::nullopt;
}

const char* log_level_name(uint32_t level) {
    switch (level) {
        case FERRO_LOG_TRACE: return "trace";
        case FERRO_LOG_DEBUG: return "debug";
        case FERRO_LOG_INFO: return "info";
        case FERRO_LOG_WARN: return "warn";
        case FERRO_LOG_ERROR: return "error";
        default: return "off";
    }
}

namespace {

spdlog::level::level_enum to_spdlog(uint32_t level) {
    switch (level) {
        case FERRO_LOG_TRACE: return spdlog::level::trace;
        case FERRO_LOG_DEBUG: return spdlog::level::debug;
        case FERRO_LOG_INFO: return spdlog::level::info;
        case FERRO_LOG_WARN: return spdlog::level::warn;
        case FERRO_LOG_ERROR: return spdlog::level::err;
        default: return spdlog::level::off;
    }
}

}  // namespace

Logger::Logger(std::optional<uint32_t> level, LogCallback callback, void* user)
    : level_(FERRO_LOG_WARN), callback_(callback), user_(user) {
    const char* env = std::getenv("FERRO_LOG_LEVEL");
    if (level) {
        level_ = *level;
    } else if (auto parsed = parse_log_level(env != nullptr ? env : "")) {
        level_ = *parsed;
    }
    if (callback_ == nullptr) {
        // Not registered with spdlog's global registry: runtimes own their loggers, and two
        // runtimes must not collide on a name.
        spd_ = std::make_shared<spdlog::logger>("ferro", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
        spd_->set_pattern("[ferro] [%^%l%$] %v");
        spd_->set_level(to_spdlog(level_));
    }
}

Logger::~Logger() = default;

void Logger::log(uint32_t level, std::string_view source, std::string_view message) const noexcept {
    if (!enabled(level)) return;
    try {
        if (callback_ != nullptr) {
            const std::string src(source), msg(message);
            callback_(user_, level, src.c_str(), msg.c_str());
        } else {
            spd_->log(to_spdlog(level), "{}: {}", source, message);
        }
    } catch (...) {  // logging must never throw into its caller
    }
}

}  // namespace ferro::host
