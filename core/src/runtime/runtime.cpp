#include "runtime/runtime.hpp"

#include "cpu_engine.hpp"
#include "host_api/host_api.hpp"
#include "loader/descriptor_check.hpp"
#include "loader/plugin_loader.hpp"
#include "ops/core_family.hpp"
#include "registry/registration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace ferro::host {

Runtime::Runtime(RuntimeOptions options)
    : options_(std::move(options)),
      logger_(options_.log_level, options_.log_callback, options_.log_user),
      host_api_(make_host_api(this)),
      current_(std::make_shared<Snapshot>()),
      dispatcher_(std::make_unique<Dispatcher>(*this)) {
    for (uint32_t i = 0; i < FERRO_CORE_OP_COUNT; ++i) core_rule_ops_[i] = &op(ferro_core_op_name(i));
    register_builtins();
    if (options_.autoload) load_search_path();
}

// The cpu engine and the core family are plugins linked into libferro: registered through the
// same descriptors and checks as any file, without a library to load.
void Runtime::register_builtins() {
    const RegistrationContext ctx = registration_context();
    const ferro_plugin_desc* cpu = nullptr;
    throw_if_error(ferro_cpu_plugin_query(&host_api_, &cpu));
    for (const ferro_plugin_desc* desc : {cpu, core_plugin_desc()}) {
        check_descriptor(*desc, DescriptorSource::builtin);
        reconfigure([&](Snapshot& s) {
            register_plugin(s, LoadedPlugin{nullptr, desc}, "", ctx);
            if (desc == core_plugin_desc()) attach_core_host_ops(s);
        });
    }
}

// The core ops the host runs itself, resolved once into their entries; a declared view must be
// one of them (a plan writes into buffers the host allocates).
void Runtime::attach_core_host_ops(Snapshot& s) {
    for (auto& [name, entry] : s.ops) {
        if (entry.family_id != "core") continue;
        entry.host_op = core_host_op_at(entry.index);
        if (!entry.views.empty() && entry.host_op == nullptr) {
            throw Error(FERRO_INTERNAL, name + " declares a view but has no host implementation");
        }
    }
}

Runtime::~Runtime() = default;

