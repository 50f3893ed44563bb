// The cases of an ops matrix or a check (one op, dtype and engine each), run in a child in a
// fixed order. Each is announced before it runs and reported when it has run, on the child's
// stdout as JSON lines: a parent whose child died knows which case killed it, keeps what came
// before, and starts a new child at the case after it (`--from`).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>

namespace ferro::inspect {

// One line straight to stdout (probe.cpp): a crash next must not take buffered lines with it.
void emit(const nlohmann::json& line);

class CaseStream {
public:
    explicit CaseStream(size_t from) : from_(from) {}

    // Runs `fn` (which returns the case's result) unless the case comes before `from`:
    // {"event": "case", "index": i, "case": key} first, {"event": "done", "index": i, "result": ...} after.
    template <class Fn> void run(const nlohmann::json& key, Fn&& fn) {
        const size_t index = next_++;
        if (index < from_) return;
        emit({{"event", "case"}, {"index", index}, {"case", key}});
        emit({{"event", "done"}, {"index", index}, {"result", fn()}});
    }

private:
    size_t from_;
    size_t next_ = 0;
};

}  // namespace ferro::inspect
