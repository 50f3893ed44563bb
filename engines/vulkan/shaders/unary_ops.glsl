// The unary ops of one variant (unary.comp's defines: the slots' types, TO_BOOL, TO_REAL) with
// the cpu engine's semantics: unary_apply(op, x), op a ferro_unary_op. unary.comp passes its
// specialization constant, fused.comp each instruction's op.
#define PI_F 3.14159265358979323846

#if defined(TO_BOOL)
bool is_nan_value(A_T x) {
#if A_KIND == KIND_COMPLEX
    return isnan(x.x) || isnan(x.y);
#elif A_KIND == KIND_REAL
    return isnan(x);
#else
    return false;
#endif
}
bool is_inf_value(A_T x) {
#if A_KIND == KIND_COMPLEX
    return isinf(x.x) || isinf(x.y);
#elif A_KIND == KIND_REAL
    return isinf(x);
#else
    return false;
#endif
}
bool is_zero(A_T x) {
#if A_KIND == KIND_COMPLEX
    return x.x == 0 && x.y == 0;
#elif A_KIND == KIND_BOOL
    return !x;
#else
    return x == A_T(0);
#endif
}
O_T unary_apply(uint op, A_T x) {
    switch (op) {
        case 29: return is_zero(x);
        case 30: return is_nan_value(x);
        case 31: return is_inf_value(x);
        default: return !is_nan_value(x) && !is_inf_value(x);
    }
}

#elif defined(TO_REAL)
O_T unary_apply(uint op, A_T x) {
    switch (op) {
        case 2: return length(x);
        case 12: return x.x;
        case 13: return x.y;
        case 28: return r_atan2(x.y, x.x);
        default: return x.x;
    }
}

#elif A_KIND == KIND_INT
O_T unary_apply(uint op, A_T x) {
    switch (op) {
        case 0: return -x;
        case 2: return x < 0 ? -x : x;
        case 11: return x > 0 ? 1 : x < 0 ? -1 : 0;
        case 15: return x * x;
        default: return x;  // conj
    }
}

#elif A_KIND == KIND_COMPLEX
A_T complex_sqrt(A_T z) {
    const A_R r = length(z);
    if (r == 0) return A_T(0);
    const A_R t = sqrt((r + abs(z.x)) / 2);
    if (z.x >= 0) return A_T(t, z.y / (2 * t));
    return A_T(abs(z.y) / (2 * t), z.y < 0 ? -t : t);
}
// Each calls the (double: long) sin/cos reduction once.
A_T complex_sin(A_T z) {
    A_R s, c;
    r_sincos(z.x, s, c);
    return A_T(s * r_cosh(z.y), c * r_sinh(z.y));
}
A_T complex_cos(A_T z) {
    A_R s, c;
    r_sincos(z.x, s, c);
    return A_T(c * r_cosh(z.y), -s * r_sinh(z.y));
}
A_T complex_sinh(A_T z) {
    A_R s, c;
    r_sincos(z.y, s, c);
    return A_T(r_sinh(z.x) * c, r_cosh(z.x) * s);
}
A_T complex_cosh(A_T z) {
    A_R s, c;
    r_sincos(z.y, s, c);
    return A_T(r_cosh(z.x) * c, r_sinh(z.x) * s);
}
// tan z = (sin 2x + i sinh 2y) / (cos 2x + cosh 2y); beyond |y| = 20 it is i sign(y) to
// working precision, with real part 2 sin 2x e^(-2|y|) (cosh 2y would overflow first).
A_T complex_tan(A_T z) {
    A_R s, c;
    r_sincos(2 * z.x, s, c);
    const A_R ay = abs(z.y);
    if (ay > 20) return A_T(2 * s * r_exp(-2 * ay), z.y > 0 ? 1 : -1);
    const A_R d = c + r_cosh(2 * z.y);
    return A_T(s / d, r_sinh(2 * z.y) / d);
}
A_T complex_tanh(A_T z) {  // -i tan(i z)
    const A_T t = complex_tan(A_T(-z.y, z.x));
    return A_T(t.y, -t.x);
}
A_T complex_asin(A_T z) {  // -i log(iz + sqrt(1 - z^2))
    const A_T w = complex_log(A_T(-z.y, z.x) + complex_sqrt(A_T(1, 0) - complex_mul(z, z)));
    return A_T(w.y, -w.x);
}
A_T complex_atan(A_T z) {  // (i/2) log((i + z) / (i - z))
    const A_T w = complex_log(complex_div(A_T(z.x, 1 + z.y), A_T(-z.x, 1 - z.y)));
    return A_T(-w.y / 2, w.x / 2);
}
O_T unary_apply(uint op, A_T x) {
    switch (op) {
        case 0: return -x;
        case 1: return A_T(x.x, -x.y);
        case 9: return complex_sqrt(x);
        case 10: return complex_div(A_T(1, 0), complex_sqrt(x));
        case 11: {
            const A_R r = length(x);
            return r == 0 ? A_T(0) : x / r;
        }
        case 14: return complex_div(A_T(1, 0), x);
        case 15: return complex_mul(x, x);
        case 3: return complex_exp(x);
        case 4: return complex_log(x);
        case 5: return complex_sin(x);
        case 6: return complex_cos(x);
        case 7: return complex_tan(x);
        case 8: return complex_tanh(x);
        case 16: return complex_exp(x) - A_T(1, 0);
        case 17: return complex_log(A_T(1, 0) + x);
        case 18: return complex_sinh(x);
        case 19: return complex_cosh(x);
        case 20: return complex_asin(x);
#ifdef HAS_FLOAT64
        case 21: return A_T(PIO2_HI, 0) - complex_asin(x) + A_T(PIO2_LO, 0);
#else
        case 21: return A_T(PI_F / 2, 0) - complex_asin(x);
#endif
        case 22: return complex_atan(x);
        case 23: return complex_div(A_T(1, 0), A_T(1, 0) + complex_exp(-x));
        default: return x;
    }
}

