#include "loader/descriptor_check.hpp"

#include "loader/load_error.hpp"

#include <fmt/format.h>

#include <cstring>
#include <set>
#include <string>

namespace ferro::host {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw LoadError(LoadStage::validate, FERRO_INVALID_ARGUMENT, message); }

// The 1.0 size of a struct: up to its last 1.0 field. A reader accepts anything at least this
// large, so structs grown by later minors stay readable and older plugins stay loadable.
#define V1_0_SIZE(type, last_field) FERRO_STRUCT_SIZE_UP_TO(type, last_field)

void check_size(uint32_t struct_size, std::size_t minimum, const std::string& what) {
    if (struct_size < minimum) {
        invalid(fmt::format("{}.struct_size is {}, expected at least {} (ABI 1.0)", what, struct_size, minimum));
    }
}

void require(const void* pointer, const std::string& what) {
    if (pointer == nullptr) invalid(what + " is NULL");
}

void check_attr(const ferro_attr_spec& attr, const std::string& where) {
    check_size(attr.struct_size, V1_0_SIZE(ferro_attr_spec, doc), where);
    if (!is_identifier(attr.name)) invalid(where + ".name is not an identifier");
    if (attr.type < FERRO_ATTR_I64 || attr.type > FERRO_ATTR_F64_ARRAY) {
        invalid(fmt::format("{} ('{}'): type {} is not a ferro_attr_type", where, attr.name, attr.type));
    }
    const auto& d = attr.default_value;
    const bool required = (attr.flags & FERRO_ATTR_FLAG_REQUIRED) != 0;
    const bool optional = (attr.flags & FERRO_ATTR_FLAG_OPTIONAL) != 0;
    if (required) return;
    if (d.type == FERRO_ATTR_NONE && !optional) {
        invalid(fmt::format("{} ('{}'): default is None but the attribute is not optional", where, attr.name));
    }
    if (d.type != FERRO_ATTR_NONE && d.type != attr.type) {
        invalid(fmt::format("{} ('{}'): default has type {}, the attribute has type {}", where, attr.name, d.type, attr.type));
    }
    if (d.type == FERRO_ATTR_STR && d.v.str == nullptr) {
        invalid(fmt::format("{} ('{}'): default string is NULL", where, attr.name));
    }
    if ((d.type == FERRO_ATTR_I64_ARRAY || d.type == FERRO_ATTR_F64_ARRAY) && d.count > 0 && d.v.i64_array == nullptr) {
        invalid(fmt::format("{} ('{}'): default array is NULL", where, attr.name));
    }
}

void check_op(const ferro_op_schema& op, const std::string& where) {
    check_size(op.struct_size, V1_0_SIZE(ferro_op_schema, jvp), where);
    if (!is_identifier(op.name)) invalid(where + ".name is not an identifier");
    const std::string name = where + " ('" + op.name + "')";
    require(reinterpret_cast<const void*>(op.infer), name + ".infer");
    if (op.n_inputs < FERRO_VARIADIC || op.n_outputs < FERRO_VARIADIC || op.min_inputs < 0) {
        invalid(name + ": negative input or output count");
    }
    if (op.n_attrs > 0) require(op.attrs, name + ".attrs");
    if (op.n_dtypes > 0) require(op.dtypes, name + ".dtypes");
    std::set<std::string> attr_names;
    for (uint32_t i = 0; i < op.n_attrs; ++i) {
        check_attr(op.attrs[i], fmt::format("{}.attrs[{}]", name, i));
        if (!attr_names.insert(op.attrs[i].name).second) {
            invalid(fmt::format("{}: attribute '{}' is declared twice", name, op.attrs[i].name));
        }
    }
    if (op.vjp == nullptr && (op.diff_inputs != 0 || op.diff_outputs != 0)) {
        invalid(name + ": declares differentiable inputs/outputs but has no vjp rule");
    }
}

void check_family(const ferro_family_desc& family, const std::string& where) {
    check_size(family.struct_size, V1_0_SIZE(ferro_family_desc, create_module), where);
    if (!is_identifier(family.id)) invalid(where + ".id is not an identifier");
    const std::string name = where + " ('" + family.id + "')";
    require(family.version, name + ".version");
    if (family.n_ops > 0) require(family.ops, name + ".ops");
    std::set<std::string> op_names;
    for (uint32_t i = 0; i < family.n_ops; ++i) {
        check_op(family.ops[i], fmt::format("{}.ops[{}]", name, i));
        if (!op_names.insert(family.ops[i].name).second) {
            invalid(fmt::format("{}: op '{}' is declared twice", name, family.ops[i].name));
        }
    }
}

