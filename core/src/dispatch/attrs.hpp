// Attribute normalisation: a call's named attributes become one value per schema attribute, in
// schema order, with defaults filled and types checked. Values borrow the caller's strings and
// arrays (valid for the call); OwnedAttrs keeps copies for anything that outlives the call.
#pragma once

#include <ferro/family.h>

#include <boost/container/small_vector.hpp>

#include <string>
#include <vector>

namespace ferro::host {

using AttrValues = boost::container::small_vector<ferro_attr_value, 8>;

// Throws INVALID_ARGUMENT naming the op and attribute: unknown name, wrong type, missing
// required attribute, None for a non-optional one. An i64 is accepted where f64 is expected.
AttrValues normalise_attrs(const ferro_op_schema& schema, const std::string& op_name, const ferro_named_attr* attrs,
                           uint32_t n_attrs);

// A deep copy of normalised attributes (grad nodes keep these).
class OwnedAttrs {
public:
    OwnedAttrs() = default;
    explicit OwnedAttrs(const AttrValues& values);
    OwnedAttrs(const OwnedAttrs& other) : OwnedAttrs(other.values_) {}
    OwnedAttrs& operator=(const OwnedAttrs&) = delete;
    const AttrValues& values() const noexcept { return values_; }

private:
    AttrValues values_;
    // Reserved to their final sizes before filling, so the pointers into them stay put (and
    // attributes without strings or arrays allocate nothing here).
    std::vector<std::string> strings_;
    std::vector<std::vector<int64_t>> i64_arrays_;
    std::vector<std::vector<double>> f64_arrays_;
};

// Accessors with clear errors, for ops reading their attributes.
int64_t attr_i64(const AttrValues& a, size_t index);
double attr_f64(const AttrValues& a, size_t index);
bool attr_bool(const AttrValues& a, size_t index);
bool attr_is_none(const AttrValues& a, size_t index);

}  // namespace ferro::host
