#include "probe.hpp"

#include "cases.hpp"
#include "check.hpp"

#include <ferro/ferro.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstring>
#include <map>

namespace ferro::inspect {

// Written straight to the pipe, starting on a line of its own whatever a plugin printed before.
void emit(const nlohmann::json& line) {
    std::string text(1, '\n');
    text += line.dump();
    text += '\n';
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(STDOUT_FILENO, text.data() + done, text.size() - done);
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

namespace {

// The loader logs "stage S: FILE" at trace level before running plugin code in stage S.
void on_log(void*, uint32_t level, const char* source, const char* message) {
    if (level != FERRO_LOG_TRACE || std::strcmp(source, "loader") != 0 || std::strncmp(message, "stage ", 6) != 0) return;
    const char* colon = std::strchr(message + 6, ':');
    if (colon == nullptr) return;
    emit({{"event", "stage"}, {"stage", std::string(message + 6, colon)}, {"file", std::string(colon + 2)}});
}

nlohmann::json dtype_list(const std::vector<DType>& dtypes) {
    nlohmann::json out = nlohmann::json::array();
    for (DType d : dtypes) out.push_back(dtype_name(d));
    return out;
}

nlohmann::json bits(uint64_t mask, int count) {
    nlohmann::json out = nlohmann::json::array();
    for (int i = 0; i < std::min(count, 64); ++i) {
        if ((mask >> i) & 1u) out.push_back(i);
    }
    return out;
}

const char* attr_type_name(uint32_t type) {
    switch (type) {
        case FERRO_ATTR_I64: return "int";
        case FERRO_ATTR_F64: return "float";
        case FERRO_ATTR_BOOL: return "bool";
        case FERRO_ATTR_STR: return "str";
        case FERRO_ATTR_I64_ARRAY: return "int[]";
        case FERRO_ATTR_F64_ARRAY: return "float[]";
        default: return "none";
    }
}

nlohmann::json op_detail(const OpInfo& op) {
    nlohmann::json attrs = nlohmann::json::array();
    for (const OpAttrInfo& a : op.attrs) {
        attrs.push_back({{"name", a.name},
                         {"type", attr_type_name(a.type)},
                         {"default", a.default_text},
                         {"required", (a.flags & FERRO_ATTR_FLAG_REQUIRED) != 0},
                         {"optional", (a.flags & FERRO_ATTR_FLAG_OPTIONAL) != 0},
                         {"doc", a.doc}});
    }
    const int in = op.n_inputs < 0 ? 64 : op.n_inputs;
    nlohmann::json views = nlohmann::json::array();
    for (const OpViewInfo& v : op.views) views.push_back({{"output", v.output}, {"input", v.input}, {"may_copy", v.may_copy}});
    return {{"name", op.name},
            {"doc", op.doc},
            {"inputs", op.n_inputs},
            {"min_inputs", op.min_inputs},
            {"outputs", op.n_outputs},
            {"attrs", attrs},
            {"dtypes", dtype_list(op.dtypes)},
            {"differentiable_inputs", op.n_inputs < 0 && op.diff_inputs != 0 ? nlohmann::json("all") : bits(op.diff_inputs, in)},
            {"differentiable_outputs", bits(op.diff_outputs, op.n_outputs < 0 ? 64 : op.n_outputs)},
            {"vjp", op.has_vjp},
            {"jvp", op.has_jvp},
            {"views", views}};
}

// The plugin loaded from `file`, or why it failed.
nlohmann::json describe_file(const Inventory& inv, const std::string& file, bool detail) {
    nlohmann::json r = {{"file", file}};
    for (const DiagnosticInfo& d : inv.diagnostics) {
        if (d.file != file) continue;
        r["status"] = "failed";
        r["stage"] = d.stage;
        r["code"] = d.code;
        r["reason"] = d.message;
        return r;
    }
    const PluginInfo* plugin = nullptr;
    for (const PluginInfo& p : inv.plugins) {
        if (!p.builtin && p.path == file) plugin = &p;
    }
    if (plugin == nullptr) {
        r["status"] = "failed";
        r["stage"] = "register";
        r["reason"] = "the runtime reports no plugin from this file";
        return r;
    }
    r["status"] = "loaded";
    r["name"] = plugin->name;
    r["version"] = plugin->version;
    r["description"] = plugin->description;
    r["abi"] = std::to_string(plugin->abi_major) + "." + std::to_string(plugin->abi_minor);
    std::map<std::string, std::vector<const OpInfo*>> families;
    for (const FamilyInfo& f : inv.families) {
        if (f.plugin == plugin->name) families[f.id];
    }
    for (const OpInfo& op : inv.ops) {
        if (auto it = families.find(op.family); it != families.end()) it->second.push_back(&op);
    }
    r["families"] = nlohmann::json::array();
    for (const auto& [family, ops] : families) {
        nlohmann::json f = {{"name", family}, {"ops", ops.size()}};
        if (detail) {
            f["op_details"] = nlohmann::json::array();
            for (const OpInfo* op : ops) f["op_details"].push_back(op_detail(*op));
            f["modules"] = nlohmann::json::array();
            for (const ModuleInfo& m : inv.modules) {
                if (m.family == family)
                    f["modules"].push_back({{"engine", m.engine}, {"available", m.available}, {"reason", m.reason}});
            }
        }
        r["families"].push_back(f);
    }
    r["engines"] = nlohmann::json::array();
    for (const EngineKindInfo& k : inv.engine_kinds) {
        if (k.plugin != plugin->name) continue;
        nlohmann::json e = {{"kind", k.kind}, {"devices", k.device_count}, {"reason", k.reason}};
        e["names"] = nlohmann::json::array();
        for (const EngineInfo& engine : inv.engines) {
            if (engine.plugin != plugin->name || engine.kind != k.kind) continue;
            e["names"].push_back(engine.name);
            if (detail) {
                e["device_details"].push_back({{"name", engine.name},
                                               {"device", engine.device},
                                               {"memory_bytes", engine.memory_bytes},
                                               {"score", engine.score},
                                               {"dtypes", dtype_list(engine.dtypes)},
                                               {"details", engine.details}});
            }
        }
        r["engines"].push_back(e);
    }
    r["module_families"] = plugin->module_families;
    std::string kind;
    for (const auto& [part, present] : {std::pair<const char*, bool>{"family", !families.empty()},
                                        {"engine", !r["engines"].empty()},
                                        {"modules", !plugin->module_families.empty()}}) {
        if (present) kind += (kind.empty() ? "" : "+") + std::string(part);
    }
    r["kind"] = kind.empty() ? "empty" : kind;
    return r;
}

// Whether `op` runs in `dtype` on `engine`: its family's first example, called there (the
// module's prepare decides; its decline or error is the reason). Empty: it runs, or there is
// no example to try.
std::string try_example(const Runtime& rt, const OpInfo& op, DType dtype, const std::string& engine, bool& tried) {
    try {
        const auto examples = rt.op_examples(op.name, dtype, engine);
        tried = !examples.empty();
        if (tried) (void)call_all(rt.ref(), op.name.c_str(), examples[0].inputs, examples[0].attrs);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

// Every op of the runtime on every engine (of the request's family and engine, when given): one
// case per dtype the op declares, or one without a dtype when it declares none. A case's result
// is {"op", "engine", "cell": {"dtype", "supported", "reason", "tried"} or null, "row_reason"
// (no module for the family there)}.
void support_matrix(const Runtime& rt, const Inventory& inv, const ProbeRequest& request) {
    CaseStream cases(request.from);
    for (const OpInfo& op : inv.ops) {
        if (!request.family.empty() && op.family != request.family) continue;
        for (const EngineInfo& engine : inv.engines) {
            if (!request.engine.empty() && engine.name != request.engine) continue;
            std::string reason;
            bool module = false;
            for (const ModuleInfo& m : inv.modules) {
                if (m.family != op.family || m.engine != engine.name) continue;
                if (m.available) module = true;
                else if (reason.empty()) reason = m.reason.empty() ? "the module failed to start" : m.reason;
            }
            if (!module && reason.empty()) reason = "no plugin provides family " + op.family + " for this engine";
            const nlohmann::json row = {{"op", op.name}, {"engine", engine.name}};
            const auto result = [&](nlohmann::json cell) {
                nlohmann::json r = row;
                r["cell"] = std::move(cell);
                if (!module) r["row_reason"] = reason;
                return r;
            };
            if (op.dtypes.empty()) cases.run(row, [&] { return result(nullptr); });
            for (DType d : op.dtypes) {
                nlohmann::json key = row;
                key["dtype"] = dtype_name(d);
                cases.run(key, [&] {
                    const bool kernels =
                        engine.dtypes.empty() || std::find(engine.dtypes.begin(), engine.dtypes.end(), d) != engine.dtypes.end();
                    nlohmann::json cell = {{"dtype", dtype_name(d)}, {"supported", module && kernels}};
                    if (!module) cell["reason"] = reason;
                    else if (!kernels) cell["reason"] = "the engine has no kernels for this dtype";
                    if (module && kernels) {
                        bool tried = false;
                        const std::string failed = try_example(rt, op, d, engine.name, tried);
                        cell["tried"] = tried;  // false: the family has no example to run it on
                        if (!failed.empty()) {
                            cell["supported"] = false;
                            cell["reason"] = failed;
                        }
                    }
                    return result(std::move(cell));
                });
            }
        }
    }
}

}  // namespace

int run_probe(const ProbeRequest& request) {
    const std::vector<std::string>& files = request.files;
    Runtime::Options options;
    options.use_environment_path = false;
    options.use_default_dir = false;
    options.autoload = false;
    options.log_level = FERRO_LOG_TRACE;
    options.log_callback = on_log;
    Runtime rt(options);
    for (const std::string& file : files) {
        try {
            rt.load_plugin(file);
        } catch (const Error&) {
            // The diagnostic in the inventory says where and why.
        }
    }
    const Inventory inv = rt.inventory();
    nlohmann::json result = {{"event", "result"}, {"plugins", nlohmann::json::array()}};
    for (const std::string& file : files) result["plugins"].push_back(describe_file(inv, file, request.detail));
    if (request.matrix) support_matrix(rt, inv, request);
    if (!request.check.empty()) run_check(rt, request.check, {request.engine, request.quick}, request.from);
    emit(result);
    return 0;
}

}  // namespace ferro::inspect
