// extern "C" shims: version and statuses.
#include "c_api/handles.hpp"

#include <ferro/ferro.h>

FERRO_API const char* ferro_version(void) { return FERRO_VERSION_STRING; }

FERRO_API void ferro_abi_version(uint32_t* out_major, uint32_t* out_minor) {
    if (out_major != nullptr) *out_major = FERRO_ABI_MAJOR;
    if (out_minor != nullptr) *out_minor = FERRO_ABI_MINOR;
}

FERRO_API uint32_t ferro_status_code(ferro_status status) { return status != nullptr ? status->code : uint32_t{FERRO_OK}; }

FERRO_API const char* ferro_status_message(ferro_status status) { return status != nullptr ? status->message.c_str() : ""; }

FERRO_API uint32_t ferro_status_phase(ferro_status status) {
    return status != nullptr ? status->phase : uint32_t{FERRO_PHASE_NONE};
}

FERRO_API const char* ferro_status_code_name(uint32_t code) { return ferro::host::status_code_name(code); }

FERRO_API void ferro_status_free(ferro_status status) { ferro::host::free_status(status); }
