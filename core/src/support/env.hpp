// Switches the environment may turn off (FERRO_FUSE, FERRO_RECORD): on unless set to "0".
#pragma once

#include <cstdlib>
#include <cstring>

namespace ferro::host {

inline bool env_switch_on(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr || std::strcmp(v, "0") != 0;
}

}  // namespace ferro::host
