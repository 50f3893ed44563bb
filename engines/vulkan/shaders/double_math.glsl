// Double-precision sin, cos, tan, atan, atan2, erf and pow, which GLSL lacks (its built-ins
// take floats only), on top of d_exp and d_log (scalar_math.glsl). Each is within a few units
// in the last place of glibc's over its whole domain (tests/vulkan). Included by
// scalar_math.glsl when the shader has doubles; needs the lf suffix on every double literal.

// Error-free transformations (two-sum, Dekker's product) work only on `precise` variables: the
// compiler may simplify anything else algebraically (l = e - (h - s) with h = s + e became 0,
// which cost pow 100 ulp).

// The rounding error of p = a b (a b - p exactly), by Dekker's splitting: GLSL does not promise
// that fma rounds once. |a|, |b| < 2^995.
double two_prod_err(double a, double b, double p) {
    precise double ca = 134217729.0lf * a;  // 2^27 + 1
    precise double ah = ca - (ca - a);
    precise double al = a - ah;
    precise double cb = 134217729.0lf * b;
    precise double bh = cb - (cb - b);
    precise double bl = b - bh;
    precise double err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return err;
}

// ---- hyperbolic --------------------------------------------------------------------------------

// e^a / 2 for large a, as (e^(a/2) / 2) e^(a/2): no early overflow, and no rounding of a - ln 2
// (which would cost hundreds of ulp at a ~ 500).
double half_exp(double a) {
    const double t = d_exp(0.5lf * a);
    return (0.5lf * t) * t;
}
double d_sinh(double x) {
    const double e = d_expm1(abs(x));
    const double s = abs(x) > 354.0lf ? half_exp(abs(x)) : 0.5lf * (e + e / (e + 1.0lf));
    return x < 0.0lf ? -s : s;
}
double d_cosh(double x) {
    const double a = abs(x);
    if (a > 354.0lf) return half_exp(a);
    const double e = d_exp(a);
    return 0.5lf * (e + 1.0lf / e);
}

// ---- argument reduction: x = k pi/2 + r, |r| <= pi/4, r as a double-double rh + rl ----------

// pi/2 in parts: three of 33 bits (so k Ci is exact for k < 2^20) and the rest.
const double PIO2_C1 = 1.5707963267341256lf;
const double PIO2_C2 = 6.077100506303966e-11lf;
const double PIO2_C3 = 2.0222662487111665e-21lf;
const double PIO2_C4 = 8.4784276603689e-32lf;
const double PIO2_HI = 1.5707963267948966lf, PIO2_LO = 6.123233995736766e-17lf;
const double PI_HI = 3.141592653589793lf, PI_LO = 1.2246467991473532e-16lf;

// The bits of 2/pi after the binary point, 32 at a time (Payne and Hanek's reduction).
const uint TWO_OVER_PI_BITS[40] = uint[40](
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u,
    0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u,
    0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu,
    0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu,
    0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du);

// Word w of 2/pi's bits (0 before the binary point).
uint two_over_pi_word(int w) { return w >= 0 ? TWO_OVER_PI_BITS[w] : 0u; }

