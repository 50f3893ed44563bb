// The check a candidate file passes before dlopen sees it (stage open). dlopen maps a shared
// object's segments with mmap and trusts its headers: a segment that reaches past the end of a
// truncated file maps pages with no bytes behind them, and the first touch of one (relocation,
// a static initialiser) kills the process with SIGBUS. No signal handler can turn that into an
// error, so the headers are read with plain reads and checked against the file's size first.
#pragma once

#include <filesystem>

namespace ferro::host {

// Throws LoadError(open, INVALID_ARGUMENT) naming what is wrong unless `path` is an ELF shared
// object of this process's class, byte order and machine whose program headers, loadable
// segments and dynamic section all lie inside the file, and whose dynamic section's tables
// lie inside its loadable segments. A file that changes between this check and dlopen is not
// covered: plugin directories are trusted not to be written while a runtime scans them.
void check_elf_image(const std::filesystem::path& path);

}  // namespace ferro::host
