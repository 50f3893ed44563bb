// ferro's dtypes from C++: their names and the C++ type of each (header-only; host code, also
// under nvcc). The one place that lists them: engines, plugins and the host use these instead
// of switches of their own.
#pragma once

#include <ferro/types.h>

#include <complex>
#include <cstdint>
#include <string>

namespace ferro::plugin {

// The short name of a dtype ferro computes with, as core ops take it in a "dtype" attribute
// ("f32", "c128", "bool"); "invalid" for any other.
inline const char* dtype_attr_name(ferro_dtype dtype) {
    switch (dtype) {
        case FERRO_DTYPE_F32: return "f32";
        case FERRO_DTYPE_F64: return "f64";
        case FERRO_DTYPE_C64: return "c64";
        case FERRO_DTYPE_C128: return "c128";
        case FERRO_DTYPE_I64: return "i64";
        case FERRO_DTYPE_BOOL: return "bool";
        default: return "invalid";
    }
}

// The name of any DLPack dtype, for messages: "f32", "c128", "bool", and for dtypes ferro does
// not compute with "i32", "u8", "f16", "bf16", "f32x4" (lanes), else "dtype(code C, B bits)".
inline std::string dtype_name(ferro_dtype dtype) {
    if (dtype == FERRO_DTYPE_BOOL) return "bool";
    const uint32_t code = FERRO_DTYPE_CODE(dtype), bits = FERRO_DTYPE_BITS(dtype), lanes = FERRO_DTYPE_LANES(dtype);
    const char* prefix = code == FERRO_DLPACK_INT       ? "i"
                         : code == FERRO_DLPACK_UINT    ? "u"
                         : code == FERRO_DLPACK_FLOAT   ? "f"
                         : code == FERRO_DLPACK_COMPLEX ? "c"
                         : code == 4u                   ? "bf"
                                                        : nullptr;  // 4: kDLBfloat
    std::string name;
    if (prefix == nullptr || bits == 0 || lanes == 0) {
        name.append("dtype(code ").append(std::to_string(code)).append(", ").append(std::to_string(bits)).append(" bits");
        if (lanes != 1) name.append(", ").append(std::to_string(lanes)).append(" lanes");
        return name.append(")");
    }
    name.append(prefix).append(std::to_string(bits));
    if (lanes != 1) name.append("x").append(std::to_string(lanes));
    return name;
}

// FERRO_DTYPE_BOOL's element: one byte, 0 or 1.
using boolean = uint8_t;

// Which dtypes a visit offers.
enum class Dtypes { all, inexact };

// Calls f(T{}) with the C++ type of `dtype`, complex numbers as Complex<float> and
// Complex<double> (std::complex on the host; a device library's own type in device code);
// returns false, calling nothing, for a dtype outside `Which`.
template <template <class> class Complex = std::complex, Dtypes Which = Dtypes::all, class F>
bool visit_dtype(ferro_dtype dtype, F&& f) {
    switch (dtype) {
        case FERRO_DTYPE_F32: f(float{}); return true;
        case FERRO_DTYPE_F64: f(double{}); return true;
        case FERRO_DTYPE_C64: f(Complex<float>{}); return true;
        case FERRO_DTYPE_C128: f(Complex<double>{}); return true;
        default: break;
    }
    if constexpr (Which == Dtypes::all) {
        switch (dtype) {
            case FERRO_DTYPE_I64: f(int64_t{}); return true;
            case FERRO_DTYPE_BOOL: f(boolean{}); return true;
            default: break;
        }
    }
    return false;
}

}  // namespace ferro::plugin
