// The engine conformance suite, parameterised by engine: core ops, products, einsum and
// gradients on an engine against the cpu engine, in every dtype the engine reports. The vulkan
// and cuda suites run it (each adds what is its own: the validation layer's silence, the
// device's own math functions, library modules).
#pragma once

#include "engine_compare.hpp"

#include <ferro/gradcheck.hpp>

#include <initializer_list>
#include <set>
#include <string>

namespace ferro::test {

struct EngineUnderTest {
    std::string name;       // "vulkan:0"
    std::set<DType> dtypes;  // what the engine reports

    EngineUnderTest(const Runtime& rt, std::string engine) : name(std::move(engine)), dtypes(engine_dtypes(rt, name)) {}
    bool has(DType d) const { return dtypes.count(d) != 0; }
};

// zeros, ones, full, the round trip, permuted, sliced and broadcast copies, and every cast.
inline void conform_fill_and_casts(const Runtime& rt, const EngineUnderTest& e) {
    for (DType dt : kEngineDtypes) {
        if (!e.has(dt)) continue;
        INFO(dtype_name(dt));
        check_same_on(e.name, rt.zeros({3, 5}, dt, e.name), rt.zeros({3, 5}, dt), dt);
        check_same_on(e.name, rt.ones({4, 1, 3}, dt, e.name), rt.ones({4, 1, 3}, dt), dt);
        check_same_on(e.name, rt.full({7}, -2.5, dt, e.name), rt.full({7}, -2.5, dt), dt);
        const Tensor x = seeded_input(rt, {4, 6, 5}, dt, 3);
        const Tensor v = x.to(e.name);
        check_same_on(e.name, v, x, dt);
        check_same_on(e.name, v.permute({2, 0, 1}).contiguous(), x.permute({2, 0, 1}).contiguous(), dt);
        check_same_on(e.name, v.slice(1, 1, 5, 2).contiguous(), x.slice(1, 1, 5, 2).contiguous(), dt);
        check_same_on(e.name, v.slice(2, 0, 1).expand({4, 6, 9}).contiguous(),
                      x.slice(2, 0, 1).expand({4, 6, 9}).contiguous(), dt);
        for (DType to : kEngineDtypes) {
            if (!e.has(to)) continue;
            INFO("to " << dtype_name(to));
            check_same_on(e.name, v.to(to), x.to(to), to);
        }
    }
}

// Every unary op on dense and strided inputs.
inline void conform_unary(const Runtime& rt, const EngineUnderTest& e) {
    for (DType dt : kEngineDtypes) {
        if (!e.has(dt)) continue;
        const Tensor x = seeded_input(rt, {5, 7}, dt, 11);
        for (const char* op : kUnaryOps) {
            const std::string name = std::string("core.") + op;
            compare_on(e.name, name, dt, [&](const Tensor& t) { return t.call(name.c_str()); }, x);
            compare_on(e.name, name + " (strided)", dt, [&](const Tensor& t) { return t.transpose(0, 1).call(name.c_str()); }, x);
        }
    }
}

// Every binary op with broadcasting, where, and integer division and powers at numpy's edges.
inline void conform_binary(const Runtime& rt, const EngineUnderTest& e) {
    for (DType dt : kEngineDtypes) {
        if (!e.has(dt)) continue;
        const Tensor a = seeded_input(rt, {4, 1, 6}, dt, 21), b = seeded_input(rt, {3, 1}, dt, 22);
        const Tensor bv = b.to(e.name);
        for (const char* op : kBinaryOps) {
            const std::string name = std::string("core.") + op;
            compare_on(e.name, name, dt, [&](const Tensor& t) { return t.call(name.c_str(), {}, {t.engine() == "cpu" ? b : bv}); }, a);
        }
        if (!e.has(DType::boolean)) continue;
        const Tensor cond = seeded_input(rt, {4, 3, 6}, DType::boolean, 5);
        check_same_on(e.name, where(cond.to(e.name), a.to(e.name), bv), where(cond, a, b), dt);
    }
    if (!e.has(DType::i64)) return;
    const Tensor x = rt.tensor<int64_t>({7, -7, 7, -7, 0, 5}, {6}), y = rt.tensor<int64_t>({2, 2, -2, -2, 0, 0}, {6});
    check_same_on(e.name, x.to(e.name) / y.to(e.name), x / y, DType::i64);
    check_same_on(e.name, x.to(e.name).pow(y.to(e.name)), x.pow(y), DType::i64);
}

// Every reduction over several axis sets, on 3-d inputs of each of `shapes` (chosen per engine
// to reach each of its reduction strategies).
inline void conform_reductions(const Runtime& rt, const EngineUnderTest& e, std::initializer_list<Shape> shapes) {
    const Shape axes_list[] = {{0}, {1}, {2}, {0, 2}, {}};
    for (DType dt : kEngineDtypes) {
        if (!e.has(dt)) continue;
        for (const Shape& shape : shapes) {
            const Tensor x = seeded_input(rt, shape, dt, 31);
            for (const Shape& axes : axes_list) {
                for (const char* op : {"sum", "prod", "max", "min", "any", "all"}) {
                    const std::string name = std::string("core.") + op;
                    INFO("shape " << shape[0] << "x" << shape[1] << "x" << shape[2] << ", axes " << axes.size());
                    compare_on(e.name, name, dt, [&](const Tensor& t) { return t.call(name.c_str(), {Attr("axes", axes)}); }, x);
                }
            }
        }
    }
}

// matmul on every operand layout (row- and column-major, strided, a broadcast batch, skinny,
// conjugated) and einsum chains, batches, column-major results and diagonals.
inline void conform_products(const Runtime& rt, const EngineUnderTest& e) {
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128}) {
        if (!e.has(dt)) continue;
        INFO(dtype_name(dt));
        const auto on = [&](const Tensor& t) { return t.to(e.name); };
        const Tensor a = seeded_input(rt, {2, 70, 130}, dt, 41), b = seeded_input(rt, {2, 130, 90}, dt, 42);
        const Tensor av = on(a), bv = on(b);
        check_same_on(e.name, matmul(av, bv), matmul(a, b), dt);
        check_same_on(e.name, matmul(bv.transpose(1, 2), av.transpose(1, 2)), matmul(b.transpose(1, 2), a.transpose(1, 2)), dt);
        check_same_on(e.name, matmul(av.slice(2, 0, 130, 2), bv.slice(1, 0, 130, 2)),
                      matmul(a.slice(2, 0, 130, 2), b.slice(1, 0, 130, 2)), dt);
        check_same_on(e.name, matmul(av, bv.slice(0, 0, 1)), matmul(a, b.slice(0, 0, 1)), dt);
        // Skinny products, batched and strided.
        const Tensor s = seeded_input(rt, {7, 4, 3}, dt, 46), t = seeded_input(rt, {7, 3, 5}, dt, 47);
        check_same_on(e.name, matmul(on(s), on(t)), matmul(s, t), dt);
        check_same_on(e.name, matmul(on(t).transpose(1, 2), on(s).transpose(1, 2)), matmul(t.transpose(1, 2), s.transpose(1, 2)), dt);
        const Tensor u = seeded_input(rt, {300, 11}, dt, 48), w = seeded_input(rt, {11, 3}, dt, 49);
        check_same_on(e.name, matmul(on(u), on(w)), matmul(u, w), dt);
        check_same_on(e.name, matmul(on(u).transpose(), on(u)), matmul(u.transpose(), u), dt);
        const Tensor c = seeded_input(rt, {5, 6}, dt, 43), d = seeded_input(rt, {6, 4}, dt, 44), f = seeded_input(rt, {4, 3}, dt, 45);
        check_same_on(e.name, einsum("ij,jk,kl->il", {on(c), on(d), on(f)}), einsum("ij,jk,kl->il", {c, d, f}), dt);
        check_same_on(e.name, einsum("bij,bkj->bik", {av, av}), einsum("bij,bkj->bik", {a, a}), dt);
        check_same_on(e.name, einsum("bij,bkj->bki", {av, av}), einsum("bij,bkj->bki", {a, a}), dt);
        check_same_on(e.name, einsum("ii->i", {on(c.slice(1, 0, 5))}), einsum("ii->i", {c.slice(1, 0, 5)}), dt);
        if (dt == DType::c64 || dt == DType::c128) {  // conjugated operands: the VJP of a complex product
            const Tensor x = seeded_input(rt, {6, 5}, dt, 46);
            check_same_on(e.name, matmul(on(c).conj(), on(x).conj()), matmul(c.conj(), x.conj()), dt);
        }
    }
    // An MPS-like chain with a trace: several pairwise steps, permutes and batched products.
    if (!e.has(DType::f64)) return;
    const Tensor x = seeded_input(rt, {8, 2, 8}, DType::f64, 61), y = seeded_input(rt, {8, 2, 8}, DType::f64, 62);
    const Tensor z = seeded_input(rt, {8, 2, 8}, DType::f64, 63);
    const char* spec = "aib,bjc,cka->ijk";
    check_same_on(e.name, einsum(spec, {x.to(e.name), y.to(e.name), z.to(e.name)}), einsum(spec, {x, y, z}), DType::f64);
}