uint64_t Runtime::next_id() noexcept {
    static std::atomic<uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

SnapshotPtr Runtime::snapshot() const {
    std::lock_guard lock(snapshot_mutex_);
    return current_;
}

void Runtime::publish(std::shared_ptr<Snapshot> next) {
    SnapshotPtr previous;
    {
        std::lock_guard lock(snapshot_mutex_);
        epoch_.store(next->epoch, std::memory_order_release);
        previous = std::exchange(current_, std::move(next));
    }
    // `previous` may be the last reference to engines and libraries: release it outside the
    // lock, because destroying plugin objects runs plugin code.
}

void Runtime::reconfigure(const std::function<void(Snapshot&)>& edit) {
    std::lock_guard writer(writer_mutex_);
    auto draft = std::make_shared<Snapshot>(*snapshot());
    edit(*draft);
    draft->epoch += 1;
    const uint64_t epoch = draft->epoch;
    publish(std::move(draft));
    // Plans of older epochs can never be found again (the epoch is part of their key).
    if (dispatcher_) {
        plan_cache().remove_if([epoch](const PlanEntry& e) { return e.key.epoch < epoch; });
    }
}

void Runtime::clear_plans() { plan_cache().clear(); }

PlanCacheStats Runtime::plan_cache_stats() {
    PlanCacheStats s = plan_cache().stats();
    std::lock_guard lock(ops_mutex_);
    for (auto& [name, handle] : ops_) {
        std::lock_guard op_lock(handle->mutex);
        s.hits += handle->hits;
        s.misses += handle->misses;
    }
    return s;
}

ferro_op_impl& Runtime::op(const std::string& qualified_name) {
    std::lock_guard lock(ops_mutex_);
    auto& slot = ops_[qualified_name];
    if (!slot) {
        slot = std::make_unique<ferro_op_impl>();
        slot->name = qualified_name;
        slot->runtime = this;
    }
    return *slot;
}

Outputs Runtime::call(ferro_op_impl& handle, std::span<const ferro_named_attr> attrs,
                      std::span<ferro_tensor_impl* const> inputs) {
    return dispatcher_->call(handle, attrs.data(), static_cast<uint32_t>(attrs.size()), inputs);
}

Outputs Runtime::call(const std::string& qualified_name, std::span<const ferro_named_attr> attrs,
                      std::span<ferro_tensor_impl* const> inputs) {
    return call(op(qualified_name), attrs, inputs);
}

EnginePtr Runtime::engine(const std::string& name) const { return snapshot()->engine_named(name); }

// A file keeps its latest diagnostic only: rescanning a path with a broken file replaces it.
void Runtime::record_diagnostic(Diagnostic diagnostic) {
    reconfigure([&](Snapshot& s) {
        std::erase_if(s.diagnostics, [&](const Diagnostic& d) { return d.file == diagnostic.file; });
        s.diagnostics.push_back(std::move(diagnostic));
    });
}

std::span<const ferro_op> Runtime::rule_ops(std::span<const char* const> names) {
    std::vector<std::string> key(names.begin(), names.end());
    std::lock_guard lock(rule_ops_mutex_);
    std::vector<ferro_op>& handles = rule_ops_[std::move(key)];
    if (handles.empty()) {
        for (const char* name : names) handles.push_back(&op(name));
    }
    return handles;
}

RegistrationContext Runtime::registration_context() {
    return {&host_api_, logger_, id_, [this](std::span<const char* const> names) { return rule_ops(names); }};
}

void Runtime::warn_unresolved_rule_calls(const std::vector<std::string>& plugins) {
    const SnapshotPtr s = snapshot();
    for (const auto& [id, family] : s->families) {
        if (std::find(plugins.begin(), plugins.end(), family.plugin) == plugins.end()) continue;
        for (const char* name : family.rule_calls) {
            if (s->find_op(name) != nullptr) continue;
            logger_.logf(FERRO_LOG_WARN, "loader",
                         "plugin '{}': the rules of family '{}' call {}, which no loaded plugin "
                         "provides; gradients that need it will fail",
                         family.plugin, id, name);
        }
    }
}

LoadResult Runtime::load_plugin(const std::filesystem::path& path) {
    LoadResult result = load_one(path);
    if (!result.plugin.empty() && !result.already_loaded) warn_unresolved_rule_calls({result.plugin});
    return result;
}

LoadResult Runtime::load_one(const std::filesystem::path& given) {
    const RegistrationContext ctx = registration_context();
    const std::filesystem::path path = canonical_path(given);
    if (const PluginRecord* loaded = snapshot()->find_plugin_file(path.string())) {
        logger_.logf(FERRO_LOG_DEBUG, "loader", "{}: already loaded as plugin '{}'", path.string(), loaded->name);
        return {loaded->name, std::nullopt, true};
    }
    try {
        LoadedPlugin plugin = open_plugin(path, &host_api_, logger_);
        const std::string name = plugin.desc->name;
        reconfigure([&](Snapshot& s) {
            register_plugin(s, plugin, path.string(), ctx);
            std::erase_if(s.diagnostics, [&](const Diagnostic& d) { return d.file == path.string(); });
        });
        logger_.logf(FERRO_LOG_INFO, "loader", "loaded plugin '{}' {} (ABI {}.{}) from {}", name, plugin.desc->version,
                     plugin.desc->abi_major, plugin.desc->abi_minor, path.string());
        return {name, std::nullopt};
    } catch (const LoadError& e) {
        Diagnostic d{path.string(), e.stage(), e.code(), e.what()};
        logger_.logf(FERRO_LOG_WARN, "loader", "skipped {}: stage {}: {}", d.file, load_stage_name(d.stage), d.message);
        record_diagnostic(d);
        return {"", d};
    } catch (const std::exception& e) {
        Diagnostic d{path.string(), LoadStage::open, FERRO_INTERNAL, e.what()};
        logger_.logf(FERRO_LOG_WARN, "loader", "skipped {}: {}", d.file, d.message);
        record_diagnostic(d);
        return {"", d};
    }
}

std::vector<LoadResult> Runtime::load_search_path() {
    std::vector<LoadResult> results;
    std::vector<std::string> loaded;
    for (const auto& dir : search_path()) {
        if (!dir.exists) continue;
        for (const auto& file : plugin_candidates(dir.path)) {
            results.push_back(load_one(file));
            if (!results.back().plugin.empty() && !results.back().already_loaded) loaded.push_back(results.back().plugin);
        }
    }
    warn_unresolved_rule_calls(loaded);  // once all are loaded: one may provide another's
    return results;
}

std::vector<SearchDir> Runtime::search_path() const {
    return resolve_search_path(options_.plugin_paths, options_.use_environment_path, options_.use_default_dir);
}

void Runtime::unload_plugin(const std::string& name) {
    reconfigure([&](Snapshot& s) {
        const PluginRecord* record = s.find_plugin(name);
        if (record == nullptr) throw Error(FERRO_NOT_FOUND, "unload: no plugin named '" + name + "'");
        if (record->builtin) {
            throw Error(FERRO_FAILED_PRECONDITION, "unload: plugin '" + name + "' is built into libferro");
        }
        // Cached plans are the caches', not the user's: drop them before counting.
        const LibraryPtr library = record->library;
        clear_plans();
        if (const long live = library->user_objects(); live > 0) {
            throw Error(FERRO_FAILED_PRECONDITION, "unload: plugin '" + name + "' still has " + std::to_string(live) +
                                                       " live object(s) (tensors on its engines, plans of calls in flight or of "
                                                       "bound calls that ran its ops); release them first");
        }
        remove_plugin(s, name);
    });
    logger_.logf(FERRO_LOG_INFO, "loader", "unloaded plugin '{}'", name);
}

}  // namespace ferro::host
