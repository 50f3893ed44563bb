// Fills the ferro_host_api table a runtime hands to its plugins.
#pragma once

#include <ferro/host.h>

namespace ferro {

class Runtime;

// The table for `runtime`; host_data points back at it.
ferro_host_api make_host_api(Runtime* runtime);

// The runtime a table belongs to.
Runtime& runtime_of(const ferro_host_api* host);

}  // namespace ferro
