// Typed elementwise maps over strided operands; each kernel file instantiates them with its
// scalar functions.
#pragma once

#include "cpu_engine.hpp"
#include "dtype_dispatch.hpp"
#include "strided_loop.hpp"

namespace ferro::cpu {

inline int64_t itemsize(ferro_dtype dt) { return FERRO_DTYPE_BITS(dt) / 8; }

// out[i] = f(in[i]), in broadcast to out's shape by its strides.
template <class In, class Out, class F>
void map1(Engine& e, const ferro_tensor_view& in, const ferro_tensor_view& out, F f) {
    StridedLoop<2> loop(out.ndim, out.shape, {out.strides, in.strides},
                        {static_cast<char*>(out.data), static_cast<char*>(in.data)},
                        {sizeof(Out), sizeof(In)});
    run_loop(e, loop, [&](const std::array<char*, 2>& p, int64_t n, const std::array<int64_t, 2>& s) {
        auto* o = reinterpret_cast<Out*>(p[0]);
        const auto* a = reinterpret_cast<const In*>(p[1]);
        if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
            for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);  // contiguous: vectorisable
        } else {
            for (int64_t i = 0; i < n; ++i) {
                *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                    f(*reinterpret_cast<const In*>(p[1] + i * s[1]));
            }
        }
    });
}

// out[i] = f(a[i], b[i]).
template <class In, class Out, class F>
void map2(Engine& e, const ferro_tensor_view& a, const ferro_tensor_view& b,
          const ferro_tensor_view& out, F f) {
    StridedLoop<3> loop(out.ndim, out.shape, {out.strides, a.strides, b.strides},
                        {static_cast<char*>(out.data), static_cast<char*>(a.data),
                         static_cast<char*>(b.data)},
                        {sizeof(Out), sizeof(In), sizeof(In)});
    run_loop(e, loop, [&](const std::array<char*, 3>& p, int64_t n, const std::array<int64_t, 3>& s) {
        auto* o = reinterpret_cast<Out*>(p[0]);
        const auto* x = reinterpret_cast<const In*>(p[1]);
        const auto* y = reinterpret_cast<const In*>(p[2]);
        if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
            for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
        } else if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
            const In c = *y;  // tensor op scalar: the most common broadcast
            for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], c);
        } else {
            for (int64_t i = 0; i < n; ++i) {
                *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                    f(*reinterpret_cast<const In*>(p[1] + i * s[1]),
                      *reinterpret_cast<const In*>(p[2] + i * s[2]));
            }
        }
    });
}

}  // namespace ferro::cpu
