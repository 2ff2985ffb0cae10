// SPDX-License-Identifier: GPL-2.0-only
// elf_file.h: bounded reads only; see there.
#include "dict/elf_file.h"

#include <cstring>

namespace hmbtrace {
namespace {

constexpr uint32_t kShtNote = 7;
constexpr uint32_t kShtNobits = 8;
constexpr uint32_t kNtGnuBuildId = 3;
// Far above any firmware's: a bound on what one header count may cost.
constexpr uint64_t kMaxSections = 65535;

// Little-endian reads at `off`, in range or false.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  bool Has(uint64_t off, uint64_t len) const { return off <= b_.size() && len <= b_.size() - off; }
  uint64_t Get(uint64_t off, unsigned n) const {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= uint64_t{b_[off + i]} << (8 * i);
    return v;
  }

 private:
  std::span<const uint8_t> b_;
};

Status Bad(uint64_t off, const std::string& what) {
  return Status::Error("not a usable ELF file: " + what + " (offset " + std::to_string(off) + ")");
}

// The GNU build id among the notes of `n`, if any: notes are (namesz,
// descsz, type, name padded to 4, desc padded to 4).
std::vector<uint8_t> BuildIdIn(std::span<const uint8_t> n) {
  Reader r(n);
  uint64_t off = 0;
  while (r.Has(off, 12)) {
    const uint64_t namesz = r.Get(off, 4), descsz = r.Get(off + 4, 4), type = r.Get(off + 8, 4);
    const uint64_t name_off = off + 12;
    const uint64_t desc_off = name_off + ((namesz + 3) & ~uint64_t{3});
    if (!r.Has(name_off, namesz) || !r.Has(desc_off, descsz)) return {};
    if (type == kNtGnuBuildId && namesz == 4 && std::memcmp(n.data() + name_off, "GNU", 4) == 0)
      return {n.begin() + desc_off, n.begin() + desc_off + descsz};
    off = desc_off + ((descsz + 3) & ~uint64_t{3});
  }
  return {};
}

}  // namespace

const ElfSection* ElfFile::Find(std::string_view name) const {
  for (const ElfSection& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

Result<ElfFile> ParseElf(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  if (!r.Has(0, 16) || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0)
    return Bad(0, "no ELF magic");
  ElfFile f;
  const uint8_t cls = bytes[4], data = bytes[5];
  if (cls != 1 && cls != 2) return Bad(4, "unknown class " + std::to_string(cls));
  if (data != 1) return Bad(5, "not little-endian");
  f.is64 = cls == 2;
  const unsigned w = f.is64 ? 8 : 4;  // an address or offset
  const uint64_t ehsize = f.is64 ? 64 : 52;
  if (!r.Has(0, ehsize)) return Bad(bytes.size(), "cut short in the ELF header");
  const uint64_t shoff = r.Get(f.is64 ? 40 : 32, w);
  const uint64_t shentsize = r.Get(f.is64 ? 58 : 46, 2);
  uint64_t shnum = r.Get(f.is64 ? 60 : 48, 2);
  uint64_t shstrndx = r.Get(f.is64 ? 62 : 50, 2);
  const uint64_t want_entsize = f.is64 ? 64 : 40;
  if (shoff == 0) return Bad(f.is64 ? 40 : 32, "no section header table");
  if (shentsize != want_entsize)
    return Bad(f.is64 ? 58 : 46, "section header size " + std::to_string(shentsize));
  if (!r.Has(shoff, want_entsize))
    return Bad(shoff, "section header table outside the file");
  // Extended numbering: the counts are in section 0.
  if (shnum == 0) shnum = r.Get(shoff + (f.is64 ? 32 : 20), w);
  if (shstrndx == 0xffff) shstrndx = r.Get(shoff + (f.is64 ? 40 : 24), 4);
  if (shnum > kMaxSections || !r.Has(shoff, shnum * want_entsize))
    return Bad(shoff, std::to_string(shnum) + " section headers do not fit in the file");
  if (shstrndx >= shnum) return Bad(f.is64 ? 62 : 50, "no section name table");

  struct Raw {
    uint64_t name, type, flags, offset, size;
  };
  std::vector<Raw> raw(shnum);
  for (uint64_t i = 0; i < shnum; i++) {
    const uint64_t h = shoff + i * want_entsize;
    Raw& s = raw[i];
    s.name = r.Get(h, 4);
    s.type = r.Get(h + 4, 4);
    s.flags = r.Get(h + 8, w);
    s.offset = r.Get(h + (f.is64 ? 24 : 16), w);
    s.size = r.Get(h + (f.is64 ? 32 : 20), w);
    if (s.type != kShtNobits && i != 0 && !r.Has(s.offset, s.size))
      return Bad(h, "section " + std::to_string(i) + "'s bytes outside the file");
  }
  const Raw& strtab = raw[shstrndx];
  for (uint64_t i = 0; i < shnum; i++) {
    const Raw& s = raw[i];
    ElfSection out;
    if (s.name >= strtab.size)
      return Bad(shoff + i * want_entsize, "section name outside the name table");
    const char* name = reinterpret_cast<const char*>(bytes.data() + strtab.offset + s.name);
    const size_t max = strtab.size - s.name;
    out.name.assign(name, strnlen(name, max));
    out.type = static_cast<uint32_t>(s.type);
    out.flags = s.flags;
    if (s.type != kShtNobits && i != 0) out.bytes = bytes.subspan(s.offset, s.size);
    if (out.type == kShtNote && f.build_id.empty()) f.build_id = BuildIdIn(out.bytes);
    f.sections.push_back(std::move(out));
  }
  return f;
}

}  // namespace hmbtrace
