// How the dispatcher calls plugin code (infer, prepare, execute) and turns its failures into
// errors: each failure becomes one ferro::host::Error that names the op, once.
#pragma once

#include "support/status.hpp"

#include <ferro/host.h>

#include <string>

namespace ferro::host {

// Rethrows a plugin's failure with the qualified op name in front, once. A plugin may name the
// op itself ("linalg.solve: ..."), or by its family or its own name ("einsum: ...", as users
// spell the call): that prefix gives way to the qualified name. Which stage failed (infer,
// prepare, execute) is the host's business, not the user's: it goes to the debug log.
[[noreturn]] void rethrow(ferro_status st, const std::string& op, const char* stage, const ferro_host_api* host);

// Calls plugin code that must not throw; an escaping exception is an ABI violation.
template <class Fn> ferro_status call_plugin(const std::string& op, const char* what, Fn&& fn) {
    try {
        return fn();
    } catch (...) {
        throw Error(FERRO_INTERNAL, op + ": " + escaped_exception_message(what));
    }
}

}  // namespace ferro::host
