// Scalar helpers with the cpu engine's semantics: complex arithmetic, numpy's integer floor
// division and power, and real power for negative bases. Single-precision transcendental
// functions are GLSL's built-ins (the device's precision: exact on lavapipe, looser on some
// GPUs); double precision has no transcendental built-ins in GLSL, and the engine declines
// those ops for f64 and c128.

vec2 complex_mul(vec2 x, vec2 y) { return vec2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
#ifdef HAS_FLOAT64
dvec2 complex_mul(dvec2 x, dvec2 y) { return dvec2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
#endif

// Smith's algorithm: no overflow in |y|^2 for large divisors.
vec2 complex_div(vec2 x, vec2 y) {
    if (abs(y.x) >= abs(y.y)) {
        const float r = y.y / y.x, d = y.x + y.y * r;
        return vec2((x.x + x.y * r) / d, (x.y - x.x * r) / d);
    }
    const float r = y.x / y.y, d = y.x * r + y.y;
    return vec2((x.x * r + x.y) / d, (x.y * r - x.x) / d);
}
#ifdef HAS_FLOAT64
dvec2 complex_div(dvec2 x, dvec2 y) {
    if (abs(y.x) >= abs(y.y)) {
        const double r = y.y / y.x, d = y.x + y.y * r;
        return dvec2((x.x + x.y * r) / d, (x.y - x.x * r) / d);
    }
    const double r = y.x / y.y, d = y.x * r + y.y;
    return dvec2((x.x * r + x.y) / d, (x.y * r - x.x) / d);
}
#endif

vec2 complex_exp(vec2 z) { return exp(z.x) * vec2(cos(z.y), sin(z.y)); }
vec2 complex_log(vec2 z) { return vec2(log(length(z)), atan(z.y, z.x)); }
vec2 complex_pow(vec2 x, vec2 y) {
    if (y == vec2(0)) return vec2(1, 0);
    if (x == vec2(0)) return vec2(0);
    return complex_exp(complex_mul(y, complex_log(x)));
}

// pow for a negative base with an integer exponent, and the special cases GLSL leaves undefined.
float real_pow(float x, float y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (isnan(x) || isnan(y)) return x + y;
    if (x == 0.0) return y > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
    if (x > 0.0) return pow(x, y);
    if (y != floor(y)) return uintBitsToFloat(0x7fc00000u);
    const float r = pow(-x, y);
    return mod(y, 2.0) == 1.0 ? -r : r;
}

int64_t int_floor_div(int64_t x, int64_t y) {
    if (y == 0) return 0;
    if (y == -1) return int64_t(uint64_t(0) - uint64_t(x));
    int64_t q = x / y;  // truncates; GLSL's % is undefined for negative operands
    if (x - q * y != 0 && ((x < 0) != (y < 0))) --q;
    return q;
}

int64_t int_pow(int64_t base, int64_t exponent) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) != 0 ? -1 : 1) : 0;
    uint64_t result = 1, b = uint64_t(base);
    for (uint64_t n = uint64_t(exponent); n != 0; n >>= 1) {
        if ((n & 1) != 0) result *= b;
        b *= b;
    }
    return int64_t(result);
}
