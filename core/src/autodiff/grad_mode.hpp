// Grad mode (DESIGN §8): whether op calls on this thread record grad nodes. Thread-local, on by
// default; NoGrad turns it off for a scope, GradMode sets it either way (backward uses it to
// record only when create_graph asks for it). The dispatcher reads it only after finding an
// input that requires grad, so calls without such inputs never touch the thread-local.
#pragma once

namespace ferro::host {

bool grad_enabled() noexcept;
void set_grad_enabled(bool enabled) noexcept;

// Sets grad mode for a scope and restores the previous mode on exit.
class GradMode {
public:
    explicit GradMode(bool enabled) noexcept : previous_(grad_enabled()) { set_grad_enabled(enabled); }
    ~GradMode() { set_grad_enabled(previous_); }
    GradMode(const GradMode&) = delete;
    GradMode& operator=(const GradMode&) = delete;

private:
    bool previous_;
};

class NoGrad : public GradMode {
public:
    NoGrad() noexcept : GradMode(false) {}
};

// Forward mode (tangents) is one level deep: while a JVP rule runs, the tangents of its
// inputs are not propagated again (that would be a second-order tangent nobody asked for).
bool tangents_enabled() noexcept;
class NoTangents {
public:
    NoTangents() noexcept;
    ~NoTangents();
    NoTangents(const NoTangents&) = delete;
    NoTangents& operator=(const NoTangents&) = delete;

private:
    bool previous_;
};

// The C API's ferro_no_grad_push/pop: a per-thread stack of saved modes.
void push_no_grad();
void pop_no_grad() noexcept;  // an unmatched pop does nothing

}  // namespace ferro::host
