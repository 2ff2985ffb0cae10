// SPDX-License-Identifier: GPL-2.0-only
// dict.h: ELF in, dictionary file out.
#include "dict/dict.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "dict/dict_file.h"
#include "dict/elf_file.h"
#include "dict/printf_dict.h"

namespace hmbtrace {
namespace {

// Far above any firmware image: what one read may cost.
constexpr uint64_t kMaxElfBytes = 1ull << 31;

Result<DictFile> DictOfElf(const std::string& path, std::span<const uint8_t> bytes, bool quiet) {
  auto elf = ParseElf(bytes);
  if (!elf.ok()) return Status::Error(path + ": " + elf.message());
  const ElfSection* sec = elf->Find(kPrintfSection);
  if (!sec)
    return Status::Error(path + ": no " + std::string(kPrintfSection) +
                         " section (no HMB_TRACE_PRINTF call site, or stripped)");
  if (elf->build_id.empty())
    return Status::Error(path + ": no GNU build id note (link with --build-id)");
  if ((sec->flags & kElfShfAlloc) && !quiet)
    std::fprintf(stderr,
                 "hmbtrace-cmd dict: %s: warning: %s is loaded (SHF_ALLOC): its strings are in "
                 "the device image\n",
                 path.c_str(), kPrintfSection);
  auto sites = ParsePrintfSites(sec->bytes);
  if (!sites.ok()) return Status::Error(path + ": " + sites.message());
  auto events = MakePrintfEvents(sites.value());
  if (!events.ok()) return events.status();
  auto dict = SerializeDictionary(events.value());
  if (!dict.ok()) return Status::Error(path + ": " + dict.message());
  DictFile f;
  std::copy_n(elf->build_id.begin(), std::min(elf->build_id.size(), f.build_id.size()),
              f.build_id.begin());
  f.dict = std::move(dict.value());
  if (!quiet)
    std::fprintf(stderr, "hmbtrace-cmd dict: %zu printf events, build id %s\n",
                 events->size(), BuildIdHex(f.build_id).c_str());
  return f;
}

}  // namespace

Result<DictFile> MakeDictFile(const std::string& path, bool quiet) {
  auto bytes = ReadFile(path, kMaxElfBytes);
  if (!bytes.ok()) return bytes.status();
  return DictOfElf(path, bytes.value(), quiet);
}

int RunDict(const DictOptions& o) {
  auto f = MakeDictFile(o.elf, o.quiet);
  if (!f.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd dict: %s\n", f.message().c_str());
    return 1;
  }
  const std::vector<uint8_t> out = o.raw ? f->dict : EncodeDictFile(f.value());
  std::ofstream os(o.output, std::ios::binary | std::ios::trunc);
  os.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  os.close();
  if (!os) {
    std::fprintf(stderr, "hmbtrace-cmd dict: %s: %s\n", o.output.c_str(), std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace hmbtrace
