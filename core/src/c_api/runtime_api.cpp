// extern "C" shims: runtime lifecycle and plugin loading.
#include "c_api/handles.hpp"

#include <ferro/ferro.h>

#include "tensor/tensor.hpp"

#include <fmt/format.h>

#include <string_view>

using ferro::host::c_api::require;

namespace {

ferro::host::RuntimeOptions to_options(const ferro_runtime_options* in) {
    ferro::host::RuntimeOptions out;
    if (in == nullptr) return out;
    if (in->struct_size < FERRO_STRUCT_SIZE_UP_TO(ferro_runtime_options, plan_cache_max_bytes)) {
        throw ferro::host::Error(FERRO_INVALID_ARGUMENT,
                                 "ferro_runtime_create: options->struct_size is too small (call "
                                 "ferro_runtime_options_init first)");
    }
    for (uint32_t i = 0; i < in->n_plugin_paths; ++i) {
        require(in->plugin_paths, "ferro_runtime_create", "options->plugin_paths");
        require(in->plugin_paths[i], "ferro_runtime_create", "options->plugin_paths[i]");
        out.plugin_paths.emplace_back(in->plugin_paths[i]);
    }
    out.use_environment_path = in->use_environment_path != 0;
    out.use_default_dir = in->use_default_dir != 0;
    out.autoload = in->autoload != 0;
    if (in->log_level_set != 0) out.log_level = in->log_level;
    out.log_callback = in->log_callback;
    out.log_user = in->log_user;
    out.plan_cache_max_entries = in->plan_cache_max_entries;
    out.plan_cache_max_bytes = in->plan_cache_max_bytes;
    if (FERRO_HAS_FIELD(in, ferro_runtime_options, communicator) && in->communicator.kind != nullptr) {
        const ferro_communicator& c = in->communicator;
        const std::string_view kind = c.kind;
        if (kind.empty() || kind.size() > 32 || kind.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != kind.npos) {
            throw ferro::host::Error(FERRO_INVALID_ARGUMENT,
                                     fmt::format("ferro_runtime_create: options->communicator.kind must be a short "
                                                 "lower-case name such as \"" FERRO_COMMUNICATOR_MPI "\"; got \"{}\"",
                                                 kind));
        }
        require(c.handle, "ferro_runtime_create", "options->communicator.handle");
        if (c.bytes == 0 || c.bytes > 256) {
            throw ferro::host::Error(FERRO_INVALID_ARGUMENT,
                                     fmt::format("ferro_runtime_create: options->communicator.bytes must be the size of "
                                                 "the communicator handle (1 to 256 bytes); got {}",
                                                 c.bytes));
        }
        out.communicator_kind = kind;
        const auto* bytes = static_cast<const std::byte*>(c.handle);
        out.communicator.assign(bytes, bytes + c.bytes);
    }
    return out;
}

}  // namespace

FERRO_API void ferro_runtime_options_init(ferro_runtime_options* options) {
    if (options == nullptr) return;
    const ferro::host::RuntimeOptions defaults;
    *options = {};
    options->struct_size = sizeof *options;
    options->use_environment_path = defaults.use_environment_path;
    options->use_default_dir = defaults.use_default_dir;
    options->autoload = defaults.autoload;
    options->plan_cache_max_entries = defaults.plan_cache_max_entries;
    options->plan_cache_max_bytes = defaults.plan_cache_max_bytes;
}

FERRO_API ferro_status ferro_runtime_create(const ferro_runtime_options* options, ferro_runtime** out_runtime) {
    return ferro::host::guard([&] {
        require(out_runtime, "ferro_runtime_create", "out_runtime");
        *out_runtime = new ferro_runtime_impl(to_options(options));
    });
}

FERRO_API void ferro_runtime_destroy(ferro_runtime* runtime) { delete runtime; }

FERRO_API ferro_status ferro_runtime_rank_size(ferro_runtime* runtime, int64_t* out_rank, int64_t* out_size) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_runtime_rank_size", "runtime");
        require(out_rank, "ferro_runtime_rank_size", "out_rank");
        require(out_size, "ferro_runtime_rank_size", "out_size");
        const ferro::host::Outputs info = runtime->runtime.call("comm.info", {}, {});
        int64_t rank_size[2] = {};
        ferro::host::copy_to_host(*info.at(0), rank_size, sizeof rank_size);
        *out_rank = rank_size[0];
        *out_size = rank_size[1];
    });
}

FERRO_API ferro_status ferro_runtime_load_plugin(ferro_runtime* runtime, const char* path) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_runtime_load_plugin", "runtime");
        require(path, "ferro_runtime_load_plugin", "path");
        const auto result = runtime->runtime.load_plugin(path);
        if (const auto& d = result.diagnostic) {
            throw ferro::host::Error(d->code,
                                     fmt::format("{}: stage {}: {}", d->file, ferro::host::load_stage_name(d->stage), d->message),
                                     FERRO_PHASE_LOAD);
        }
    });
}

FERRO_API ferro_status ferro_runtime_scan(ferro_runtime* runtime, uint32_t* out_loaded, uint32_t* out_failed) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_runtime_scan", "runtime");
        uint32_t loaded = 0, failed = 0;
        for (const auto& r : runtime->runtime.load_search_path()) {
            if (!r.already_loaded) ++(r.diagnostic ? failed : loaded);
        }
        if (out_loaded != nullptr) *out_loaded = loaded;
        if (out_failed != nullptr) *out_failed = failed;
    });
}

FERRO_API ferro_status ferro_runtime_unload_plugin(ferro_runtime* runtime, const char* name) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_runtime_unload_plugin", "runtime");
        require(name, "ferro_runtime_unload_plugin", "name");
        runtime->runtime.unload_plugin(name);
    });
}

FERRO_API uint64_t ferro_runtime_epoch(const ferro_runtime* runtime) { return runtime != nullptr ? runtime->runtime.epoch() : 0; }

FERRO_API uint64_t ferro_runtime_id(const ferro_runtime* runtime) { return runtime != nullptr ? runtime->runtime.id() : 0; }