// Gradients through the engine's tensors against finite differences, in each of `dtypes` the
// engine has: elementwise ops, a product and reductions, and a four-operand einsum (whose rules
// walk the contraction tree, its path read back from the device).
inline void conform_gradients(const Runtime& rt, const EngineUnderTest& e, std::initializer_list<DType> dtypes) {
    for (DType dt : dtypes) {
        if (!e.has(dt)) continue;
        INFO(dtype_name(dt));
        const Tensor a = seeded_input(rt, {3, 4}, dt, 51).to(e.name), b = seeded_input(rt, {4, 2}, dt, 52).to(e.name);
        const auto f = [](const std::vector<Tensor>& x) {
            return std::vector<Tensor>{(matmul(x[0], x[1]) * x[0].slice(1, 0, 2)).abs().sum({0}) + x[1].abs().sum({0}).exp()};
        };
        const GradcheckResult r = gradcheck(f, {a, b});
        INFO(r.report);
        CHECK(r.ok);
        const Tensor c = seeded_input(rt, {2, 3}, dt, 53).to(e.name), d = seeded_input(rt, {3, 2}, dt, 54).to(e.name);
        const auto chain = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{einsum("ij,jk,kl,lm->im", x)}; };
        const GradcheckResult tree = gradcheck(chain, {a, b, c, d});
        INFO(tree.report);
        CHECK(tree.ok);
    }
}

}  // namespace ferro::test
