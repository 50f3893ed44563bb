#include "loader/elf_check.hpp"

#include "loader/load_error.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace ferro::host {
namespace {

using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Dyn = ElfW(Dyn);

[[noreturn]] void damaged(const std::string& what) {
    throw LoadError(LoadStage::open, FERRO_INVALID_ARGUMENT, "not a loadable shared library: " + what);
}

std::string machine_name(unsigned machine) {
    switch (machine) {
        case EM_X86_64: return "x86-64";
        case EM_386: return "i386";
        case EM_AARCH64: return "AArch64";
        case EM_ARM: return "ARM";
        case EM_RISCV: return "RISC-V";
        case EM_PPC64: return "PowerPC64";
        case EM_S390: return "s390";
        default: return fmt::format("e_machine {}", machine);
    }
}

const char* class_name(unsigned char c) {
    return c == ELFCLASS32 ? "ELFCLASS32" : c == ELFCLASS64 ? "ELFCLASS64" : "an unknown ELF class";
}

// The ELF header of the image holding libferro's code, as the loader mapped it: what a plugin
// must match to be loadable into this process.
const Ehdr& own_header() {
    static const Ehdr* header = [] {
        Dl_info info{};
        dladdr(reinterpret_cast<void*>(&check_elf_image), &info);
        return static_cast<const Ehdr*>(info.dli_fbase);
    }();
    return *header;
}

class ElfFile {
public:
    explicit ElfFile(const std::filesystem::path& path) : in_(path, std::ios::binary) {
        std::error_code ec;
        size_ = std::filesystem::file_size(path, ec);
        if (!in_ || ec) damaged("cannot read the file");
    }
    uint64_t size() const { return size_; }

    // Whether [offset, offset + length) lies inside the file (written not to overflow).
    bool holds(uint64_t offset, uint64_t length) const { return offset <= size_ && length <= size_ - offset; }

    void read(uint64_t offset, void* out, uint64_t length, const char* what) {
        if (!holds(offset, length)) {
            damaged(
                fmt::format("the {} ({} bytes at offset {}) reach past the end of the file ({} bytes): "
                            "is it truncated?",
                            what, length, offset, size_));
        }
        in_.seekg(static_cast<std::streamoff>(offset));
        in_.read(static_cast<char*>(out), static_cast<std::streamsize>(length));
        if (!in_) damaged(fmt::format("reading the {} failed", what));
    }

private:
    std::ifstream in_;
    uint64_t size_ = 0;
};

void check_header(const Ehdr& h) {
    const Ehdr& own = own_header();
    if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) damaged("invalid ELF header (not an ELF file)");
    if (h.e_ident[EI_CLASS] != own.e_ident[EI_CLASS]) {
        damaged(fmt::format("wrong ELF class: {}, this process is {}", class_name(h.e_ident[EI_CLASS]),
                            class_name(own.e_ident[EI_CLASS])));
    }
    if (h.e_ident[EI_DATA] != own.e_ident[EI_DATA]) damaged("wrong byte order for this process");
    if (h.e_machine != own.e_machine) {
        damaged(fmt::format("built for {}, this process runs on {}", machine_name(h.e_machine), machine_name(own.e_machine)));
    }
    if (h.e_type != ET_DYN) damaged(fmt::format("ELF type {} is not a shared object (ET_DYN)", h.e_type));
    if (h.e_phentsize != sizeof(Phdr) || h.e_phnum == 0) {
        damaged(fmt::format("{} program headers of {} bytes (expected {}-byte entries)", h.e_phnum, h.e_phentsize, sizeof(Phdr)));
    }
}

bool maps(const std::vector<Phdr>& loads, uint64_t address, uint64_t length) {
    for (const Phdr& p : loads) {
        if (address >= p.p_vaddr && length <= p.p_filesz && address - p.p_vaddr <= p.p_filesz - length) return true;
    }
    return false;
}

// The dynamic section: the tables the dynamic linker reads must lie in the file-backed part of
// a loadable segment, and an object that can export a symbol has a symbol and a string table.
void check_dynamic(ElfFile& file, const Phdr& dynamic, const std::vector<Phdr>& loads) {
    std::vector<Dyn> entries(dynamic.p_filesz / sizeof(Dyn));
    file.read(dynamic.p_offset, entries.data(), entries.size() * sizeof(Dyn), "dynamic section");
    uint64_t strtab = 0, strsz = 0;
    bool symtab = false, hash = false;
    for (const Dyn& d : entries) {
        if (d.d_tag == DT_NULL) break;
        switch (d.d_tag) {
            case DT_STRTAB: strtab = d.d_un.d_ptr; break;
            case DT_STRSZ: strsz = d.d_un.d_val; break;
            case DT_SYMTAB: symtab = true; [[fallthrough]];
            case DT_HASH:
            case DT_GNU_HASH:
            case DT_RELA:
            case DT_REL:
            case DT_JMPREL:
            case DT_VERSYM:
            case DT_VERNEED:
            case DT_VERDEF:
            case DT_INIT_ARRAY:
            case DT_FINI_ARRAY:
                hash = hash || d.d_tag == DT_HASH || d.d_tag == DT_GNU_HASH;
                if (!maps(loads, d.d_un.d_ptr, 1)) {
                    damaged(
                        fmt::format("dynamic entry {:#x} points at {:#x}, outside the file's loadable "
                                    "segments",
                                    static_cast<uint64_t>(d.d_tag), static_cast<uint64_t>(d.d_un.d_ptr)));
                }
                break;
            default: break;
        }
    }
    if (strtab == 0 || !symtab || !hash) {
        damaged("the dynamic section has no symbol table, string table or hash table (is the file damaged?)");
    }
    if (!maps(loads, strtab, strsz)) damaged("the dynamic string table lies outside the file's loadable segments");
}

}  // namespace

void check_elf_image(const std::filesystem::path& path) {
    ElfFile file(path);
    Ehdr header{};
    if (file.size() < sizeof header) {
        damaged(fmt::format("file too short ({} bytes; an ELF header takes {})", file.size(), sizeof header));
    }
    file.read(0, &header, sizeof header, "ELF header");
    check_header(header);
    std::vector<Phdr> phdrs(header.e_phnum);
    file.read(header.e_phoff, phdrs.data(), uint64_t{header.e_phnum} * sizeof(Phdr), "program headers");
    std::vector<Phdr> loads;
    const Phdr* dynamic = nullptr;
    for (size_t i = 0; i < phdrs.size(); ++i) {
        const Phdr& p = phdrs[i];
        if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
        if (!file.holds(p.p_offset, p.p_filesz) || p.p_filesz > p.p_memsz) {
            damaged(
                fmt::format("segment {} ({} bytes at offset {}) reaches past the end of the file ({} bytes): "
                            "is it truncated?",
                            i, p.p_filesz, p.p_offset, file.size()));
        }
        if (p.p_type == PT_LOAD) loads.push_back(p);
        else dynamic = &p;
    }
    if (loads.empty()) damaged("no loadable segment");
    if (dynamic == nullptr) damaged("no dynamic section (PT_DYNAMIC): not a shared library");
    check_dynamic(file, *dynamic, loads);
}

}  // namespace ferro::host
