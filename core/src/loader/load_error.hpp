// A plugin load failure: which stage it happened in, the status code and a clear message.
// Becomes a Diagnostic record; never escapes the loader as anything else.
#pragma once

#include "support/status.hpp"

#include <string>

namespace ferro::host {

// The stages of DESIGN §10, in order.
enum class LoadStage { open, entry, query, abi, validate, probe, create, register_ };

const char* load_stage_name(LoadStage stage);

class LoadError;

// Throws LoadError(stage) with the code of `status` and "<what> failed: <message>"; frees it.
[[noreturn]] void throw_load_error(LoadStage stage, ferro_status status, const std::string& what);

class LoadError : public Error {
public:
    LoadError(LoadStage stage, uint32_t code, const std::string& message) : Error(code, message), stage_(stage) {}
    LoadStage stage() const noexcept { return stage_; }

private:
    LoadStage stage_;
};

}  // namespace ferro::host