// For a >= 2^20 pi/2 (finite): a = M 2^e with M a 53-bit integer, and a (2/pi) mod 4 needs only
// the bits of 2/pi from e - 1 on (earlier ones give multiples of 4). 192 of them, F, times M is
// exact in 256 bits, with the binary point of M F 2^(e - (e - 1) - 191) at bit 190: two bits of
// quadrant above it, the fraction of a quarter turn below.
int reduce_large(double a, out double rh, out double rl) {
    const uvec2 w = unpackDouble2x32(a);
    const int e = int((w.y >> 20) & 0x7ffu) - 1075;
    const uint m[2] = uint[2](w.x, (w.y & 0xfffffu) | 0x100000u);
    // F = bits e - 1 .. e + 190 of 2/pi (bit 1 the first after the point): seven words, shifted.
    const int w0 = (e - 2) >> 5, shift = (e - 2) & 31;  // floor division, also below 0
    uint words[7];
    for (int j = 0; j < 7; ++j) words[j] = two_over_pi_word(w0 + j);
    uint g[6];  // F, g[0] least significant
    for (int j = 0; j < 6; ++j) {
        g[5 - j] = shift == 0 ? words[j] : (words[j] << uint(shift)) | (words[j + 1] >> uint(32 - shift));
    }
    uint64_t column[9] = uint64_t[9](0ul, 0ul, 0ul, 0ul, 0ul, 0ul, 0ul, 0ul, 0ul);
    for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 6; ++k) {
            const uint64_t product = uint64_t(m[i]) * uint64_t(g[k]);
            column[i + k] += product & 0xfffffffful;
            column[i + k + 1] += product >> 32;
        }
    }
    uint p[8];
    for (int c = 0; c < 8; ++c) {
        column[c + 1] += column[c] >> 32;
        p[c] = uint(column[c]);
    }
    // Bits 62..189 of M F: the fraction's top 64 (hi) and next 64 (lo); bits 190, 191: quadrant.
    int q = int(p[5] >> 30);
    uint64_t hi = (uint64_t(p[5] << 2 | p[4] >> 30) << 32) | uint64_t(p[4] << 2 | p[3] >> 30);
    uint64_t lo = (uint64_t(p[3] << 2 | p[2] >> 30) << 32) | uint64_t(p[2] << 2 | p[1] >> 30);
    const bool negative = (hi >> 63) != 0ul;  // fraction >= 1/2: reduce towards the next quarter
    if (negative) {
        lo = ~lo + 1ul;
        hi = ~hi + (lo == 0ul ? 1ul : 0ul);
        q = (q + 1) & 3;
    }
    // The fraction f = hi 2^-64 + lo 2^-128 as a double-double, then r = f pi/2.
    precise double fh = double(hi >> 11) * 1.1102230246251565e-16lf;                  // 2^-53
    precise double fl = double(hi & 0x7fful) * 5.421010862427522e-20lf +               // 2^-64
                        double(lo >> 11) * 6.018531076210112e-36lf;                    // 2^-117
    precise double s = fh + fl;
    precise double t = fl - (s - fh);
    fh = s;
    fl = t;
    precise double r = fh * PIO2_HI;
    precise double r_err = two_prod_err(fh, PIO2_HI, r) + (fh * PIO2_LO + fl * PIO2_HI);
    precise double h = r + r_err;
    precise double l = r_err - (h - r);
    rh = negative ? -h : h;
    rl = negative ? -l : l;
    return q;
}

// a >= 0, finite: the quadrant k mod 4 and r.
int reduce_pio2(double a, out double rh, out double rl) {
    if (a <= 0.7853981633974483lf) {
        rh = a;
        rl = 0.0lf;
        return 0;
    }
    if (a >= 1647099.3291652855lf) return reduce_large(a, rh, rl);  // 2^20 pi/2
    const double k = roundEven(a * 0.6366197723675814lf);
    precise double t = a - k * PIO2_C1;  // exact: k C1 is, and it is within a factor 2 of a
    precise double w = k * PIO2_C2;      // exact
    precise double r = t - w;
    precise double bb = r - t;
    precise double err = (t - (r - bb)) - (w + bb);
    precise double tail = err - k * PIO2_C3 - k * PIO2_C4;
    precise double h = r + tail;
    precise double l = tail - (h - r);
    rh = h;
    rl = l;
    return int(k) & 3;
}

