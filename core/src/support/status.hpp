// Status objects (the ferro_status handles of the ABI) and ferro::host::Error, the exception C++ code
// inside the host throws. The guard at every extern "C" boundary turns one into the other.
#pragma once

#include <ferro/status.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

struct ferro_status_impl {
    uint32_t code = FERRO_UNKNOWN;
    std::string message;
    uint32_t phase = FERRO_PHASE_NONE;
    std::string op;  // qualified op name, when known
};

namespace ferro::host {

// The exception host code throws; `code` is a ferro_status_code, `phase` a ferro_phase: where
// the failure happened (loading a plugin, preparing or executing a call, backward), set by the
// layer that knows as the error passes through it.
class Error : public std::runtime_error {
public:
    Error(uint32_t code, const std::string& message, uint32_t phase = FERRO_PHASE_NONE)
        : std::runtime_error(message), code_(code), phase_(phase) {}
    uint32_t code() const noexcept { return code_; }
    uint32_t phase() const noexcept { return phase_; }
    // Sets the phase unless an inner layer did (a call inside a plugin's prepare that failed
    // while executing stays an execute failure).
    void annotate(uint32_t phase) noexcept {
        if (phase_ == FERRO_PHASE_NONE) phase_ = phase;
    }
    void set_phase(uint32_t phase) noexcept { phase_ = phase; }

private:
    uint32_t code_;
    uint32_t phase_;
};

// Builders for the common codes: throw invalid_argument("einsum: ...").
[[noreturn]] void throw_error(uint32_t code, const std::string& message);

// The check every versioned struct a caller hands the host passes (struct_size first, ABI rule
// 2): INVALID_ARGUMENT "<context>: <type>.struct_size is N, expected at least M (...)" when
// `struct_size` is below `minimum`, the size of the fields the host reads.
void require_struct_size(uint32_t struct_size, std::size_t minimum, const std::string& context, const char* type);

// A new status. Never throws: without memory it returns a static RESOURCE_EXHAUSTED status
// that status_free ignores.
ferro_status make_status(uint32_t code, const std::string& message) noexcept;
void free_status(ferro_status status) noexcept;
const char* status_code_name(uint32_t code) noexcept;

// Throws ferro::host::Error carrying the code and message of `status`, and frees it.
void throw_if_error(ferro_status status);

// Describes the exception being handled (call inside a catch block) as escaping plugin code
// named `what`: "<what> threw an exception (<what()>); no exception may cross the plugin ABI".
std::string escaped_exception_message(const std::string& what);

// Converts the exception being handled (call inside a catch block) into a status.
ferro_status status_from_current_exception() noexcept;

// Runs body, converting any exception into a status (NULL on success).
template <class Body> ferro_status guard(Body&& body) noexcept {
    try {
        body();
        return nullptr;
    } catch (...) {
        return status_from_current_exception();
    }
}

}  // namespace ferro::host
