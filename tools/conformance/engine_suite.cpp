// The engine suite: what every engine must compute as the cpu engine does.
#include "conformance.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace ferro::conformance {
namespace {

std::string shape_text(const Shape& s) { return fmt::format("{}", fmt::join(s, "x")); }

}  // namespace

void fill_and_casts(const Runtime& rt, Report& r) {
    const std::string& e = r.engine();
    for (DType dt : kDtypes) {
        if (!r.has(dt)) continue;
        r.attempt(std::string("fill and casts in ") + dtype_name(dt), [&] {
            const std::string in = std::string(" in ") + dtype_name(dt);
            r.same("zeros" + in, rt.zeros({3, 5}, dt, e), rt.zeros({3, 5}, dt), dt);
            r.same("ones" + in, rt.ones({4, 1, 3}, dt, e), rt.ones({4, 1, 3}, dt), dt);
            r.same("full" + in, rt.full({7}, -2.5, dt, e), rt.full({7}, -2.5, dt), dt);
            const Tensor x = seeded_input(rt, {4, 6, 5}, dt, 3);
            const Tensor v = x.to(e);
            r.same("a round trip" + in, v, x, dt);
            r.same("a permuted copy" + in, v.permute({2, 0, 1}).contiguous(), x.permute({2, 0, 1}).contiguous(), dt);
            r.same("a sliced copy" + in, v.slice(1, 1, 5, 2).contiguous(), x.slice(1, 1, 5, 2).contiguous(), dt);
            r.same("a broadcast copy" + in, v.slice(2, 0, 1).expand({4, 6, 9}).contiguous(),
                   x.slice(2, 0, 1).expand({4, 6, 9}).contiguous(), dt);
            for (DType to : kDtypes) {
                if (r.has(to))
                    r.same(fmt::format("a cast from {} to {}", dtype_name(dt), dtype_name(to)), v.to(to), x.to(to), to);
            }
        });
    }
}

void unary(const Runtime& rt, Report& r) {
    for (DType dt : kDtypes) {
        if (!r.has(dt)) continue;
        const Tensor x = seeded_input(rt, {5, 7}, dt, 11);
        for (const char* op : kUnaryOps) {
            const std::string name = std::string("core.") + op;
            r.compare(
                name, dt, [&](const Tensor& t) { return t.call(name.c_str()); }, x);
            r.compare(
                name + " (strided)", dt, [&](const Tensor& t) { return t.transpose(0, 1).call(name.c_str()); }, x);
        }
    }
}

void binary(const Runtime& rt, Report& r) {
    const std::string& e = r.engine();
    for (DType dt : kDtypes) {
        if (!r.has(dt)) continue;
        r.attempt(std::string("binary ops in ") + dtype_name(dt), [&] {
            const Tensor a = seeded_input(rt, {4, 1, 6}, dt, 21), b = seeded_input(rt, {3, 1}, dt, 22);
            const Tensor bv = b.to(e);
            for (const char* op : kBinaryOps) {
                const std::string name = std::string("core.") + op;
                r.compare(
                    name, dt, [&](const Tensor& t) { return t.call(name.c_str(), {}, {t.engine() == "cpu" ? b : bv}); }, a);
            }
            if (!r.has(DType::boolean)) return;
            const Tensor cond = seeded_input(rt, {4, 3, 6}, DType::boolean, 5);
            r.same(std::string("core.where in ") + dtype_name(dt), where(cond.to(e), a.to(e), bv), where(cond, a, b), dt);
        });
    }
    if (!r.has(DType::i64)) return;
    r.attempt("i64 division and powers", [&] {
        const Tensor x = rt.tensor<int64_t>({7, -7, 7, -7, 0, 5}, {6}), y = rt.tensor<int64_t>({2, 2, -2, -2, 0, 0}, {6});
        r.same("i64 division by signs and zero", x.to(e) / y.to(e), x / y, DType::i64);
        r.same("i64 powers", x.to(e).pow(y.to(e)), x.pow(y), DType::i64);
    });
}

