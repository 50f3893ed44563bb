// `ferro-inspect show PLUGIN|FILE`: one plugin's full descriptor (every op with its attributes,
// dtypes and derivative rules, its modules per engine, its engines' devices), and
// `ferro-inspect ops`: the op x engine x dtype support matrix of everything in the search
// path, with the reason wherever a module declines. Both load plugins only in child processes.
#pragma once

#include "listing.hpp"

namespace ferro::inspect {

struct NotFound : std::runtime_error {
    using std::runtime_error::runtime_error;
};
std::string not_found_message(const std::string& target);

nlohmann::json show(const ListOptions& options, const std::string& target);  // throws NotFound
std::string render_show(const nlohmann::json& report);

nlohmann::json ops(const ListOptions& options, const std::string& engine, const std::string& family);
std::string render_ops(const nlohmann::json& report);

}  // namespace ferro::inspect