void check_link_size(uint32_t struct_size, std::size_t minimum, const std::string& where) {
    if (struct_size < minimum) invalid(fmt::format("{}.struct_size is {}, expected at least {}", where, struct_size, minimum));
}

const ferro_extension* extensions_of(const ferro_plugin_desc& desc) {
    return FERRO_HAS_FIELD(&desc, ferro_plugin_desc, extensions) ? desc.extensions : nullptr;
}

const ferro_family_desc* family_named(const ferro_plugin_desc& desc, const char* id) {
    for (uint32_t i = 0; i < desc.n_families && id != nullptr; ++i) {
        if (std::string(desc.families[i].id) == id) return &desc.families[i];
    }
    return nullptr;
}

// One FERRO_EXT_OP_VIEWS link: a family of this plugin, ops and ports within it.
void check_views(const ferro_plugin_desc& desc, const ferro_op_views_ext& ext, const std::string& where,
                 DescriptorSource source) {
    check_link_size(ext.base.struct_size, sizeof(ferro_op_views_ext), where);
    if (source == DescriptorSource::file) {
        invalid(where +
                ": declares op views, but a plugin's op outputs are buffers the host allocates; in ABI 1.x "
                "only the host's own ops return views");
    }
    const ferro_family_desc* family = family_named(desc, ext.family_id);
    if (family == nullptr) invalid(where + ".family_id names no family of this plugin");
    if (ext.n_views > 0) require(ext.views, where + ".views");
    for (uint32_t i = 0; i < ext.n_views; ++i) {
        const ferro_op_view& v = ext.views[i];
        const std::string at = fmt::format("{}.views[{}]", where, i);
        if (v.op >= family->n_ops) invalid(fmt::format("{}: op {} is not an op of family '{}'", at, v.op, family->id));
        const ferro_op_schema& op = family->ops[v.op];
        if (op.n_outputs != FERRO_VARIADIC && v.output >= static_cast<uint32_t>(op.n_outputs)) {
            invalid(fmt::format("{}: '{}' has no output {}", at, op.name, v.output));
        }
        if (op.n_inputs != FERRO_VARIADIC && v.input >= static_cast<uint32_t>(op.n_inputs)) {
            invalid(fmt::format("{}: '{}' has no input {}", at, op.name, v.input));
        }
        if ((v.flags & ~FERRO_OP_VIEW_MAY_COPY) != 0) invalid(fmt::format("{}: unknown flags {:#x}", at, v.flags));
    }
}

// "<family>.<op>", each part an identifier.
bool is_qualified_name(const char* name) {
    const char* dot = name != nullptr ? std::strchr(name, '.') : nullptr;
    if (dot == nullptr) return false;
    const std::string family(name, dot);
    return is_identifier(family.c_str()) && is_identifier(dot + 1);
}

// One FERRO_EXT_RULE_CALLS link: a family of this plugin, at most one link for it, and
// qualified names.
void check_rule_calls(const ferro_plugin_desc& desc, const ferro_rule_calls_ext& ext, const std::string& where) {
    check_link_size(ext.base.struct_size, sizeof(ferro_rule_calls_ext), where);
    if (family_named(desc, ext.family_id) == nullptr) invalid(where + ".family_id names no family of this plugin");
    if (family_rule_calls(desc, ext.family_id).data() != ext.ops) {
        invalid(fmt::format("{}: a second FERRO_EXT_RULE_CALLS link for family '{}'", where, ext.family_id));
    }
    if (ext.n_ops > FERRO_MAX_RULE_CALLS) invalid(fmt::format("{}: {} ops, at most {}", where, ext.n_ops, FERRO_MAX_RULE_CALLS));
    if (ext.n_ops > 0) require(ext.ops, where + ".ops");
    for (uint32_t i = 0; i < ext.n_ops; ++i) {
        if (!is_qualified_name(ext.ops[i])) {
            invalid(fmt::format("{}.ops[{}] is {}, expected a qualified op name ('family.op', lower-case identifiers)", where, i,
                                ext.ops[i] != nullptr ? fmt::format("'{}'", ext.ops[i]) : "NULL"));
        }
    }
}

// The chain: bounded, each link of a known type large enough for it; unknown types skipped.
void check_extensions(const ferro_plugin_desc& desc, DescriptorSource source) {
    uint32_t index = 0;
    for (const ferro_extension* e = extensions_of(desc); e != nullptr; e = e->next, ++index) {
        const std::string where = fmt::format("extensions[{}]", index);
        if (index == FERRO_MAX_EXTENSIONS)
            invalid(fmt::format("the extension chain is longer than {} links", FERRO_MAX_EXTENSIONS));
        check_link_size(e->struct_size, sizeof(ferro_extension), where);
        if (e->type == FERRO_EXT_OP_VIEWS) check_views(desc, *reinterpret_cast<const ferro_op_views_ext*>(e), where, source);
        if (e->type == FERRO_EXT_RULE_CALLS) check_rule_calls(desc, *reinterpret_cast<const ferro_rule_calls_ext*>(e), where);
    }
}

}  // namespace

