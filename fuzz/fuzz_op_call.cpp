// The C API's op call with every argument fuzzed: which op (core's and einsum's), its inputs
// (a pool of tensors of every dtype, views with stride 0 and negative strides, empty ones,
// NULL), attributes by the schema's names or others, of any type tag with any value, and the
// ferro_op_call_args struct itself (struct_size, counts, capacities, out tensors). The host's
// attribute decoding and normalisation, its argument checks and every op's infer see it all;
// the call must return a status or outputs, never crash, leak or read out of bounds.
#include "fuzz_runtime.hpp"
#include "fuzz_values.hpp"

#include <string>
#include <vector>

namespace {

struct OpInfo {
    ferro_op handle = nullptr;
    std::vector<std::string> attrs;
};

// The runtime outlives the process's static destructors; the pool is released in this one.
struct World {
    ferro_runtime* rt = nullptr;
    std::vector<OpInfo> ops;
    std::vector<ferro_tensor> pool;
    World() = default;
    World(World&&) = default;
    World(const World&) = delete;
    World& operator=(const World&) = delete;
    ~World() {
        for (ferro_tensor t : pool) ferro_tensor_release(t);
    }
};

// The harness's own set-up must work: a failure aborts with the reason.
ferro_tensor made(ferro_status st, ferro_tensor t = nullptr) {
    if (st != nullptr) {
        fprintf(stderr, "fuzz harness: %s\n", ferro_status_message(st));
        abort();
    }
    return t;
}

const World& world() {
    static const World w = [] {
        World out;
        out.rt = ferro::fuzz::runtime_with("libferro_einsum.so");
        ferro_inventory* inv = nullptr;
        made(ferro_runtime_inventory(out.rt, &inv));
        for (uint32_t i = 0; i < ferro_inventory_op_count(inv); ++i) {
            ferro_op_info info{};
            info.struct_size = sizeof info;
            made(ferro_inventory_op(inv, i, &info));
            OpInfo op;
            made(ferro_op_find(out.rt, info.name, &op.handle));
            for (uint32_t k = 0; k < info.n_attrs; ++k) {
                ferro_op_attr_info a{};
                a.struct_size = sizeof a;
                made(ferro_inventory_op_attr(inv, i, k, &a));
                op.attrs.emplace_back(a.name);
            }
            out.ops.push_back(std::move(op));
        }
        ferro_inventory_destroy(inv);
        // The pool: every dtype, a scalar, an empty tensor, and views (stride 0, reversed, transposed).
        const auto tensor = [](const auto& create) {
            ferro_tensor t = nullptr;
            made(create(&t));
            return t;
        };
        static const double values[12] = {0.5, -1, 2, 3.5, -4, 5, 6, -7, 8, 9.5, 10, -11};
        static const int64_t integers[6] = {3, -1, 0, 7, 2, -5};
        static const unsigned char flags[6] = {1, 0, 1, 1, 0, 1};
        const int64_t s23[] = {2, 3}, s0[] = {0, 3};
        for (ferro_dtype d :
             {FERRO_DTYPE_F64, FERRO_DTYPE_F32, FERRO_DTYPE_C128, FERRO_DTYPE_C64, FERRO_DTYPE_I64, FERRO_DTYPE_BOOL}) {
            const void* data = d == FERRO_DTYPE_I64    ? static_cast<const void*>(integers)
                               : d == FERRO_DTYPE_BOOL ? static_cast<const void*>(flags)
                                                       : values;
            out.pool.push_back(
                tensor([&](ferro_tensor* t) { return ferro_tensor_from_host(out.rt, "cpu", d, 2, s23, data, t); }));
        }
        out.pool.push_back(tensor(
            [&](ferro_tensor* t) { return ferro_tensor_from_host(out.rt, "cpu", FERRO_DTYPE_F64, 0, nullptr, values, t); }));
        out.pool.push_back(
            tensor([&](ferro_tensor* t) { return ferro_tensor_from_host(out.rt, "cpu", FERRO_DTYPE_F64, 2, s0, nullptr, t); }));
        static double memory[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        const int64_t s3[] = {3}, s32[] = {3, 2}, s43[] = {4, 3};
        const int64_t zero_row[] = {0, 1}, reversed[] = {-1}, transposed[] = {1, 3};
        const auto borrowed = [&](int32_t ndim, const int64_t* shape, const int64_t* strides, double* first) {
            ferro_borrow_args b{};
            b.struct_size = sizeof b;
            b.dtype = FERRO_DTYPE_F64;
            b.ndim = ndim;
            b.shape = shape;
            b.strides = strides;
            b.data = first;
            b.lent = memory;
            b.lent_bytes = sizeof memory;
            return tensor([&](ferro_tensor* t) { return ferro_tensor_borrow(out.rt, &b, t); });
        };
        out.pool.push_back(borrowed(2, s43, zero_row, memory));     // one row seen 4 times
        out.pool.push_back(borrowed(1, s3, reversed, memory + 2));  // memory[2], [1], [0]
        out.pool.push_back(borrowed(2, s32, transposed, memory));   // a transposed 2 x 3
        return out;
    }();
    return w;
}

void add_attr(ferro::fuzz::Call& call, FuzzedDataProvider& in, const OpInfo& op) {
    const std::string name = !op.attrs.empty() && !ferro::fuzz::rarely(in, 8)
                                 ? op.attrs[in.ConsumeIntegralInRange<size_t>(0, op.attrs.size() - 1)]
                                 : in.ConsumeRandomLengthString(12);
    switch (in.ConsumeIntegralInRange(0, 8)) {
        case 0: call.attr_i64(name.c_str(), ferro::fuzz::small_or_extreme(in)); break;
        case 1: call.attr_f64(name.c_str(), ferro::fuzz::some_double(in)); break;
        case 2: call.attr_bool(name.c_str(), in.ConsumeBool()); break;
        case 3: call.attr_none(name.c_str()); break;
        case 4:
            call.attr_str(name.c_str(), in.PickValueInArray<const char*>({"f64", "c64", "i64", "bool", "ortho", "forward", "cpu",
                                                                          "U", "L", "fro", "nuc", "reduced", ""}));
            break;
        case 5: call.attr_str(name.c_str(), in.ConsumeRandomLengthString(16)); break;
        case 6: call.attr_raw(name.c_str(), in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<int64_t>()); break;
        default: {
            std::vector<int64_t> v(in.ConsumeIntegralInRange<size_t>(0, 6));
            for (int64_t& x : v) x = ferro::fuzz::small_or_extreme(in);
            call.attr_i64_array(name.c_str(), std::move(v));
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    const World& w = world();
    const OpInfo& op = w.ops[in.ConsumeIntegralInRange<size_t>(0, w.ops.size() - 1)];
    ferro::fuzz::Call call(w.rt, "");
    for (int n = in.ConsumeIntegralInRange(0, 4); n > 0; --n) {
        const size_t pick = in.ConsumeIntegralInRange<size_t>(0, w.pool.size());
        call.input(pick < w.pool.size() ? w.pool[pick] : nullptr);
    }
    for (int n = in.ConsumeIntegralInRange(0, 4); n > 0; --n) add_attr(call, in, op);
    ferro_tensor into[2] = {w.pool[in.ConsumeIntegralInRange<size_t>(0, w.pool.size() - 1)], nullptr};
    ferro_op_call_args args = call.args(/*capacity=*/in.ConsumeIntegralInRange<uint32_t>(0, 8));
    switch (in.ConsumeIntegralInRange(0, 5)) {
        case 1: args.struct_size = in.ConsumeIntegral<uint32_t>(); break;
        case 2: args.struct_size = FERRO_STRUCT_SIZE_UP_TO(ferro_op_call_args, reserved); break;
        case 3:
            args.into = into;
            args.n_into = in.ConsumeIntegralInRange<uint32_t>(0, 2);
            break;
        case 4: args.n_inputs = in.ConsumeIntegralInRange<uint32_t>(0, args.n_inputs); break;
        default: break;
    }
    ferro_status st = ferro_op_call(w.rt, op.handle, &args);
    if (st == nullptr && args.into == nullptr) {
        for (uint32_t i = 0; i < args.n_outputs; ++i) ferro_tensor_release(call.output(i));
    }
    ferro_status_free(st);
    return 0;
}
