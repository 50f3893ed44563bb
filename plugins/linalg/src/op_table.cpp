// The family's table: every op's row in the contract's order, and the schemas made from them.
#include "op_row.hpp"

#include <array>
#include <string>
#include <vector>

namespace ferro::linalg {
namespace {

using RowFn = OpRow (*)();

// In the order of Op (ferro/family/linalg.hpp); each row says which op it is, checked below.
constexpr RowFn kRows[] = {op_rows::solve,
                           op_rows::inv,
                           op_rows::det,
                           op_rows::slogdet,
                           op_rows::cholesky,
                           op_rows::qr,
                           op_rows::eigh,
                           op_rows::eigvalsh,
                           op_rows::svd,
                           op_rows::svdvals,
                           op_rows::triangular_solve,
                           op_rows::lu_factor,
                           op_rows::lu,
                           op_rows::lu_unpack,
                           op_rows::lu_solve,
                           op_rows::eig,
                           op_rows::eigvals,
                           op_rows::matrix_exp,
                           op_rows::pinv,
                           op_rows::matrix_rank,
                           op_rows::vector_norm,
                           op_rows::matrix_norm,
                           op_rows::cond,
                           op_rows::lstsq,
                           op_rows::inverse_gaps,
                           op_rows::solve_with_lu};
static_assert(std::size(kRows) == static_cast<size_t>(Op::count));

std::vector<OpRow> build_rows() {
    std::vector<OpRow> table;
    for (size_t i = 0; i < std::size(kRows); ++i) {
        table.push_back(kRows[i]());
        if (table.back().op != static_cast<Op>(i)) {
            throw plugin::Error(FERRO_INTERNAL, std::string("linalg: the table's row ") + std::to_string(i) + " is not op " +
                                                    op_name(static_cast<Op>(i)));
        }
    }
    return table;
}

const std::vector<OpRow>& table() {
    static const std::vector<OpRow> rows = build_rows();
    return rows;
}

ferro_op_schema make_schema(const OpRow& r) {
    ferro_op_schema s{};
    s.struct_size = sizeof s;
    s.name = op_name(r.op);
    s.doc = r.doc;
    s.n_inputs = r.n_inputs;
    s.min_inputs = r.n_inputs;
    s.n_outputs = r.n_outputs;
    s.n_attrs = static_cast<uint32_t>(r.attrs.size());
    s.attrs = r.attrs.data();
    s.n_dtypes = static_cast<uint32_t>(r.dtypes.size());
    s.dtypes = r.dtypes.data();
    s.infer = r.infer;
    s.diff_inputs = r.diff_inputs;
    s.diff_outputs = r.diff_outputs;
    s.save_inputs = r.save_inputs;
    s.save_outputs = r.save_outputs;
    s.vjp = r.vjp;
    s.jvp = r.jvp;
    return s;
}

}  // namespace

const OpRow& op_row(Op op) { return table().at(static_cast<size_t>(op)); }

const ferro_op_schema* schemas() {
    static const std::vector<ferro_op_schema> schemas = [] {
        std::vector<ferro_op_schema> out;
        for (const OpRow& r : table()) out.push_back(make_schema(r));
        return out;
    }();
    return schemas.data();
}

std::string qualified(Op op) { return std::string("linalg.") + op_name(op); }

}  // namespace ferro::linalg