std::span<const ferro_op_view> family_views(const ferro_plugin_desc& desc, const char* family_id) {
    uint32_t seen = 0;
    for (const ferro_extension* e = extensions_of(desc); e != nullptr && seen < FERRO_MAX_EXTENSIONS; e = e->next, ++seen) {
        if (e->type != FERRO_EXT_OP_VIEWS) continue;
        const auto& ext = *reinterpret_cast<const ferro_op_views_ext*>(e);
        if (std::string(ext.family_id) == family_id) return {ext.views, ext.n_views};
    }
    return {};
}

std::span<const char* const> family_rule_calls(const ferro_plugin_desc& desc, const char* family_id) {
    uint32_t seen = 0;
    for (const ferro_extension* e = extensions_of(desc); e != nullptr && seen < FERRO_MAX_EXTENSIONS; e = e->next, ++seen) {
        if (e->type != FERRO_EXT_RULE_CALLS) continue;
        const auto& ext = *reinterpret_cast<const ferro_rule_calls_ext*>(e);
        if (ext.family_id != nullptr && std::string(ext.family_id) == family_id) return {ext.ops, ext.n_ops};
    }
    return {};
}

bool is_identifier(const char* text) {
    if (text == nullptr || !(*text >= 'a' && *text <= 'z')) return false;
    for (const char* p = text; *p != '\0'; ++p) {
        const bool ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
        if (!ok) return false;
    }
    return true;
}

void check_abi(const ferro_plugin_desc& desc) {
    if (desc.struct_size < FERRO_STRUCT_SIZE_UP_TO(ferro_plugin_desc, abi_minor)) {
        throw LoadError(LoadStage::abi, FERRO_INCOMPATIBLE,
                        fmt::format("descriptor struct_size {} is too small to carry an ABI "
                                    "version",
                                    desc.struct_size));
    }
    if (desc.abi_major != FERRO_ABI_MAJOR) {
        throw LoadError(LoadStage::abi, FERRO_INCOMPATIBLE,
                        fmt::format("plugin was built for ABI {}.{}, this host speaks ABI {}.{}; "
                                    "rebuild the plugin against this host's plugin_api",
                                    desc.abi_major, desc.abi_minor, FERRO_ABI_MAJOR, FERRO_ABI_MINOR));
    }
}

void check_descriptor(const ferro_plugin_desc& desc, DescriptorSource source) {
    check_size(desc.struct_size, V1_0_SIZE(ferro_plugin_desc, module_providers), "ferro_plugin_desc");
    if (desc.name == nullptr || *desc.name == '\0') invalid("ferro_plugin_desc.name is empty");
    require(desc.version, "ferro_plugin_desc.version");
    if (desc.n_engines > 0) require(desc.engines, "ferro_plugin_desc.engines");
    if (desc.n_families > 0) require(desc.families, "ferro_plugin_desc.families");
    if (desc.n_module_providers > 0) {
        require(desc.module_providers, "ferro_plugin_desc.module_providers");
    }
    for (uint32_t i = 0; i < desc.n_engines; ++i) {
        const auto& e = desc.engines[i];
        const std::string where = fmt::format("engines[{}]", i);
        check_size(e.struct_size, V1_0_SIZE(ferro_engine_desc, create), where);
        if (!is_identifier(e.kind)) invalid(where + ".kind is not an identifier");
        require(e.context_abi, where + ".context_abi");
        require(reinterpret_cast<const void*>(e.probe), where + " ('" + e.kind + "').probe");
        require(reinterpret_cast<const void*>(e.create), where + " ('" + e.kind + "').create");
    }
    std::set<std::string> family_ids;
    for (uint32_t i = 0; i < desc.n_families; ++i) {
        check_family(desc.families[i], fmt::format("families[{}]", i));
        if (!family_ids.insert(desc.families[i].id).second) {
            invalid(fmt::format("family '{}' is declared twice", desc.families[i].id));
        }
    }
    for (uint32_t i = 0; i < desc.n_module_providers; ++i) {
        const auto& m = desc.module_providers[i];
        const std::string where = fmt::format("module_providers[{}]", i);
        check_size(m.struct_size, V1_0_SIZE(ferro_module_provider_desc, create_module), where);
        if (!is_identifier(m.family_id)) invalid(where + ".family_id is not an identifier");
        require(reinterpret_cast<const void*>(m.create_module), where + ".create_module");
    }
    check_extensions(desc, source);
}

}  // namespace ferro::host
