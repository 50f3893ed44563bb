#include "loader/library.hpp"

#include "loader/load_error.hpp"

#include <dlfcn.h>
#include <boost/dll/shared_library.hpp>

namespace ferro::host {

const char* load_stage_name(LoadStage stage) {
    switch (stage) {
        case LoadStage::open: return "open";
        case LoadStage::entry: return "entry";
        case LoadStage::query: return "query";
        case LoadStage::abi: return "abi";
        case LoadStage::validate: return "validate";
        case LoadStage::probe: return "probe";
        case LoadStage::create: return "create";
        case LoadStage::register_: return "register";
    }
    return "unknown";
}

void throw_load_error(LoadStage stage, ferro_status status, const std::string& what) {
    const uint32_t code = status->code;
    const std::string message = status->message;
    free_status(status);
    throw LoadError(stage, code, what + " failed: " + message);
}

struct Library::Impl {
    boost::dll::shared_library lib;
};

namespace {

// Boost.DLL's error codes are meaningless (always EBADF for load); the dlerror text inside
// what() is the informative part (TOOLCHAIN.md §3). Keep just that.
std::string dlerror_text(const std::string& what) {
    const std::string marker = "dlerror system message: ";
    auto start = what.find(marker);
    if (start == std::string::npos) return what;
    start += marker.size();
    auto end = what.find(')', start);
    // A message may itself contain ')' — cut at the last ')' before the trailing ": <errno>".
    auto last = what.rfind("):");
    if (last != std::string::npos && last >= start) end = last;
    return what.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

Library::Library(const std::filesystem::path& path) : path_(path), impl_(std::make_unique<Impl>()) {
    auto mode = boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local;
#ifdef FERRO_SANITIZER_BUILD
    mode = mode | static_cast<boost::dll::load_mode::type>(RTLD_NODELETE);
#endif
    try {
        impl_->lib.load(boost::dll::fs::path(path.string()), mode);
    } catch (const boost::dll::fs::system_error& e) {
        throw LoadError(LoadStage::open, FERRO_INVALID_ARGUMENT, "cannot load shared library: " + dlerror_text(e.what()));
    }
}

Library::~Library() = default;

ferro_plugin_query_fn Library::entry() const {
    if (!impl_->lib.has(FERRO_PLUGIN_ENTRY_NAME)) return nullptr;
    return impl_->lib.get<ferro_status(const ferro_host_api*, const ferro_plugin_desc**)>(FERRO_PLUGIN_ENTRY_NAME);
}

}  // namespace ferro::host
