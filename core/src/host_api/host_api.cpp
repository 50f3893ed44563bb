#include "host_api/host_api.hpp"

#include "runtime/runtime.hpp"
#include "support/status.hpp"

namespace ferro {
namespace {

ferro_status status_make(uint32_t code, const char* message) {
    return make_status(code, message != nullptr ? message : "");
}
void status_free(ferro_status status) { free_status(status); }
uint32_t status_code(ferro_status status) {
    return status != nullptr ? status->code : uint32_t{FERRO_OK};
}
const char* status_message(ferro_status status) {
    return status != nullptr ? status->message.c_str() : "";
}

void log(const ferro_host_api* host, uint32_t level, const char* source, const char* message) {
    runtime_of(host).logger().log(level, source != nullptr ? source : "plugin",
                                  message != nullptr ? message : "");
}
ferro_bool log_enabled(const ferro_host_api* host, uint32_t level) {
    return runtime_of(host).logger().enabled(level) ? 1 : 0;
}

// Services that need tensors, ops and sessions answer UNIMPLEMENTED until the cpu engine and
// dispatch land (issue 2, increment 3); plugins then get them without an ABI change.
template <class... A>
ferro_status not_yet(A...) {
    return make_status(FERRO_UNIMPLEMENTED, "host service not available in this build yet");
}

}  // namespace

Runtime& runtime_of(const ferro_host_api* host) { return *static_cast<Runtime*>(host->host_data); }

ferro_host_api make_host_api(Runtime* runtime) {
    ferro_host_api api{};
    api.struct_size = sizeof api;
    api.abi_major = FERRO_ABI_MAJOR;
    api.abi_minor = FERRO_ABI_MINOR;
    api.host_data = runtime;
    api.status_make = status_make;
    api.status_free = status_free;
    api.status_code = status_code;
    api.status_message = status_message;
    api.log = log;
    api.log_enabled = log_enabled;
    api.tensor_retain = [](ferro_tensor) {};
    api.tensor_release = [](ferro_tensor) {};
    api.tensor_view = not_yet<ferro_tensor, ferro_tensor_view*>;
    api.tensor_signature = not_yet<ferro_tensor, ferro_signature*>;
    api.tensor_engine = [](ferro_tensor) -> const char* { return ""; };
    api.tensor_empty = not_yet<const ferro_host_api*, const char*, ferro_dtype, int32_t,
                               const int64_t*, ferro_tensor*>;
    api.tensor_from_host = not_yet<const ferro_host_api*, const char*, ferro_dtype, int32_t,
                                   const int64_t*, const void*, ferro_tensor*>;
    api.tensor_to_host = not_yet<ferro_tensor, void*, uint64_t>;
    api.op_find = not_yet<const ferro_host_api*, const char*, ferro_op*>;
    api.op_call = not_yet<const ferro_host_api*, ferro_op, ferro_op_call_args*>;
    api.grad_enabled = [](const ferro_host_api*) -> ferro_bool { return 0; };
    api.session_fill = not_yet<ferro_session, const ferro_fill_args*>;
    api.session_cast = not_yet<ferro_session, const ferro_cast_args*>;
    api.session_unary = not_yet<ferro_session, const ferro_unary_args*>;
    api.session_binary = not_yet<ferro_session, const ferro_binary_args*>;
    api.session_where = not_yet<ferro_session, const ferro_where_args*>;
    api.session_reduce = not_yet<ferro_session, const ferro_reduce_args*>;
    api.session_copy_strided = not_yet<ferro_session, const ferro_copy_args*>;
    api.session_gemm_batched = not_yet<ferro_session, const ferro_gemm_args*>;
    api.session_scratch = not_yet<ferro_session, uint64_t, ferro_buffer_view*>;
    return api;
}

}  // namespace ferro
