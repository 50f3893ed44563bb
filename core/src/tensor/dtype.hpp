// Dtype facts and numpy's promotion rules (docs/semantics.md):
//   bool < i64 < floating < complex; i64 with f32 gives f64; any complex with anything of
//   double precision gives c128. Functions that compute (exp, true division) lift bool and
//   i64 to f64.
#pragma once

#include <ferro/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ferro::host {

int64_t itemsize(ferro_dtype dtype);
bool is_valid_dtype(ferro_dtype dtype);  // one of the six ferro supports
bool is_floating(ferro_dtype dtype);     // f32, f64
bool is_complex(ferro_dtype dtype);      // c64, c128
bool is_inexact(ferro_dtype dtype);      // floating or complex: differentiable
// "f32", "c128", ...; the DLPack name ("i32", "f16", "bf16") of dtypes ferro does not compute with.
std::string dtype_name(ferro_dtype dtype);
// Accepts ferro names (f32, c64, i64, bool) and numpy names (float32, complex64, int64).
// Returns FERRO_DTYPE_INVALID for anything else.
ferro_dtype parse_dtype(std::string_view name);

ferro_dtype promote(ferro_dtype a, ferro_dtype b);
// The dtype a floating-point function computes in: i64/bool -> f64, others unchanged.
ferro_dtype to_inexact(ferro_dtype dtype);
// c64 -> f32, c128 -> f64, others unchanged.
ferro_dtype real_dtype(ferro_dtype dtype);
// f32 -> c64, f64 -> c128, complex unchanged.
ferro_dtype complex_dtype(ferro_dtype dtype);

}  // namespace ferro::host
