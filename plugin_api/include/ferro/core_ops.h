/* ferro plugin ABI — the core family's ops by number, for the handles the host gives rules.
 *
 * Every VJP and JVP rule is handed one resolved handle per core op (ferro_vjp_args.core_ops,
 * ferro_jvp_args.core_ops, since 1.12), indexed by these numbers, so a rule calls "core.mul"
 * without looking its name up on every call. The list is append-only within a major: a number
 * never changes meaning, and a host may hand more handles than a plugin's headers know
 * (n_core_ops says how many). ferro/rules.hpp calls through them.
 *
 * Since: 1.12. Thread-safety: constants only. */
#ifndef FERRO_CORE_OPS_H
#define FERRO_CORE_OPS_H

#include <stdint.h>

/* X(NAME, "core.name") for every core op, in number order. */
/* clang-format off */
#define FERRO_CORE_OP_LIST(X)                                                                       \
    X(ABS, "core.abs") X(ADD, "core.add") X(ALL, "core.all") X(ANGLE, "core.angle")                  \
    X(ANY, "core.any") X(ARANGE, "core.arange") X(ARCCOS, "core.arccos") X(ARCSIN, "core.arcsin")    \
    X(ARCTAN, "core.arctan") X(ARCTAN2, "core.arctan2") X(CAST, "core.cast") X(CEIL, "core.ceil")    \
    X(COMPLEX, "core.complex") X(CONCAT, "core.concat") X(CONJ, "core.conj")                         \
    X(CONTIGUOUS, "core.contiguous") X(COPY, "core.copy") X(COS, "core.cos") X(COSH, "core.cosh")    \
    X(DIAGONAL, "core.diagonal") X(DIV, "core.div") X(EQ, "core.eq") X(ERF, "core.erf")              \
    X(EXP, "core.exp") X(EXPAND, "core.expand") X(EXPM1, "core.expm1") X(EYE, "core.eye")            \
    X(FLOOR, "core.floor") X(FULL, "core.full") X(GE, "core.ge") X(GT, "core.gt")                    \
    X(IMAG, "core.imag") X(ISFINITE, "core.isfinite") X(ISINF, "core.isinf") X(ISNAN, "core.isnan")  \
    X(LE, "core.le") X(LOG, "core.log") X(LOG1P, "core.log1p") X(LOGICAL_AND, "core.logical_and")    \
    X(LOGICAL_NOT, "core.logical_not") X(LOGICAL_OR, "core.logical_or") X(LT, "core.lt")             \
    X(MATMUL, "core.matmul") X(MAX, "core.max") X(MAXIMUM, "core.maximum") X(MEAN, "core.mean")      \
    X(MIN, "core.min") X(MINIMUM, "core.minimum") X(MUL, "core.mul") X(NE, "core.ne")                \
    X(NEG, "core.neg") X(ONES, "core.ones") X(PERMUTE, "core.permute") X(POW, "core.pow")            \
    X(PROD, "core.prod") X(RAND, "core.rand") X(RANDN, "core.randn") X(REAL, "core.real")            \
    X(RECIPROCAL, "core.reciprocal") X(RESHAPE, "core.reshape") X(ROUND, "core.round")               \
    X(RSQRT, "core.rsqrt") X(SIGMOID, "core.sigmoid") X(SIGN, "core.sign") X(SIN, "core.sin")        \
    X(SINH, "core.sinh") X(SLICE, "core.slice") X(SQRT, "core.sqrt") X(SQUARE, "core.square")        \
    X(SQUEEZE, "core.squeeze") X(STACK, "core.stack") X(SUB, "core.sub") X(SUM, "core.sum")          \
    X(TAN, "core.tan") X(TANH, "core.tanh") X(TRANSPOSE, "core.transpose")                           \
    X(UNSQUEEZE, "core.unsqueeze") X(WHERE, "core.where") X(ZEROS, "core.zeros")
/* clang-format on */

#define FERRO_CORE_OP_ENUMERATOR(name, text) FERRO_CORE_OP_##name,
typedef enum ferro_core_op {
    FERRO_CORE_OP_LIST(FERRO_CORE_OP_ENUMERATOR) /* FERRO_CORE_OP_ABS, ... */
    FERRO_CORE_OP_COUNT                          /* in these headers; a newer host may hand more */
} ferro_core_op;
#undef FERRO_CORE_OP_ENUMERATOR

/* The qualified name of core op `op` ("core.mul"), or NULL for a number these headers do not
 * know. */
static inline const char* ferro_core_op_name(uint32_t op) {
#define FERRO_CORE_OP_NAME(name, text) text,
    static const char* const names[] = {FERRO_CORE_OP_LIST(FERRO_CORE_OP_NAME)};
#undef FERRO_CORE_OP_NAME
    return op < (uint32_t)FERRO_CORE_OP_COUNT ? names[op] : (const char*)0;
}

#endif /* FERRO_CORE_OPS_H */
