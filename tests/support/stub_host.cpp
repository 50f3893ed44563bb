#include "stub_host.hpp"

#include <new>

struct ferro_status_impl {
    uint32_t code;
    std::string message;
};

namespace ferro::test {
namespace {

ferro_status make(uint32_t code, const char* message) { return new ferro_status_impl{code, message != nullptr ? message : ""}; }
void free_status(ferro_status s) { delete s; }
uint32_t code_of(ferro_status s) { return s != nullptr ? s->code : uint32_t{FERRO_OK}; }
const char* message_of(ferro_status s) { return s != nullptr ? s->message.c_str() : ""; }

void log(const ferro_host_api* host, uint32_t level, const char* source, const char* message) {
    auto* self = static_cast<StubHost*>(host->host_data);
    self->log_lines.push_back(std::to_string(level) + " " + source + ": " + message);
}
ferro_bool log_enabled(const ferro_host_api*, uint32_t) { return 1; }

template <class... A> ferro_status unimplemented(A...) { return make(FERRO_UNIMPLEMENTED, "stub host: service not available"); }

}  // namespace

StubHost::StubHost() {
    api.struct_size = sizeof(ferro_host_api);
    api.abi_major = FERRO_ABI_MAJOR;
    api.abi_minor = FERRO_ABI_MINOR;
    api.host_data = this;
    api.status_make = make;
    api.status_free = free_status;
    api.status_code = code_of;
    api.status_message = message_of;
    api.log = log;
    api.log_enabled = log_enabled;
    api.tensor_retain = [](ferro_tensor) {};
    api.tensor_release = [](ferro_tensor) {};
    api.tensor_view = unimplemented<ferro_tensor, ferro_tensor_view*>;
    api.tensor_signature = unimplemented<ferro_tensor, ferro_signature*>;
    api.tensor_engine = [](ferro_tensor) -> const char* { return ""; };
    api.tensor_empty = unimplemented<const ferro_host_api*, const char*, ferro_dtype, int32_t, const int64_t*, ferro_tensor*>;
    api.tensor_from_host =
        unimplemented<const ferro_host_api*, const char*, ferro_dtype, int32_t, const int64_t*, const void*, ferro_tensor*>;
    api.tensor_to_host = unimplemented<ferro_tensor, void*, uint64_t>;
    api.op_find = unimplemented<const ferro_host_api*, const char*, ferro_op*>;
    api.op_call = unimplemented<const ferro_host_api*, ferro_op, ferro_op_call_args*>;
    api.grad_enabled = [](const ferro_host_api*) -> ferro_bool { return 0; };
    api.session_fill = unimplemented<ferro_session, const ferro_fill_args*>;
    api.session_cast = unimplemented<ferro_session, const ferro_cast_args*>;
    api.session_unary = unimplemented<ferro_session, const ferro_unary_args*>;
    api.session_binary = unimplemented<ferro_session, const ferro_binary_args*>;
    api.session_where = unimplemented<ferro_session, const ferro_where_args*>;
    api.session_reduce = unimplemented<ferro_session, const ferro_reduce_args*>;
    api.session_copy_strided = unimplemented<ferro_session, const ferro_copy_args*>;
    api.session_gemm_batched = unimplemented<ferro_session, const ferro_gemm_args*>;
    api.session_scratch = unimplemented<ferro_session, uint64_t, ferro_buffer_view*>;
    api.session_native_context = unimplemented<ferro_session, const void**>;
    api.session_use = unimplemented<ferro_session, ferro_tensor>;
    api.runtime_communicator = [](const ferro_host_api*, ferro_communicator* out) -> ferro_status {
        out->kind = nullptr;  // none given
        out->handle = nullptr;
        out->bytes = 0;
        return nullptr;
    };
    api.session_parallel = unimplemented<ferro_session, uint32_t, ferro_status (*)(void*, uint32_t, ferro_session), void*>;
}

StatusParts take_status(const ferro_host_api& host, ferro_status status) {
    if (status == nullptr) return {FERRO_OK, ""};
    StatusParts parts{host.status_code(status), host.status_message(status)};
    host.status_free(status);
    return parts;
}

}  // namespace ferro::test
