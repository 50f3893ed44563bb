// Ops the host implements itself (views, random numbers): what their function sees. They take
// the dispatcher's path up to the plan: no module prepares them.
#pragma once

#include "dispatch/attrs.hpp"
#include "registry/engine.hpp"
#include "tensor/tensor.hpp"

#include <boost/container/small_vector.hpp>

#include <span>
#include <string>

namespace ferro::host {

class Runtime;
using Outputs = boost::container::small_vector<TensorPtr, 2>;

struct HostOpCall {
    Runtime& runtime;
    const std::string& op;  // qualified name, for messages
    const EnginePtr& engine;
    const AttrValues& attrs;
    std::span<ferro_tensor_impl* const> inputs;
};
using HostOpFn = Outputs (*)(const HostOpCall& call);

}  // namespace ferro::host
