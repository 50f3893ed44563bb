#include "tensor/dtype.hpp"

#include <ferro/rules.hpp>

#include <fmt/format.h>

namespace ferro::host {

int64_t itemsize(ferro_dtype dtype) { return FERRO_DTYPE_BITS(dtype) / 8; }

bool is_valid_dtype(ferro_dtype d) {
    return d == FERRO_DTYPE_F32 || d == FERRO_DTYPE_F64 || d == FERRO_DTYPE_C64 || d == FERRO_DTYPE_C128 ||
           d == FERRO_DTYPE_I64 || d == FERRO_DTYPE_BOOL;
}
bool is_floating(ferro_dtype d) { return d == FERRO_DTYPE_F32 || d == FERRO_DTYPE_F64; }
bool is_complex(ferro_dtype d) { return d == FERRO_DTYPE_C64 || d == FERRO_DTYPE_C128; }
bool is_inexact(ferro_dtype d) { return is_floating(d) || is_complex(d); }

std::string dtype_name(ferro_dtype d) { return plugin::dtype_name(d); }

ferro_dtype parse_dtype(std::string_view n) {
    if (n == "f32" || n == "float32") return FERRO_DTYPE_F32;
    if (n == "f64" || n == "float64") return FERRO_DTYPE_F64;
    if (n == "c64" || n == "complex64") return FERRO_DTYPE_C64;
    if (n == "c128" || n == "complex128") return FERRO_DTYPE_C128;
    if (n == "i64" || n == "int64") return FERRO_DTYPE_I64;
    if (n == "bool") return FERRO_DTYPE_BOOL;
    return FERRO_DTYPE_INVALID;
}

namespace {
// Rank within the lattice bool < i64 < f32 < f64 (complex handled separately).
int real_rank(ferro_dtype d) {
    switch (d) {
        case FERRO_DTYPE_BOOL: return 0;
        case FERRO_DTYPE_I64: return 1;
        case FERRO_DTYPE_F32: return 2;
        default: return 3;  // f64
    }
}
}  // namespace

ferro_dtype promote(ferro_dtype a, ferro_dtype b) {
    if (a == b) return a;
    if (is_complex(a) || is_complex(b)) {
        // Double precision anywhere (c128, f64, or i64, which needs a double) gives c128.
        const bool wide = a == FERRO_DTYPE_C128 || b == FERRO_DTYPE_C128 || a == FERRO_DTYPE_F64 || b == FERRO_DTYPE_F64 ||
                          a == FERRO_DTYPE_I64 || b == FERRO_DTYPE_I64;
        return wide ? FERRO_DTYPE_C128 : FERRO_DTYPE_C64;
    }
    // i64 with f32: numpy gives f64, since f32 cannot hold every i64 even approximately well.
    if ((a == FERRO_DTYPE_I64 && b == FERRO_DTYPE_F32) || (a == FERRO_DTYPE_F32 && b == FERRO_DTYPE_I64)) {
        return FERRO_DTYPE_F64;
    }
    return real_rank(a) >= real_rank(b) ? a : b;
}

ferro_dtype to_inexact(ferro_dtype d) { return is_inexact(d) ? d : FERRO_DTYPE_F64; }

ferro_dtype real_dtype(ferro_dtype d) { return plugin::real_dtype(d); }
ferro_dtype complex_dtype(ferro_dtype d) { return plugin::complex_dtype(d); }

}  // namespace ferro::host