// Taylor series on |r| <= pi/4 (the next term is below 2^-100), with the tail rl to first order.
double sin_kernel(double rh, double rl) {
    const double z = rh * rh;
    double p = 1.0lf;
    for (int n = 13; n >= 1; --n) p = 1.0lf - p * z / double((2 * n) * (2 * n + 1));
    return rh * p + rl * (1.0lf - 0.5lf * z);
}
double cos_kernel(double rh, double rl) {
    const double z = rh * rh;
    double p = 1.0lf;
    for (int n = 13; n >= 1; --n) p = 1.0lf - p * z / double((2 * n - 1) * (2 * n));
    return p - rl * rh;
}

// sin and cos from one reduction.
void d_sincos(double x, out double sin_x, out double cos_x) {
    if (isnan(x) || isinf(x)) {
        sin_x = d_nan();
        cos_x = sin_x;
        return;
    }
    double rh, rl;
    const int q = reduce_pio2(abs(x), rh, rl);
    const double s = sin_kernel(rh, rl), c = cos_kernel(rh, rl);
    const double sv = q == 0 ? s : q == 1 ? c : q == 2 ? -s : -c;
    cos_x = q == 0 ? c : q == 1 ? -s : q == 2 ? -c : s;
    sin_x = x < 0.0lf ? -sv : sv;
}

double d_sin(double x) {
    double s, c;
    d_sincos(x, s, c);
    return s;
}

double d_cos(double x) {
    double s, c;
    d_sincos(x, s, c);
    return c;
}

double d_tan(double x) {
    double s, c;
    d_sincos(x, s, c);
    return s / c;
}

// ---- inverse tangent -------------------------------------------------------------------------

// atan on [0, 1]: two halvings atan t = 2 atan(t / (1 + sqrt(1 + t^2))) bring t below
// tan(pi/16) < 0.2, where the odd series to t^29 is exact to double precision.
double atan_unit(double t) {
    for (int i = 0; i < 2; ++i) t = t / (1.0lf + sqrt(1.0lf + t * t));
    const double z = t * t;
    double p = 1.0lf / 29.0lf;
    for (int k = 13; k >= 0; --k) p = 1.0lf / double(2 * k + 1) - z * p;
    return 4.0lf * t * p;
}

bool d_sign_bit(double x) { return (unpackDouble2x32(x).y >> 31) != 0u; }

double d_atan(double x) {
    if (isnan(x)) return x;
    const double a = abs(x);
    precise double v = a <= 1.0lf ? atan_unit(a) : (PIO2_HI - atan_unit(1.0lf / a)) + PIO2_LO;
    return x < 0.0lf ? -v : v;
}

// C99's atan2: the quadrant from the signs (of zeros too), infinities by their directions.
double d_atan2(double y, double x) {
    if (isnan(x) || isnan(y)) return x + y;
    const bool y_negative = d_sign_bit(y), x_negative = d_sign_bit(x);
    double v;
    if (y == 0.0lf) {
        v = x_negative ? PI_HI : 0.0lf;
    } else if (isinf(x) && isinf(y)) {
        v = x_negative ? 2.356194490192345lf : 0.7853981633974483lf;
    } else if (x == 0.0lf || isinf(y)) {
        v = PIO2_HI;
    } else if (isinf(x)) {
        v = x_negative ? PI_HI : 0.0lf;
    } else {
        const double ay = abs(y), ax = abs(x);
        precise double a = ay <= ax ? atan_unit(ay / ax) : (PIO2_HI - atan_unit(ax / ay)) + PIO2_LO;
        precise double turned = (PI_HI - a) + PI_LO;
        v = x < 0.0lf ? turned : a;
    }
    return y_negative ? -v : v;
}

// ---- erf ---------------------------------------------------------------------------------------

// e^(-a^2) with a^2 carried exactly (its rounding would cost a^2 ulp).
double exp_minus_square(double a) {
    const double a2 = a * a;
    precise double a2_err = two_prod_err(a, a, a2);
    return d_exp(-a2) * (1.0lf - a2_err);
}

