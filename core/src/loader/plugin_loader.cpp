#include "loader/plugin_loader.hpp"

#include "loader/descriptor_check.hpp"
#include "loader/elf_check.hpp"
#include "loader/load_error.hpp"

#include <fmt/format.h>

#include <system_error>

namespace ferro::host {
namespace {

void check_file(const std::filesystem::path& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        throw LoadError(LoadStage::open, FERRO_NOT_FOUND, "no such file");
    }
    if (!std::filesystem::is_regular_file(status)) {
        throw LoadError(LoadStage::open, FERRO_INVALID_ARGUMENT, "not a regular file");
    }
    if (std::filesystem::file_size(path, ec) == 0) {
        throw LoadError(LoadStage::open, FERRO_INVALID_ARGUMENT, "empty file: not a shared library");
    }
    check_elf_image(path);
}

const ferro_plugin_desc* query(ferro_plugin_query_fn entry, const ferro_host_api* host) {
    const ferro_plugin_desc* desc = nullptr;
    ferro_status st = nullptr;
    try {
        st = entry(host, &desc);
    } catch (...) {
        throw LoadError(LoadStage::query, FERRO_INTERNAL, escaped_exception_message(FERRO_PLUGIN_ENTRY_NAME));
    }
    if (st != nullptr) throw_load_error(LoadStage::query, st, FERRO_PLUGIN_ENTRY_NAME);
    if (desc == nullptr) {
        throw LoadError(LoadStage::query, FERRO_INVALID_ARGUMENT,
                        fmt::format("{} returned success but no descriptor", FERRO_PLUGIN_ENTRY_NAME));
    }
    return desc;
}

}  // namespace

void log_stage(const Logger& logger, LoadStage stage, const std::string& file) {
    logger.logf(FERRO_LOG_TRACE, "loader", "stage {}: {}", load_stage_name(stage), file);
}

LoadedPlugin open_plugin(const std::filesystem::path& path, const ferro_host_api* host, const Logger& logger) {
    check_file(path);
    log_stage(logger, LoadStage::open, path.string());  // static initialisers run here
    auto library = std::make_shared<Library>(path);
    log_stage(logger, LoadStage::entry, path.string());
    const ferro_plugin_query_fn entry = library->entry();
    if (entry == nullptr) {
        throw LoadError(LoadStage::entry, FERRO_NOT_FOUND,
                        fmt::format("the library does not export {} (is it a ferro plugin? build "
                                    "it with ferro_add_plugin and FERRO_PLUGIN_EXPORT)",
                                    FERRO_PLUGIN_ENTRY_NAME));
    }
    log_stage(logger, LoadStage::query, path.string());
    const ferro_plugin_desc* desc = query(entry, host);
    log_stage(logger, LoadStage::validate, path.string());
    check_abi(*desc);
    check_descriptor(*desc);
    return {std::move(library), desc};
}

}  // namespace ferro::host
