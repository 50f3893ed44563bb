// ferro plugin ABI — header-only C++ helpers for plugin authors.
//
// What C++ plugins need and C lacks: a guard that turns exceptions into statuses at every
// function the host calls (no exception may cross the ABI), an exception type carrying a
// status code, host logging with std::string, and RAII for host tensor references.
// Depends on the C headers and the standard library only.
//
// Since: 1.0.
#pragma once

#include "ferro/plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace ferro::plugin {

// Throw this inside plugin code to return a specific status code.
class Error : public std::exception {
public:
    Error(uint32_t code, std::string message) : code_(code), message_(std::move(message)) {}
    uint32_t code() const noexcept { return code_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    uint32_t code_;
    std::string message_;
};

// A status returned by a host service, carried through C++ code unchanged (code, message and
// annotations survive) until guard() hands it back to the host.
class StatusError : public std::exception {
public:
    StatusError(const ferro_host_api* host, ferro_status status) : host_(host), status_(status) {}
    StatusError(StatusError&& other) noexcept : host_(other.host_), status_(std::exchange(other.status_, nullptr)) {}
    StatusError(const StatusError&) = delete;
    StatusError& operator=(const StatusError&) = delete;
    StatusError& operator=(StatusError&&) = delete;
    ~StatusError() override {
        if (status_ != nullptr) host_->status_free(status_);
    }
    ferro_status release() noexcept { return std::exchange(status_, nullptr); }
    const char* what() const noexcept override {
        return status_ != nullptr ? host_->status_message(status_) : "(status released)";
    }

private:
    const ferro_host_api* host_;
    ferro_status status_;
};

// Throws StatusError when a host service failed.
inline void check(const ferro_host_api* host, ferro_status status) {
    if (status != nullptr) throw StatusError(host, status);
}

// Runs `body` and converts whatever it throws into a status for the host:
// Error -> its code, StatusError -> the original status, std::bad_alloc -> RESOURCE_EXHAUSTED,
// any other exception -> INTERNAL. Wrap the body of every function the host calls in it.
template <class Body> ferro_status guard(const ferro_host_api* host, Body&& body) noexcept {
    try {
        body();
        return nullptr;
    } catch (StatusError& e) {
        return e.release();
    } catch (const Error& e) {
        return host->status_make(e.code(), e.what());
    } catch (const std::bad_alloc&) {
        return host->status_make(FERRO_RESOURCE_EXHAUSTED, "out of memory");
    } catch (const std::exception& e) {
        return host->status_make(FERRO_INTERNAL, e.what());
    } catch (...) {
        return host->status_make(FERRO_INTERNAL, "unknown exception in plugin");
    }
}

// Writes `reason` into a host-provided decline buffer (truncated, always NUL-terminated).
inline void write_reason(char* buffer, uint32_t capacity, std::string_view reason) noexcept {
    if (buffer == nullptr || capacity == 0) return;
    const std::size_t n = std::min<std::size_t>(reason.size(), capacity - 1);
    std::memcpy(buffer, reason.data(), n);
    buffer[n] = '\0';
}

// Keeps the shared library that holds `address` (pass a function of your own plugin) loaded
// until the process exits, whatever the host unloads. For plugins linked with vendor libraries
// whose process-wide state has no safe teardown (FFTW's threads and planner hooks, the CUDA
// libraries' private C++ runtimes): each unload and reload of those leaks that state again. A
// later load of the plugin reuses the resident image, static state included. Returns false when
// the library could not be found.
inline bool stay_resident(const void* address) noexcept {
    Dl_info info{};
    if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return false;
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
}

// Logging through the host, which routes to spdlog or the application's callback.
inline void log(const ferro_host_api* host, uint32_t level, const char* source, const std::string& message) noexcept {
    if (host->log_enabled(host, level)) host->log(host, level, source, message.c_str());
}

// An owned reference to a host tensor.
class TensorRef {
public:
    TensorRef() = default;
    // Adopts a reference the caller already owns (e.g. an op_call output).
    TensorRef(const ferro_host_api* host, ferro_tensor adopted) : host_(host), t_(adopted) {}
    static TensorRef borrow(const ferro_host_api* host, ferro_tensor t) {
        if (t != nullptr) host->tensor_retain(t);
        return TensorRef(host, t);
    }
    TensorRef(TensorRef&& o) noexcept : host_(o.host_), t_(std::exchange(o.t_, nullptr)) {}
    TensorRef& operator=(TensorRef&& o) noexcept {
        if (this != &o) {
            reset();
            host_ = o.host_;
            t_ = std::exchange(o.t_, nullptr);
        }
        return *this;
    }
    TensorRef(const TensorRef&) = delete;
    TensorRef& operator=(const TensorRef&) = delete;
    ~TensorRef() { reset(); }

    ferro_tensor get() const noexcept { return t_; }
    explicit operator bool() const noexcept { return t_ != nullptr; }
    // Hands the reference to the caller (e.g. into a VJP's out array).
    ferro_tensor release() noexcept { return std::exchange(t_, nullptr); }
    void reset() noexcept {
        if (t_ != nullptr) host_->tensor_release(std::exchange(t_, nullptr));
    }

private:
    const ferro_host_api* host_ = nullptr;
    ferro_tensor t_ = nullptr;
};

}  // namespace ferro::plugin
