// Thread-locals on hot paths.
#pragma once

namespace ferro::host {

// `t`, a thread_local, as an ordinary reference. GCC looks a thread_local's address up again
// (a __tls_get_addr call in a shared library) after a branch that may call out; an address
// that has been through an empty asm is an ordinary value, looked up once.
template <class T> [[gnu::always_inline]] inline T& this_thread(T& t) noexcept {
    T* p = &t;
    asm("" : "+r"(p));
    return *p;
}

}  // namespace ferro::host