void reductions(const Runtime& rt, Report& r, std::initializer_list<Shape> shapes) {
    const Shape axes_list[] = {{0}, {1}, {2}, {0, 2}, {}};
    for (DType dt : kDtypes) {
        if (!r.has(dt)) continue;
        for (const Shape& shape : shapes) {
            const Tensor x = seeded_input(rt, shape, dt, 31);
            for (const Shape& axes : axes_list) {
                for (const char* op : {"sum", "prod", "max", "min", "any", "all"}) {
                    const std::string name = std::string("core.") + op;
                    r.compare(
                        fmt::format("{} of a {} input over {} axes", name, shape_text(shape), axes.size()), dt,
                        [&](const Tensor& t) { return t.call(name.c_str(), {Attr("axes", axes)}); }, x);
                }
            }
        }
    }
}

void products(const Runtime& rt, Report& r) {
    const std::string& e = r.engine();
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128}) {
        if (!r.has(dt)) continue;
        r.attempt(std::string("matmul and einsum in ") + dtype_name(dt), [&] {
            const auto on = [&](const Tensor& t) { return t.to(e); };
            const auto same = [&](const char* what, const Tensor& got, const Tensor& want) {
                r.same(fmt::format("{} in {}", what, dtype_name(dt)), got, want, dt);
            };
            const Tensor a = seeded_input(rt, {2, 70, 130}, dt, 41), b = seeded_input(rt, {2, 130, 90}, dt, 42);
            const Tensor av = on(a), bv = on(b);
            same("matmul", matmul(av, bv), matmul(a, b));
            same("matmul of transposes", matmul(bv.transpose(1, 2), av.transpose(1, 2)),
                 matmul(b.transpose(1, 2), a.transpose(1, 2)));
            same("matmul of strided operands", matmul(av.slice(2, 0, 130, 2), bv.slice(1, 0, 130, 2)),
                 matmul(a.slice(2, 0, 130, 2), b.slice(1, 0, 130, 2)));
            same("matmul with a broadcast batch", matmul(av, bv.slice(0, 0, 1)), matmul(a, b.slice(0, 0, 1)));
            const Tensor s = seeded_input(rt, {7, 4, 3}, dt, 46), t = seeded_input(rt, {7, 3, 5}, dt, 47);
            same("a skinny batched matmul", matmul(on(s), on(t)), matmul(s, t));
            same("a skinny batched matmul of transposes", matmul(on(t).transpose(1, 2), on(s).transpose(1, 2)),
                 matmul(t.transpose(1, 2), s.transpose(1, 2)));
            const Tensor u = seeded_input(rt, {300, 11}, dt, 48), w = seeded_input(rt, {11, 3}, dt, 49);
            same("a tall skinny matmul", matmul(on(u), on(w)), matmul(u, w));
            same("a Gram matrix", matmul(on(u).transpose(), on(u)), matmul(u.transpose(), u));
            const Tensor c = seeded_input(rt, {5, 6}, dt, 43), d = seeded_input(rt, {6, 4}, dt, 44),
                         f = seeded_input(rt, {4, 3}, dt, 45);
            same("an einsum chain", einsum("ij,jk,kl->il", {on(c), on(d), on(f)}), einsum("ij,jk,kl->il", {c, d, f}));
            same("a batched einsum", einsum("bij,bkj->bik", {av, av}), einsum("bij,bkj->bik", {a, a}));
            same("a batched einsum with a column-major result", einsum("bij,bkj->bki", {av, av}), einsum("bij,bkj->bki", {a, a}));
            same("an einsum diagonal", einsum("ii->i", {on(c.slice(1, 0, 5))}), einsum("ii->i", {c.slice(1, 0, 5)}));
            if (dt == DType::c64 || dt == DType::c128) {  // conjugated operands: the VJP of a complex product
                const Tensor x = seeded_input(rt, {6, 5}, dt, 46);
                same("matmul of conjugates", matmul(on(c).conj(), on(x).conj()), matmul(c.conj(), x.conj()));
            }
        });
    }
    // An MPS-like chain with a trace: several pairwise steps, permutes and batched products.
    if (!r.has(DType::f64)) return;
    const Tensor x = seeded_input(rt, {8, 2, 8}, DType::f64, 61), y = seeded_input(rt, {8, 2, 8}, DType::f64, 62);
    const Tensor z = seeded_input(rt, {8, 2, 8}, DType::f64, 63);
    const char* spec = "aib,bjc,cka->ijk";
    r.attempt("an MPS chain with a trace", [&] {
        r.same("an MPS chain with a trace", einsum(spec, {x.to(e), y.to(e), z.to(e)}), einsum(spec, {x, y, z}), DType::f64);
    });
}