// Below 2.5: 2/sqrt(pi) a e^(-a^2) sum (2 a^2)^n / (1 3 5 ... (2n + 1)), all terms positive.
// From 2.5: 1 - erfc(a), erfc from Laplace's continued fraction evaluated from its tail. 1 from
// 6 on (erfc(6) < 2^-55).
double d_erf(double x) {
    if (isnan(x)) return x;
    const double a = abs(x);
    double r;
    if (a >= 6.0lf) {
        r = 1.0lf;
    } else if (a < 2.5lf) {
        const double z = 2.0lf * a * a;
        double term = 1.0lf, sum = 1.0lf;
        for (int n = 1; n < 120; ++n) {
            term *= z / double(2 * n + 1);
            sum += term;
            if (term < sum * 1e-17lf) break;
        }
        r = 1.1283791670955126lf * a * exp_minus_square(a) * sum;
    } else {
        double f = a;
        for (int n = 120; n >= 1; --n) f = a + 0.5lf * double(n) / f;
        r = 1.0lf - exp_minus_square(a) / (1.7724538509055159lf * f);  // sqrt(pi)
    }
    return x < 0.0lf ? -r : r;
}

// ---- pow ---------------------------------------------------------------------------------------

// log x for finite x > 0 as a double-double hi + lo: x = 2^e m, log m = 2 atanh(s) with s =
// (m - 1) / (m + 1) itself carried to double-double (its rounding, times a large y, would
// show in x^y).
void log_dd(double x, out double hi, out double lo) {
    int e;
    double m = frexp(x, e);
    if (m < 0.70710678118654752440lf) {
        m *= 2.0lf;
        e -= 1;
    }
    precise double num = m - 1.0lf;  // exact
    precise double den = m + 1.0lf;
    precise double den_bb = den - m;
    precise double den_err = (m - (den - den_bb)) + (1.0lf - den_bb);  // den + den_err = m + 1
    precise double s = num / den;
    precise double s_den = s * den;
    precise double s_lo = ((num - s_den) - two_prod_err(s, den, s_den) - s * den_err) / den;
    const double z = s * s;
    double series = 1.0lf / 25.0lf;
    for (int k = 11; k >= 1; --k) series = 1.0lf / double(2 * k + 1) + z * series;
    precise double small = 2.0lf * s * z * series + 2.0lf * s_lo + double(e) * LN2_LO;
    precise double big = double(e) * LN2_HI;  // exact
    precise double two_s = 2.0lf * s;          // exact
    precise double sum = big + two_s;
    precise double bb = sum - big;
    precise double err = (big - (sum - bb)) + (two_s - bb);
    precise double h = sum + (err + small);
    precise double l = (err + small) - (h - sum);
    hi = h;
    lo = l;
}

// pow with the cpu engine's special cases: x^0 = 1^y = 1, NaN otherwise propagates, 0^y is 0
// or inf, a negative base needs an integer exponent (its parity gives the sign).
double d_pow(double x, double y) {
    if (y == 0.0lf || x == 1.0lf) return 1.0lf;
    if (isnan(x) || isnan(y)) return x + y;
    if (x == 0.0lf) return y > 0.0lf ? 0.0lf : d_infinity();
    const double a = abs(x);
    double r;
    if (isinf(a)) {
        r = y > 0.0lf ? d_infinity() : 0.0lf;  // (-inf)^y too: its sign from y's parity below
    } else if (x < 0.0lf && y != floor(y)) {
        return d_nan();
    } else if (a == 1.0lf) {
        r = 1.0lf;  // (-1)^y, y an integer or infinite
    } else {
        double lh, ll;
        log_dd(a, lh, ll);
        precise double wh = y * lh;
        // y log x carried to double-double where it matters (beyond 800, x^y is inf or 0).
        precise double wl = abs(wh) < 800.0lf ? two_prod_err(y, lh, wh) + y * ll : 0.0lf;
        r = d_exp(wh) * (1.0lf + wl);
    }
    return x < 0.0lf && mod(y, 2.0lf) == 1.0lf ? -r : r;
}
