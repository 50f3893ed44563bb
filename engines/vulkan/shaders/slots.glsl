// Typed loads and stores for the operand slots a shader variant defines (see common.glsl).
// Booleans are stored as one byte and computed with as bool.

#ifdef O_S
DECLARE_REF(RefO, O_S, O_SIZE)
O_T load_o(uint64_t at) {
#if O_KIND == KIND_BOOL
    return uint(RefO(at).v) != 0u;
#else
    return RefO(at).v;
#endif
}
void store_o(uint64_t at, O_T x) {
#if O_KIND == KIND_BOOL
    RefO(at).v = uint8_t(x ? 1u : 0u);
#else
    RefO(at).v = x;
#endif
}
#endif

#ifdef A_S
DECLARE_REF(RefA, A_S, A_SIZE)
A_T load_a(uint64_t at) {
#if A_KIND == KIND_BOOL
    return uint(RefA(at).v) != 0u;
#else
    return RefA(at).v;
#endif
}
#endif

#ifdef B_S
DECLARE_REF(RefB, B_S, B_SIZE)
B_T load_b(uint64_t at) {
#if B_KIND == KIND_BOOL
    return uint(RefB(at).v) != 0u;
#else
    return RefB(at).v;
#endif
}
#endif

#ifdef C_S
DECLARE_REF(RefC, C_S, C_SIZE)
C_T load_c(uint64_t at) {
#if C_KIND == KIND_BOOL
    return uint(RefC(at).v) != 0u;
#else
    return RefC(at).v;
#endif
}
#endif
