# cmake -DIN=x.spv -DOUT=x.inc -P embed_spirv.cmake: the SPIR-V words of IN as a C initializer
# list (little-endian bytes to 32-bit words), for `static const uint32_t k[] = {#include ...};`.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])" "0x\\4\\3\\2\\1u," words "${hex}")
file(WRITE "${OUT}" "${words}\n")
