// Validation of a plugin's descriptor (stages abi and validate of DESIGN §10): everything the
// host will later read without checking is checked here, once, with messages that name the
// offending field.
#pragma once

#include <ferro/plugin.h>

#include <span>

namespace ferro::host {

// Throws LoadError(abi) unless the descriptor carries ABI major FERRO_ABI_MAJOR.
void check_abi(const ferro_plugin_desc& desc);

// Where a descriptor comes from: a plugin file, or libferro itself (the cpu engine and the
// core family), whose ops alone may return views in ABI 1.x.
enum class DescriptorSource { file, builtin };

// Throws LoadError(validate) on the first problem: struct too small, missing name, NULL
// function pointer, invalid or duplicate id, bad attribute spec, inconsistent masks, a bad
// extension chain (a known link too small, too many links, views from a plugin file).
void check_descriptor(const ferro_plugin_desc& desc, DescriptorSource source = DescriptorSource::file);

// The views a family of `desc` declares (FERRO_EXT_OP_VIEWS), empty when none; the chain must
// have passed check_descriptor.
std::span<const ferro_op_view> family_views(const ferro_plugin_desc& desc, const char* family_id);

// The ops the rules of a family of `desc` call (FERRO_EXT_RULE_CALLS), empty when it declares
// none; the chain must have passed check_descriptor.
std::span<const char* const> family_rule_calls(const ferro_plugin_desc& desc, const char* family_id);

// [a-z][a-z0-9_]* : family ids, op names, engine kinds.
bool is_identifier(const char* text);

}  // namespace ferro::host
