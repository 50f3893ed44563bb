// Validation of a plugin's descriptor (stages abi and validate of DESIGN §10): everything the
// host will later read without checking is checked here, once, with messages that name the
// offending field.
#pragma once

#include <ferro/plugin.h>

namespace ferro::host {

// Throws LoadError(abi) unless the descriptor carries ABI major FERRO_ABI_MAJOR.
void check_abi(const ferro_plugin_desc& desc);

// Throws LoadError(validate) on the first problem: struct too small, missing name, NULL
// function pointer, invalid or duplicate id, bad attribute spec, inconsistent masks.
void check_descriptor(const ferro_plugin_desc& desc);

// [a-z][a-z0-9_]* : family ids, op names, engine kinds.
bool is_identifier(const char* text);

}  // namespace ferro::host
