#include "autodiff/grad_mode.hpp"

#include <vector>

namespace ferro::host {
namespace {
thread_local bool enabled = true;
thread_local bool tangents = true;
thread_local std::vector<bool> pushed;  // modes saved by push_no_grad
}  // namespace

bool grad_enabled() noexcept { return enabled; }
void set_grad_enabled(bool on) noexcept { enabled = on; }

bool tangents_enabled() noexcept { return tangents; }
NoTangents::NoTangents() noexcept : previous_(tangents) { tangents = false; }
NoTangents::~NoTangents() { tangents = previous_; }

void push_no_grad() {
    pushed.push_back(enabled);
    enabled = false;
}

void pop_no_grad() noexcept {
    if (pushed.empty()) return;
    enabled = pushed.back();
    pushed.pop_back();
}

}  // namespace ferro::host