#else  // real floating point
bool sign_bit(A_T x) {
#ifdef HAS_FLOAT64
    return (unpackDouble2x32(x).y >> 31) != 0u;
#else
    return (floatBitsToUint(x) >> 31) != 0u;
#endif
}
#ifndef HAS_FLOAT64
// exp(x) - 1 and log(1 + x) without the cancellation near 0 (Kahan's corrections).
float accurate_expm1(float x) {
    const float u = exp(x);
    if (u == 1.0) return x;
    precise float um1 = u - 1.0;
    if (um1 == -1.0) return -1.0;
    if (isinf(u)) return u;
    return um1 * x / log(u);
}
float accurate_log1p(float x) {
    precise float u = 1.0 + x;  // precise: (u - 1) must not fold back into x
    if (u == 1.0) return x;
    if (isinf(u)) return u;
    return log(u) * x / (u - 1.0);
}
float accurate_tanh(float x) {
    const float e = accurate_expm1(-2.0 * abs(x));
    const float t = -e / (2.0 + e);
    return isnan(x) ? x : (x < 0.0 ? -t : t);
}
float accurate_sinh(float x) {
    const float e = accurate_expm1(abs(x));
    const float s = abs(x) > 44.0 ? 0.5 * exp(abs(x)) : 0.5 * (e + e / (e + 1.0));
    return x < 0.0 ? -s : s;
}
// erf: its Maclaurin series below 2 (at most two bits lost to cancellation there), above it
// 1 - erfc with erfc from Laplace's continued fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x +
// 1/(x + (3/2)/(x + ...)))), evaluated from the tail; 1 from 4 on (erfc(4) < 2e-8).
float accurate_erf(float x) {
    const float a = abs(x);
    if (a >= 4.0) return x < 0.0 ? -1.0 : 1.0;
    float r;
    if (a < 2.0) {
        const float z = x * x;
        float term = x, sum = x;
        for (int n = 1; n < 32; ++n) {
            term *= -z / float(n);
            sum += term / float(2 * n + 1);
        }
        return 1.1283791671 * sum;  // 2 / sqrt(pi)
    }
    float f = a;
    for (int n = 40; n >= 1; --n) f = a + 0.5 * float(n) / f;
    r = exp(-a * a) / (1.7724538509 * f);  // sqrt(pi)
    return x < 0.0 ? r - 1.0 : 1.0 - r;
}
#else
double accurate_tanh(double x) {
    const double e = d_expm1(-2.0lf * abs(x));
    const double t = -e / (2.0lf + e);
    return isnan(x) ? x : (x < 0.0lf ? -t : t);
}
#endif
O_T unary_apply(uint op, A_T x) {
    switch (op) {
        case 0: return -x;
        case 2: return abs(x);
        case 9: return sqrt(x);
        case 10: return 1.0 / sqrt(x);
        case 11: return x > 0 ? A_T(1) : x < 0 ? A_T(-1) : x;
        case 14: return 1.0 / x;
        case 15: return x * x;
        case 25: return floor(x);
        case 26: return ceil(x);
        case 27: return roundEven(x);
        case 28: return isnan(x) ? x : sign_bit(x) ? A_T(PI_F) : A_T(0);
#ifndef HAS_FLOAT64
        case 3: return exp(x);
        case 4: return log(x);
        case 5: return sin(x);
        case 6: return cos(x);
        case 7: return tan(x);
        case 8: return accurate_tanh(x);
        case 16: return accurate_expm1(x);
        case 17: return accurate_log1p(x);
        case 18: return accurate_sinh(x);
        case 19: return cosh(x);
        case 20: return atan(x, sqrt((1.0 - x) * (1.0 + x)));  // lavapipe's asin and acos are off by 2e-4
        case 21: return atan(sqrt((1.0 - x) * (1.0 + x)), x);
        case 22: return atan(x);
        case 23: return 1.0 / (1.0 + exp(-x));
        case 24: return accurate_erf(x);
#else
        case 3: return d_exp(x);
        case 4: return d_log(x);
        case 8: return accurate_tanh(x);
        case 16: return d_expm1(x);
        case 17: return d_log1p(x);
        case 5: return d_sin(x);
        case 6: return d_cos(x);
        case 7: return d_tan(x);
        case 18: return d_sinh(x);
        case 19: return d_cosh(x);
        case 20: return d_atan2(x, sqrt((1.0lf - x) * (1.0lf + x)));
        case 21: return d_atan2(sqrt((1.0lf - x) * (1.0lf + x)), x);
        case 22: return d_atan(x);
        case 23: return 1.0lf / (1.0lf + d_exp(-x));
        case 24: return d_erf(x);
#endif
        default: return x;  // conj, real
    }
}
#endif
