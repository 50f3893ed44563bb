// The runtime a fuzz target calls into (one per process, as an application would keep it), and
// an op call assembled piece by piece from fuzzed values: inputs made from shapes, attributes of
// any type, run through ferro_call with every output and status released.
#pragma once

#include <ferro/ferro.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace ferro::fuzz {

// The build tree's plugin directory: bin/../lib/ferro/plugins from this executable.
inline std::string plugin_dir() {
    char exe[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string path(exe, n > 0 ? static_cast<size_t>(n) : 0);
    path = path.substr(0, path.rfind('/'));
    return path.substr(0, path.rfind('/')) + "/lib/ferro/plugins";
}

// Created on the first call, with `plugin` (a file name in plugin_dir(), or NULL) loaded; a
// failure to set up is a broken harness, not a finding: it aborts with the reason.
inline ferro_runtime* runtime_with(const char* plugin) {
    static ferro_runtime* rt = [plugin] {
        ferro_runtime_options o;
        ferro_runtime_options_init(&o);
        o.autoload = 0;
        o.use_environment_path = 0;
        o.log_level_set = 1;
        o.log_level = FERRO_LOG_OFF;
        ferro_runtime* made = nullptr;
        ferro_status st = ferro_runtime_create(&o, &made);
        if (st == nullptr && plugin != nullptr) st = ferro_runtime_load_plugin(made, (plugin_dir() + "/" + plugin).c_str());
        if (st != nullptr) {
            fprintf(stderr, "fuzz harness: %s\n", ferro_status_message(st));
            abort();
        }
        return made;
    }();
    return rt;
}

class Call {
public:
    Call(ferro_runtime* rt, std::string op) : rt_(rt), op_(std::move(op)) {}
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    ~Call() {
        for (ferro_tensor t : made_) ferro_tensor_release(t);
    }

    // A tensor of `shape` and `dtype` holding 0.5, 1.5, ...; NULL (which the call must refuse)
    // when the runtime refuses to make it.
    void input(const std::vector<int64_t>& shape, ferro_dtype dtype) {
        size_t n = 1;
        for (int64_t s : shape) n *= static_cast<size_t>(s);
        std::vector<unsigned char> bytes(n * 16);
        for (size_t i = 0; i < n; ++i) {
            const double v = static_cast<double>(i) + 0.5;
            std::memcpy(bytes.data() + i * 16, &v, sizeof v);
        }
        ferro_tensor t = nullptr;
        if (ferro_status st =
                ferro_tensor_from_host(rt_, "cpu", dtype, static_cast<int32_t>(shape.size()), shape.data(), bytes.data(), &t)) {
            ferro_status_free(st);
        }
        made_.push_back(t);
        inputs_.push_back(t);
    }
    void input(ferro_tensor borrowed) { inputs_.push_back(borrowed); }

    void attr_i64(const char* name, int64_t v) { add(name, FERRO_ATTR_I64).v.i64 = v; }
    void attr_f64(const char* name, double v) { add(name, FERRO_ATTR_F64).v.f64 = v; }
    void attr_bool(const char* name, bool v) { add(name, FERRO_ATTR_BOOL).v.boolean = v; }
    void attr_none(const char* name) { add(name, FERRO_ATTR_NONE); }
    void attr_str(const char* name, std::string v) {
        add(name, FERRO_ATTR_STR).v.str = strings_.emplace_back(std::move(v)).c_str();
    }
    void attr_i64_array(const char* name, std::vector<int64_t> v) {
        const std::vector<int64_t>& kept = arrays_.emplace_back(std::move(v));
        ferro_attr_value& a = add(name, FERRO_ATTR_I64_ARRAY);
        a.v.i64_array = kept.data();
        a.count = static_cast<uint32_t>(kept.size());
    }
    // Any type tag with raw bits for the value (the host must refuse what it cannot read); tags
    // whose value is a pointer get a valid one, since no callee can check a pointer.
    void attr_raw(const char* name, uint32_t type, int64_t bits) {
        ferro_attr_value& v = add(name, type);
        v.v.i64 = bits;
        if (type == FERRO_ATTR_STR) v.v.str = "";
        if (type == FERRO_ATTR_I64_ARRAY || type == FERRO_ATTR_F64_ARRAY) v.v.i64_array = nullptr;  // count 0
    }

    // The call's arguments for ferro_op_call, pointing into this Call (valid while it lives and
    // gets no more inputs or attributes); outputs land in output(i).
    ferro_op_call_args args(uint32_t capacity) {
        named_.assign(attrs_.begin(), attrs_.end());
        ferro_op_call_args a{};
        a.struct_size = sizeof a;
        a.n_attrs = static_cast<uint32_t>(named_.size());
        a.attrs = named_.data();
        a.n_inputs = static_cast<uint32_t>(inputs_.size());
        a.inputs = inputs_.data();
        a.outputs_capacity = std::min<uint32_t>(capacity, 8);
        a.outputs = out_;
        return a;
    }
    ferro_tensor output(uint32_t i) const { return out_[i]; }

    // Runs the call; outputs and status are released. The status code (FERRO_OK on success).
    uint32_t run() {
        std::vector<ferro_named_attr> named(attrs_.begin(), attrs_.end());
        ferro_tensor out[8] = {};
        uint32_t n_out = 0;
        ferro_status st = ferro_call(rt_, op_.c_str(), named.data(), static_cast<uint32_t>(named.size()), inputs_.data(),
                                     static_cast<uint32_t>(inputs_.size()), out, 8, &n_out);
        const uint32_t code = ferro_status_code(st);
        ferro_status_free(st);
        for (uint32_t i = 0; i < n_out && code == FERRO_OK; ++i) ferro_tensor_release(out[i]);
        return code;
    }

private:
    ferro_attr_value& add(const char* name, uint32_t type) {
        ferro_named_attr& a = attrs_.emplace_back();
        a.name = names_.emplace_back(name).c_str();
        a.value.type = type;
        return a.value;
    }
    ferro_runtime* rt_;
    std::string op_;
    std::vector<ferro_tensor> inputs_, made_;
    std::deque<ferro_named_attr> attrs_;
    std::deque<std::string> names_, strings_;
    std::deque<std::vector<int64_t>> arrays_;
    std::vector<ferro_named_attr> named_;
    ferro_tensor out_[8] = {};
};

}  // namespace ferro::fuzz
