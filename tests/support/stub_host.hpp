// A minimal ferro_host_api for tests that drive a plugin directly, without a runtime: real
// statuses and logging into a vector, every tensor/op/session service UNIMPLEMENTED.
#pragma once

#include <ferro/host.h>

#include <string>
#include <vector>

namespace ferro::test {

struct StubHost {
    StubHost();
    ferro_host_api api{};
    std::vector<std::string> log_lines;
};

// Code and message of `status`, then frees it. {FERRO_OK, ""} for NULL.
struct StatusParts {
    uint32_t code;
    std::string message;
};
StatusParts take_status(const ferro_host_api& host, ferro_status status);

}  // namespace ferro::test
