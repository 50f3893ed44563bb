// `ferro-inspect program FILE`: a prepared program's description, as an application saved it
// (PreparedProgram::describe, ferro_prepared_describe), read back and shown: its steps, what
// each runs (plan and module, or host op) on which engine, where each output lives, its memory
// and its gradient programs. The inspector runs nothing of it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ferro::inspect {

// The description in `file`; std::runtime_error naming the file when it cannot be read or is
// not a program description (schema 1).
nlohmann::json read_program(const std::string& file);
std::string render_program(const nlohmann::json& program);

}  // namespace ferro::inspect
