// A module provider binds to another plugin's family by its version and its ops' names
// (ferro/family_binding.hpp, ABI 1.9), never by the defining plugin's op order.
#include <ferro/family/fft.hpp>
#include <ferro/family_binding.hpp>

#include <catch2/catch.hpp>

using ferro::family::fft::Op;

namespace {

ferro_op_schema named(const char* name) {
    ferro_op_schema s{};
    s.struct_size = sizeof s;
    s.name = name;
    return s;
}

struct Family {
    ferro_op_schema ops[3] = {named("ifft"), named("fft"), named("fft_of_the_future")};  // not the contract's order
    ferro_family_desc desc{};
    ferro_module_create_args args{};
    explicit Family(const char* id, const char* version) {
        desc.struct_size = sizeof desc;
        desc.id = id;
        desc.version = version;
        desc.n_ops = 3;
        desc.ops = ops;
        args.struct_size = sizeof args;
        args.family = &desc;
    }
    std::string bind(ferro::plugin::FamilyBinding<Op>& b) const {
        return b.bind(&args, ferro::family::fft::kId, ferro::family::fft::kMajor, static_cast<uint32_t>(Op::count),
                      ferro::family::fft::op_name);
    }
};

}  // namespace

TEST_CASE("family binding: a provider maps the family's ops by name and declines the ones it does not know", "[abi]") {
    const Family fft("fft", "1.4.0");
    ferro::plugin::FamilyBinding<Op> b;
    REQUIRE(fft.bind(b) == "");
    CHECK(b.op(0) == Op::ifft);
    CHECK(b.op(1) == Op::fft);
    CHECK_FALSE(b.op(2).has_value());
    CHECK_FALSE(b.op(3).has_value());
    CHECK(b.qualified(2) == "fft.fft_of_the_future");
}

TEST_CASE("family binding: another major version, another family or an older host is refused with the reason", "[abi]") {
    ferro::plugin::FamilyBinding<Op> b;
    CHECK(Family("fft", "2.0.0").bind(b) == "the module serves family 'fft' version 1.x, the loaded family is version 2.0.0");
    CHECK(Family("linalg", "1.0.0").bind(b) == "the module serves family 'fft', not 'linalg'");
    Family old("fft", "1.0.0");
    old.args.struct_size = FERRO_STRUCT_SIZE_UP_TO(ferro_module_create_args, decline_reason);  // a 1.8 host
    CHECK(old.bind(b) == "the host does not say which family the module is for (it needs host ABI 1.9)");
    CHECK_FALSE(b.op(0).has_value());
}
