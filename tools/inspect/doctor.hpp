// `ferro-inspect doctor`: the environment as the host sees it — the search path with where
// each entry came from, every engine kind and why it has no device, plugins that did not load
// and why, and the settings that change behaviour (log level, threads, caches).
#pragma once

#include "listing.hpp"

namespace ferro::inspect {

nlohmann::json doctor(const ListOptions& options);
std::string render_doctor(const nlohmann::json& report);

}  // namespace ferro::inspect
