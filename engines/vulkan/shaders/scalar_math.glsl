// Scalar helpers with the cpu engine's semantics: complex arithmetic, numpy's integer floor
// division and power, and real power for negative bases. Single-precision transcendental
// functions are GLSL's built-ins (the device's precision: exact on lavapipe, looser on some
// GPUs); GLSL has none in double precision, so the engine has its own (below and
// double_math.glsl). Complex functions are written once and stamped out for vec2 and dvec2.

// Products, and quotients by Smith's algorithm (no overflow in |y|^2 for large divisors).
#define FERRO_COMPLEX_ARITHMETIC(CT, RT)                                                      \
    CT complex_mul(CT x, CT y) { return CT(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }   \
    CT complex_div(CT x, CT y) {                                                              \
        if (abs(y.x) >= abs(y.y)) {                                                           \
            const RT r = y.y / y.x, d = y.x + y.y * r;                                        \
            return CT((x.x + x.y * r) / d, (x.y - x.x * r) / d);                              \
        }                                                                                     \
        const RT r = y.x / y.y, d = y.x * r + y.y;                                            \
        return CT((x.x * r + x.y) / d, (x.y * r - x.x) / d);                                  \
    }
FERRO_COMPLEX_ARITHMETIC(vec2, float)
#ifdef HAS_FLOAT64
FERRO_COMPLEX_ARITHMETIC(dvec2, double)
#endif

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

#ifdef HAS_FLOAT64
// Double-precision exp and log, which GLSL lacks (its exp, log, ... take floats only), and
// what is built on them. exp: x = n ln2 + r with ln2 in two parts (Cody and Waite), |r| <=
// ln2 / 2, e^r by its Taylor series to r^16 (the next term is below 2^-60 of the sum), then
// scaled by 2^n in two steps so that subnormal results survive. log: x = 2^e m with m in
// [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) for s = (m - 1) / (m + 1), |s| < 0.172, by its odd
// series to s^25. Both are within a few units in the last place. (Double literals need GLSL's
// lf suffix: without it they are floats.)
const double LN2_HI = 6.93147180369123816490e-01lf;  // ln 2 to 32 bits: n * LN2_HI is exact
const double LN2_LO = 1.90821492927058770002e-10lf;

double d_infinity() { return packDouble2x32(uvec2(0u, 0x7ff00000u)); }
double d_nan() { return packDouble2x32(uvec2(0u, 0x7ff80000u)); }

double d_exp(double x) {
    if (isnan(x)) return x;
    if (x > 709.782712893384lf) return d_infinity();
    if (x < -745.1332191019412lf) return 0.0lf;
    const double n = roundEven(x * 1.44269504088896340736lf);  // x / ln 2
    // precise: the compiler may not fold LN2_HI + LN2_LO nor reassociate (glslc -O did).
    precise double r = (x - n * LN2_HI) - n * LN2_LO;
    double p = 1.0lf;
    for (int k = 16; k >= 1; --k) p = 1.0lf + p * r / double(k);
    const int e = int(n);
    return ldexp(ldexp(p, e / 2), e - e / 2);
}

double d_log(double x) {
    if (isnan(x) || x < 0.0lf) return isnan(x) ? x : d_nan();
    if (x == 0.0lf) return -d_infinity();
    if (isinf(x)) return x;
    int e;
    double m = frexp(x, e);  // m in [0.5, 1)
    if (m < 0.70710678118654752440lf) {
        m *= 2.0lf;
        e -= 1;
    }
    const double s = (m - 1.0lf) / (m + 1.0lf), z = s * s;
    double series = 1.0lf / 25.0lf;
    for (int k = 11; k >= 0; --k) series = 1.0lf / double(2 * k + 1) + z * series;
    precise double result = double(e) * LN2_HI + (2.0lf * s * series + double(e) * LN2_LO);
    return result;
}

// exp(x) - 1: the series itself near 0, where exp(x) - 1 would cancel.
double d_expm1(double x) {
    if (abs(x) >= 0.3lf) return d_exp(x) - 1.0lf;
    double p = 1.0lf;
    for (int k = 18; k >= 2; --k) p = 1.0lf + p * x / double(k);
    return x * p;
}

// log(1 + x), Kahan's correction for the rounding of 1 + x.
double d_log1p(double x) {
    precise double u = 1.0lf + x;
    if (u == 1.0lf) return x;
    if (isinf(u) || u <= 0.0lf) return d_log(u);
    return d_log(u) * x / (u - 1.0lf);
}

#include "double_math.glsl"
#endif

// The real functions by precision, so that complex ones can be written once for both.
float r_exp(float x) { return exp(x); }
float r_log(float x) { return log(x); }
void r_sincos(float x, out float s, out float c) {
    s = sin(x);
    c = cos(x);
}
float r_atan2(float y, float x) { return atan(y, x); }
float r_sinh(float x) { return sinh(x); }
float r_cosh(float x) { return cosh(x); }
#ifdef HAS_FLOAT64
double r_exp(double x) { return d_exp(x); }
double r_log(double x) { return d_log(x); }
void r_sincos(double x, out double s, out double c) { d_sincos(x, s, c); }
double r_atan2(double y, double x) { return d_atan2(y, x); }
double r_sinh(double x) { return d_sinh(x); }
double r_cosh(double x) { return d_cosh(x); }
#endif

#define FERRO_COMPLEX_EXP_LOG(CT)                                                             \
    CT complex_exp(CT z) {                                                                    \
        CT cis;                                                                               \
        r_sincos(z.y, cis.y, cis.x);                                                          \
        return r_exp(z.x) * cis;                                                              \
    }                                                                                         \
    CT complex_log(CT z) { return CT(r_log(length(z)), r_atan2(z.y, z.x)); }                  \
    CT complex_pow(CT x, CT y) {                                                              \
        if (y == CT(0)) return CT(1, 0);                                                      \
        if (x == CT(0)) return CT(0);                                                         \
        return complex_exp(complex_mul(y, complex_log(x)));                                   \
    }
FERRO_COMPLEX_EXP_LOG(vec2)
#ifdef HAS_FLOAT64
FERRO_COMPLEX_EXP_LOG(dvec2)
#endif
