#include "dispatch/attrs.hpp"

#include "support/status.hpp"

#include <fmt/format.h>

#include <cstring>

namespace ferro::host {
namespace {

const char* type_name(uint32_t type) {
    switch (type) {
        case FERRO_ATTR_NONE: return "None";
        case FERRO_ATTR_I64: return "i64";
        case FERRO_ATTR_F64: return "f64";
        case FERRO_ATTR_BOOL: return "bool";
        case FERRO_ATTR_STR: return "str";
        case FERRO_ATTR_I64_ARRAY: return "i64[]";
        case FERRO_ATTR_F64_ARRAY: return "f64[]";
        default: return "unknown";
    }
}

ferro_attr_value coerce(const ferro_attr_spec& spec, const ferro_attr_value& given, const std::string& op) {
    if (given.type == spec.type) {
        if (given.type == FERRO_ATTR_STR && given.v.str == nullptr) {
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: attribute '{}' is a NULL string", op, spec.name));
        }
        if ((given.type == FERRO_ATTR_I64_ARRAY || given.type == FERRO_ATTR_F64_ARRAY) && given.count > 0 &&
            given.v.i64_array == nullptr) {
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: attribute '{}' is a NULL array", op, spec.name));
        }
        return given;
    }
    if (given.type == FERRO_ATTR_NONE && (spec.flags & FERRO_ATTR_FLAG_OPTIONAL) != 0) return given;
    if (given.type == FERRO_ATTR_I64 && spec.type == FERRO_ATTR_F64) {
        ferro_attr_value v{};
        v.type = FERRO_ATTR_F64;
        v.v.f64 = static_cast<double>(given.v.i64);
        return v;
    }
    throw Error(FERRO_INVALID_ARGUMENT,
                fmt::format("{}: attribute '{}' expects {}{}, got {}", op, spec.name, type_name(spec.type),
                            (spec.flags & FERRO_ATTR_FLAG_OPTIONAL) ? " or None" : "", type_name(given.type)));
}

}  // namespace

AttrValues normalise_attrs(const ferro_op_schema& schema, const std::string& op, const ferro_named_attr* attrs,
                           uint32_t n_attrs) {
    AttrValues values(schema.n_attrs);
    boost::container::small_vector<bool, 8> given(schema.n_attrs, false);
    for (uint32_t i = 0; i < n_attrs; ++i) {
        const char* name = attrs[i].name;
        if (name == nullptr) throw Error(FERRO_INVALID_ARGUMENT, op + ": attribute name is NULL");
        uint32_t k = 0;
        while (k < schema.n_attrs && std::strcmp(schema.attrs[k].name, name) != 0) ++k;
        if (k == schema.n_attrs) {
            std::string known;
            for (uint32_t j = 0; j < schema.n_attrs; ++j) known += (j ? ", " : "") + std::string(schema.attrs[j].name);
            throw Error(FERRO_INVALID_ARGUMENT,
                        fmt::format("{}: unknown attribute '{}' (accepted: {})", op, name, known.empty() ? "none" : known));
        }
        if (given[k]) throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: attribute '{}' given twice", op, name));
        given[k] = true;
        // None for an attribute that has a default and does not take None means the default, as
        // numpy's and torch's norm=None does: it counts as not given.
        const ferro_attr_spec& spec = schema.attrs[k];
        const bool none_means_default =
            attrs[i].value.type == FERRO_ATTR_NONE && (spec.flags & (FERRO_ATTR_FLAG_OPTIONAL | FERRO_ATTR_FLAG_REQUIRED)) == 0;
        values[k] = none_means_default ? spec.default_value : coerce(spec, attrs[i].value, op);
    }
    for (uint32_t k = 0; k < schema.n_attrs; ++k) {
        if (given[k]) continue;
        if ((schema.attrs[k].flags & FERRO_ATTR_FLAG_REQUIRED) != 0) {
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: required attribute '{}' ({}) is missing", op,
                                                            schema.attrs[k].name, type_name(schema.attrs[k].type)));
        }
        values[k] = schema.attrs[k].default_value;
    }
    return values;
}

OwnedAttrs::OwnedAttrs(const AttrValues& values) : values_(values) {
    size_t n_str = 0, n_i64 = 0, n_f64 = 0;
    for (const auto& v : values_) {
        n_str += v.type == FERRO_ATTR_STR;
        n_i64 += v.type == FERRO_ATTR_I64_ARRAY;
        n_f64 += v.type == FERRO_ATTR_F64_ARRAY;
    }
    strings_.reserve(n_str);
    i64_arrays_.reserve(n_i64);
    f64_arrays_.reserve(n_f64);
    for (auto& v : values_) {
        if (v.type == FERRO_ATTR_STR) {
            v.v.str = strings_.emplace_back(v.v.str).c_str();
        } else if (v.type == FERRO_ATTR_I64_ARRAY) {
            v.v.i64_array = i64_arrays_.emplace_back(v.v.i64_array, v.v.i64_array + v.count).data();
        } else if (v.type == FERRO_ATTR_F64_ARRAY) {
            v.v.f64_array = f64_arrays_.emplace_back(v.v.f64_array, v.v.f64_array + v.count).data();
        }
    }
}

int64_t attr_i64(const AttrValues& a, size_t i) { return a.at(i).v.i64; }
double attr_f64(const AttrValues& a, size_t i) { return a.at(i).v.f64; }
bool attr_bool(const AttrValues& a, size_t i) { return a.at(i).v.boolean != 0; }
bool attr_is_none(const AttrValues& a, size_t i) { return a.at(i).type == FERRO_ATTR_NONE; }

}  // namespace ferro::host
