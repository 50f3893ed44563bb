#include "loader/descriptor_check.hpp"

#include "loader/load_error.hpp"

#include <fmt/format.h>

#include <set>
#include <string>

namespace ferro::host {
namespace {

[[noreturn]] void invalid(const std::string& message) {
    throw LoadError(LoadStage::validate, FERRO_INVALID_ARGUMENT, message);
}

// The 1.0 size of a struct: up to its last 1.0 field. A reader accepts anything at least this
// large, so structs grown by later minors stay readable and older plugins stay loadable.
#define V1_0_SIZE(type, last_field) FERRO_STRUCT_SIZE_UP_TO(type, last_field)

void check_size(uint32_t struct_size, std::size_t minimum, const std::string& what) {
    if (struct_size < minimum) {
        invalid(fmt::format("{}.struct_size is {}, expected at least {} (ABI 1.0)", what,
                            struct_size, minimum));
    }
}

void require(const void* pointer, const std::string& what) {
    if (pointer == nullptr) invalid(what + " is NULL");
}

void check_attr(const ferro_attr_spec& attr, const std::string& where) {
    check_size(attr.struct_size, V1_0_SIZE(ferro_attr_spec, doc), where);
    if (!is_identifier(attr.name)) invalid(where + ".name is not an identifier");
    if (attr.type < FERRO_ATTR_I64 || attr.type > FERRO_ATTR_F64_ARRAY) {
        invalid(fmt::format("{} ('{}'): type {} is not a ferro_attr_type", where, attr.name,
                            attr.type));
    }
    const auto& d = attr.default_value;
    const bool required = (attr.flags & FERRO_ATTR_FLAG_REQUIRED) != 0;
    const bool optional = (attr.flags & FERRO_ATTR_FLAG_OPTIONAL) != 0;
    if (required) return;
    if (d.type == FERRO_ATTR_NONE && !optional) {
        invalid(fmt::format("{} ('{}'): default is None but the attribute is not optional",
                            where, attr.name));
    }
    if (d.type != FERRO_ATTR_NONE && d.type != attr.type) {
        invalid(fmt::format("{} ('{}'): default has type {}, the attribute has type {}", where,
                            attr.name, d.type, attr.type));
    }
    if (d.type == FERRO_ATTR_STR && d.v.str == nullptr) {
        invalid(fmt::format("{} ('{}'): default string is NULL", where, attr.name));
    }
    if ((d.type == FERRO_ATTR_I64_ARRAY || d.type == FERRO_ATTR_F64_ARRAY) && d.count > 0 &&
        d.v.i64_array == nullptr) {
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

}  // namespace

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
                                    desc.abi_major, desc.abi_minor, FERRO_ABI_MAJOR,
                                    FERRO_ABI_MINOR));
    }
}

void check_descriptor(const ferro_plugin_desc& desc) {
    check_size(desc.struct_size, V1_0_SIZE(ferro_plugin_desc, module_providers),
               "ferro_plugin_desc");
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
}

}  // namespace ferro::host
