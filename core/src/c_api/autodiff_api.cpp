// extern "C" shims: autodiff. The entry points are part of ABI 1.0; the tape, backward and the
// functional forms arrive with the autodiff issue, and answer UNIMPLEMENTED until then.
#include "c_api/handles.hpp"

#include <ferro/ferro.h>

namespace {
ferro_status not_yet(const char* function) {
    return ferro::make_status(FERRO_UNIMPLEMENTED,
                              std::string(function) + ": autodiff is not available in this build yet");
}
}  // namespace

FERRO_API ferro_status ferro_tensor_set_requires_grad(ferro_tensor, ferro_bool) {
    return not_yet("ferro_tensor_set_requires_grad");
}
FERRO_API ferro_bool ferro_tensor_requires_grad(ferro_tensor) { return 0; }
FERRO_API ferro_status ferro_tensor_grad(ferro_tensor, ferro_tensor*) { return not_yet("ferro_tensor_grad"); }
FERRO_API ferro_status ferro_backward(ferro_runtime*, ferro_tensor, ferro_tensor, ferro_bool, ferro_bool) {
    return not_yet("ferro_backward");
}
FERRO_API ferro_status ferro_vjp(ferro_runtime*, const ferro_tensor*, const ferro_tensor*, uint32_t,
                                 const ferro_tensor*, uint32_t, ferro_bool, ferro_tensor*) {
    return not_yet("ferro_vjp");
}
FERRO_API void ferro_no_grad_push(void) {}
FERRO_API void ferro_no_grad_pop(void) {}
