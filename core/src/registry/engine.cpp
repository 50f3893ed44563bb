#include "registry/engine.hpp"

#include "loader/load_error.hpp"

#include <fmt/format.h>

namespace ferro::host {
namespace {

void require_entry(const void* fn, const std::string& engine, const char* entry) {
    if (fn == nullptr) {
        throw LoadError(LoadStage::create, FERRO_INVALID_ARGUMENT,
                        fmt::format("engine '{}': required entry {} is NULL", engine, entry));
    }
}

}  // namespace

bool records_sessions(const ferro_engine_iface& f) noexcept {
    return FERRO_HAS_FIELD(&f, ferro_engine_iface, recording_destroy) && f.session_begin_recording != nullptr &&
           f.session_end_recording != nullptr && f.recording_submit != nullptr && f.recording_destroy != nullptr;
}

namespace {

#define FERRO_REQUIRE_ENTRY(iface, name, entry) require_entry(reinterpret_cast<const void*>((iface).entry), name, #entry)

void check_iface(const ferro_engine_iface* iface, const std::string& name) {
    if (iface == nullptr) {
        throw LoadError(LoadStage::create, FERRO_INVALID_ARGUMENT,
                        fmt::format("engine '{}': create returned no function table", name));
    }
    if (iface->struct_size < FERRO_STRUCT_SIZE_UP_TO(ferro_engine_iface, destroy)) {
        throw LoadError(LoadStage::create, FERRO_INVALID_ARGUMENT,
                        fmt::format("engine '{}': ferro_engine_iface.struct_size is {}, expected "
                                    "at least {} (ABI 1.0)",
                                    name, iface->struct_size, FERRO_STRUCT_SIZE_UP_TO(ferro_engine_iface, destroy)));
    }
    const auto& f = *iface;
    FERRO_REQUIRE_ENTRY(f, name, properties);
    FERRO_REQUIRE_ENTRY(f, name, alloc);
    FERRO_REQUIRE_ENTRY(f, name, free);
    FERRO_REQUIRE_ENTRY(f, name, copy_h2d);
    FERRO_REQUIRE_ENTRY(f, name, copy_d2h);
    FERRO_REQUIRE_ENTRY(f, name, session_begin);
    FERRO_REQUIRE_ENTRY(f, name, session_end);
    FERRO_REQUIRE_ENTRY(f, name, fill);
    FERRO_REQUIRE_ENTRY(f, name, cast);
    FERRO_REQUIRE_ENTRY(f, name, unary);
    FERRO_REQUIRE_ENTRY(f, name, binary);
    FERRO_REQUIRE_ENTRY(f, name, where);
    FERRO_REQUIRE_ENTRY(f, name, reduce);
    FERRO_REQUIRE_ENTRY(f, name, copy_strided);
    FERRO_REQUIRE_ENTRY(f, name, gemm_batched);
    FERRO_REQUIRE_ENTRY(f, name, destroy);
    if (records_sessions(f)) return;
    if (FERRO_HAS_FIELD(&f, ferro_engine_iface, recording_destroy) &&
        (f.session_begin_recording != nullptr || f.session_end_recording != nullptr || f.recording_submit != nullptr ||
         f.recording_destroy != nullptr)) {
        throw LoadError(LoadStage::create, FERRO_INVALID_ARGUMENT,
                        fmt::format("engine '{}': the recording entries (session_begin_recording, session_end_recording, "
                                    "recording_submit, recording_destroy) are all set or all NULL",
                                    name));
    }
}

}  // namespace

Engine::Engine(std::string name, const ferro_engine_desc& desc, uint32_t ordinal, ferro_engine_instance instance,
               LibraryPtr library, uint64_t runtime_id)
    : name_(std::move(name)),
      kind_(desc.kind),
      context_abi_(desc.context_abi),
      ordinal_(ordinal),
      runtime_id_(runtime_id),
      self_(instance.self),
      iface_(instance.iface),
      library_(std::move(library)) {
    try {
        check_iface(iface_, name_);
    } catch (...) {
        // The instance is ours now; without a valid destroy entry it can only leak.
        if (iface_ != nullptr && iface_->destroy != nullptr) iface_->destroy(self_);
        throw;
    }
    props_.struct_size = sizeof props_;
    if (ferro_status st = iface_->properties(self_, &props_)) {
        const std::string message = st->message;
        free_status(st);
        iface_->destroy(self_);
        throw LoadError(LoadStage::create, FERRO_INTERNAL, fmt::format("engine '{}': properties failed: {}", name_, message));
    }
    constexpr uint32_t kAddressBuffers = FERRO_ENGINE_BUFFER_IS_ADDRESS | FERRO_ENGINE_HOST_ADDRESSABLE;
    buffers_are_addresses_ = (props_.flags & kAddressBuffers) == kAddressBuffers;
    props_.name[sizeof props_.name - 1] = '\0';
    props_.details[sizeof props_.details - 1] = '\0';
    target_ = {sizeof target_,
               ordinal_,
               name_.c_str(),
               kind_.c_str(),
               context_abi_.c_str(),
               &props_,
               FERRO_HAS_FIELD(&props_, ferro_device_props, threads) ? props_.threads : 0};
}

Engine::~Engine() { iface_->destroy(self_); }

void check_runtime(uint64_t runtime_id, const Engine& engine, const std::string& context, const std::string& what) {
    if (engine.runtime_id() == runtime_id) return;
    throw Error(FERRO_INVALID_ARGUMENT,
                fmt::format("{}: {} belongs to runtime {}, not to runtime {} that the call is made on (copy it "
                            "through host memory or DLPack)",
                            context, what, engine.runtime_id(), runtime_id));
}

}  // namespace ferro::host
