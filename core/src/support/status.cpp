#include "support/status.hpp"

#include <new>

namespace ferro::host {
namespace {

// Returned when even a status cannot be allocated; free_status never deletes it.
ferro_status_impl out_of_memory_status{FERRO_RESOURCE_EXHAUSTED, "out of memory", 0, {}};

}  // namespace

void throw_error(uint32_t code, const std::string& message) { throw Error(code, message); }

ferro_status make_status(uint32_t code, const std::string& message) noexcept {
    try {
        return new ferro_status_impl{code, message, FERRO_PHASE_NONE, {}};
    } catch (...) {
        return &out_of_memory_status;
    }
}

void free_status(ferro_status status) noexcept {
    if (status != &out_of_memory_status) delete status;
}

const char* status_code_name(uint32_t code) noexcept {
    switch (code) {
        case FERRO_OK: return "OK";
        case FERRO_CANCELLED: return "CANCELLED";
        case FERRO_UNKNOWN: return "UNKNOWN";
        case FERRO_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
        case FERRO_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
        case FERRO_NOT_FOUND: return "NOT_FOUND";
        case FERRO_ALREADY_EXISTS: return "ALREADY_EXISTS";
        case FERRO_PERMISSION_DENIED: return "PERMISSION_DENIED";
        case FERRO_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
        case FERRO_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
        case FERRO_ABORTED: return "ABORTED";
        case FERRO_OUT_OF_RANGE: return "OUT_OF_RANGE";
        case FERRO_UNIMPLEMENTED: return "UNIMPLEMENTED";
        case FERRO_INTERNAL: return "INTERNAL";
        case FERRO_UNAVAILABLE: return "UNAVAILABLE";
        case FERRO_DATA_LOSS: return "DATA_LOSS";
        case FERRO_UNAUTHENTICATED: return "UNAUTHENTICATED";
        case FERRO_INCOMPATIBLE: return "INCOMPATIBLE";
        case FERRO_NOT_DIFFERENTIABLE: return "NOT_DIFFERENTIABLE";
        default: return "UNKNOWN_CODE";
    }
}

void throw_if_error(ferro_status status) {
    if (status == nullptr) return;
    Error error(status->code, status->message, status->phase);
    free_status(status);
    throw error;
}

std::string escaped_exception_message(const std::string& what) {
    const char* suffix = "no exception may cross the plugin ABI";
    try {
        throw;
    } catch (const std::exception& e) {
        return what + " threw an exception (" + e.what() + "); " + suffix;
    } catch (...) {
        return what + " threw an exception; " + suffix;
    }
}

ferro_status status_from_current_exception() noexcept {
    try {
        throw;
    } catch (const Error& e) {
        ferro_status st = make_status(e.code(), e.what());
        if (st->code == e.code()) st->phase = e.phase();  // not the static out-of-memory status
        return st;
    } catch (const std::bad_alloc&) {
        return make_status(FERRO_RESOURCE_EXHAUSTED, "out of memory");
    } catch (const std::exception& e) {
        return make_status(FERRO_INTERNAL, std::string("internal error: ") + e.what());
    } catch (...) {
        return make_status(FERRO_INTERNAL, "internal error: unknown exception");
    }
}

void require_struct_size(uint32_t struct_size, std::size_t minimum, const std::string& context, const char* type) {
    if (struct_size >= minimum) return;
    throw Error(FERRO_INVALID_ARGUMENT, context + ": " + type + ".struct_size is " + std::to_string(struct_size) +
                                            ", expected at least " + std::to_string(minimum) +
                                            " (set struct_size to the struct's sizeof)");
}

}  // namespace ferro::host