void gradients(const Runtime& rt, Report& r, std::initializer_list<DType> dtypes) {
    const std::string& e = r.engine();
    for (DType dt : dtypes) {
        if (!r.has(dt)) continue;
        r.attempt(std::string("gradients in ") + dtype_name(dt), [&] {
            const Tensor a = seeded_input(rt, {3, 4}, dt, 51).to(e), b = seeded_input(rt, {4, 2}, dt, 52).to(e);
            const auto f = [](const std::vector<Tensor>& x) {
                return std::vector<Tensor>{(matmul(x[0], x[1]) * x[0].slice(1, 0, 2)).abs().sum({0}) + x[1].abs().sum({0}).exp()};
            };
            r.gradcheck(fmt::format("gradients of products, elementwise ops and reductions in {}", dtype_name(dt)),
                        ferro::gradcheck(f, {a, b}));
            // A four-operand einsum, whose rules walk the contraction tree (its path read back from the device).
            const Tensor c = seeded_input(rt, {2, 3}, dt, 53).to(e), d = seeded_input(rt, {3, 2}, dt, 54).to(e);
            const auto chain = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{einsum("ij,jk,kl,lm->im", x)}; };
            r.gradcheck(fmt::format("gradients of an einsum chain in {}", dtype_name(dt)), ferro::gradcheck(chain, {a, b, c, d}));
        });
    }
}

void special_casts(const Runtime& rt, Report& r) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> specials{std::nan(""), inf, -inf, 1e19, -1e19, 9.3e18, -9.3e18, 9.2e18, 2.5, -2.5, -0.0, 0.0};
    const Tensor x = rt.tensor<double>(specials, {static_cast<int64_t>(specials.size())});
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128}) {
        if (!r.has(dt)) continue;
        r.attempt(std::string("special values in ") + dtype_name(dt), [&] {
            const Tensor v = x.to(dt);
            r.same(fmt::format("NaN, infinities and out-of-range values cast from {} to i64", dtype_name(dt)),
                   v.to(r.engine()).to(DType::i64), v.to(DType::i64), DType::i64);
            if (dt == DType::f32 || dt == DType::f64) {
                r.same(fmt::format("core.angle of NaN and infinities in {}", dtype_name(dt)), v.to(r.engine()).call("core.angle"),
                       v.call("core.angle"), dt);
            }
        });
    }
}

std::vector<SuitePart> engine_suite() {
    return {{"fill and casts", fill_and_casts},
            {"unary ops", unary},
            {"binary ops", binary},
            {"reductions",
             [](const Runtime& rt, Report& r) {
                 reductions(rt, r, {Shape{3, 4, 5}, Shape{2, 3, 700}});
             }},
            {"matmul and einsum", products},
            {"gradients", [](const Runtime& rt, Report& r) { gradients(rt, r, {DType::f64}); }},
            {"special values", special_casts}};
}

}  // namespace ferro::conformance
