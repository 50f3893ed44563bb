// The key of the plan cache (DESIGN §3): what makes two calls of one op the same call. The
// fields the host compares by name (engine, epoch, recorded inputs) are fields; what the
// caller wrote (the attributes as given, the inputs' signatures) is encoded once into words.
#pragma once

#include "tensor/tensor.hpp"

#include <ferro/family.h>

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <cstring>
#include <span>

namespace ferro::host {

class Engine;

using KeyWords = boost::container::small_vector<uint64_t, 40>;

struct PlanKey {
    // The inputs' engine; null for an op without inputs (its "engine" attribute is in `words`).
    const Engine* engine = nullptr;
    uint64_t epoch = 0;
    // The inputs the tape records the call for, when a module of the op's family on this engine
    // keeps residuals (ABI 1.8): such a call is prepared apart. 0 otherwise.
    uint64_t recorded = 0;
    // The attributes as given (names and values, before normalisation: two calls with equal
    // words normalise alike), then the input signatures.
    KeyWords words;
    // Of engine and words only: `recorded` is set after the key is hashed (it needs the op's
    // resolution), and keys of older epochs are purged rather than told apart.
    uint64_t hash = 0;
    // False when the call has something no valid call has (a NULL name, string or array): such
    // a call is never cached, and the full path reports what is wrong with it.
    bool valid = true;

    // Equal but for the hash, which `o` need not have yet.
    bool same_call(const PlanKey& o) const noexcept {
        return engine == o.engine && epoch == o.epoch && recorded == o.recorded && words.size() == o.words.size() &&
               std::memcmp(words.data(), o.words.data(), words.size() * sizeof(uint64_t)) == 0;
    }
    bool operator==(const PlanKey& o) const noexcept { return hash == o.hash && same_call(o); }
};

// Writes `key.words`: the attributes as given (names and values), or `attr_words` when they
// were encoded before (a bound call's), then the inputs' signatures (dtype, shape, strides;
// none may be NULL).
void encode_call(PlanKey& key, const KeyWords* attr_words, const ferro_named_attr* attrs, uint32_t n_attrs,
                 std::span<ferro_tensor_impl* const> inputs);
// The attributes' part of encode_call, alone (a bound call's, encoded at bind).
KeyWords encode_attrs(const ferro_named_attr* attrs, uint32_t n_attrs);
// Sets key.hash from its engine and words.
void hash_key(PlanKey& key) noexcept;

}  // namespace ferro::host
