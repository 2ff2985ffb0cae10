// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd dict: the dictionary of a firmware's tokenized printf sites
// (producer/hmb_trace_printf.h), built from its ELF file, with its GNU
// build id, for --dictionary (a dictionary file) or for the firmware to
// embed (--raw: the ABI's dictionary bytes alone).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_H_

#include <string>

#include "dict/dict_file.h"
#include "hmbtrace/status.h"

namespace hmbtrace {

// The dictionary file of the ELF file at `path`; errors name the path
// (and, for a site, its file and line). Warns on stderr unless `quiet`
// when the section is loaded.
Result<DictFile> MakeDictFile(const std::string& path, bool quiet);

struct DictOptions {
  std::string elf;
  std::string output;
  bool raw = false;
  bool quiet = false;
};

// Exit code: 0, or 1 with the reasons on stderr.
int RunDict(const DictOptions& o);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_H_
