// ferro plugin ABI — header-only helper for module providers: binding to a family another
// plugin defines, by the family's version and its ops' names (ABI 1.9: the host hands a module
// factory the family descriptor, ferro_module_create_args.family), instead of assuming the
// defining plugin's op order. A family's ops and their attributes are its public contract
// (ferro/family/fft.hpp, ferro/family/linalg.hpp); a new major version may change them.
//
// Since: 1.9 (header-only).
#pragma once

#include "ferro/family.h"
#include "ferro/plugin.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace ferro::plugin {

// The provider's view of the family's ops: `Op` is the provider's enum, `op_name(Op)` its name
// in the family (the contract headers give both), `count` the number of ops the provider knows.
template <class Op> class FamilyBinding {
public:
    // Binds to args->family: its id must be `id` and its version's major `major`. Every op of
    // the family is matched by name with the provider's ops; ops the provider does not know stay
    // unbound (prepare declines them). Returns why it cannot bind, or "" when bound.
    std::string bind(const ferro_module_create_args* args, const char* id, int major, uint32_t count,
                     const char* (*op_name)(Op)) {
        if (!FERRO_HAS_FIELD(args, ferro_module_create_args, family) || args->family == nullptr) {
            return std::string("the host does not say which family the module is for (it needs host ABI 1.9)");
        }
        const ferro_family_desc& f = *args->family;
        if (f.id == nullptr || std::strcmp(f.id, id) != 0) {
            return std::string("the module serves family '") + id + "', not '" + (f.id != nullptr ? f.id : "") + "'";
        }
        const int found = f.version != nullptr ? std::atoi(f.version) : 0;
        if (found != major) {
            return std::string("the module serves family '") + id + "' version " + std::to_string(major) +
                   ".x, the loaded family is version " + (f.version != nullptr ? f.version : "(none)");
        }
        family_ = &f;
        ops_.assign(f.n_ops, std::nullopt);
        for (uint32_t i = 0; i < f.n_ops; ++i) {
            for (uint32_t k = 0; k < count; ++k) {
                if (f.ops[i].name != nullptr && std::strcmp(f.ops[i].name, op_name(static_cast<Op>(k))) == 0) {
                    ops_[i] = static_cast<Op>(k);
                }
            }
        }
        return {};
    }

    // The provider's op for prepare's op_index, or nullopt for an op it does not know.
    std::optional<Op> op(uint32_t op_index) const { return op_index < ops_.size() ? ops_[op_index] : std::nullopt; }
    // "fft.rfft": the family's qualified name of an op, for messages.
    std::string qualified(uint32_t op_index) const {
        if (family_ == nullptr || op_index >= family_->n_ops || family_->ops[op_index].name == nullptr) {
            return "op " + std::to_string(op_index);
        }
        return std::string(family_->id) + "." + family_->ops[op_index].name;
    }

private:
    const ferro_family_desc* family_ = nullptr;  // borrowed for the module's lifetime (ABI 1.9)
    std::vector<std::optional<Op>> ops_;
};

}  // namespace ferro::plugin
