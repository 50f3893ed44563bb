// Timing for benchmarks: medians of repeated samples, each the mean over `inner` calls, with
// warm-up first. Absolute times on shared 2-core machines are noise; ratios against a peer
// measured in the same run are what we report (DESIGN §12).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

template <class F> double sample_seconds(F&& f, int inner) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count() / inner;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Medians of `a` and `b`, sampled alternately so machine-load drift hits both alike.
template <class A, class B> std::pair<double, double> paired_medians(A&& a, B&& b, int samples, int inner) {
    for (int w = 0; w < 2; ++w) {  // warm-up: caches, plan cache, page faults
        sample_seconds(a, inner);
        sample_seconds(b, inner);
    }
    std::vector<double> sa, sb;
    for (int s = 0; s < samples; ++s) {
        sa.push_back(sample_seconds(a, inner));
        sb.push_back(sample_seconds(b, inner));
    }
    return {median(sa), median(sb)};
}

// paired_medians for any number of callables, sampled in turn.
template <class... F> std::array<double, sizeof...(F)> interleaved_medians(int samples, int inner, F&&... f) {
    for (int w = 0; w < 2; ++w) (sample_seconds(f, inner), ...);
    std::array<std::vector<double>, sizeof...(F)> s;
    for (int k = 0; k < samples; ++k) {
        size_t i = 0;
        ((s[i++].push_back(sample_seconds(f, inner))), ...);
    }
    std::array<double, sizeof...(F)> medians;
    for (size_t i = 0; i < s.size(); ++i) medians[i] = median(s[i]);
    return medians;
}

template <class F> double median_seconds(F&& f, int samples, int inner) {
    for (int w = 0; w < 2; ++w) sample_seconds(f, inner);
    std::vector<double> s;
    for (int i = 0; i < samples; ++i) s.push_back(sample_seconds(f, inner));
    return median(s);
}

// The median over `samples` of f's time, each sample enough calls to last ~target_seconds. A
// first call warms up (plans, page faults) and a second sizes the samples: sized by the first,
// a 0.16 ms einsum whose first call planned took samples of a few calls, 8 ms in all, where one
// busy moment of this shared machine moved the median by 2x. For cases from microseconds to
// seconds.
template <class F> double median_call_seconds(F&& f, int samples, double target_seconds = 0.02) {
    (void)sample_seconds(f, 1);
    const double once = sample_seconds(f, 1);
    return median_seconds(f, samples, std::max(1, static_cast<int>(target_seconds / std::max(once, 1e-7))));
}

}  // namespace bench
