// SPDX-License-Identifier: GPL-2.0-only
//
// --dictionary FILE (report, stat, export): the dictionary of a firmware
// that does not embed all of it (`hmbtrace-cmd dict`, a tokenized printf
// dictionary), given to every CaptureFile::Read of the process.
//
// Each generation's dictionary, once its chunks are complete, is delivered
// as one hmb_dict event holding the trace's events followed by the file's
// (an id the trace has keeps the trace's entry). A generation whose
// hmb_state names another build id than the file's makes the read fail
// with both ids: a dictionary of another build decodes records wrongly.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_DICTIONARY_OVERRIDE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_DICTIONARY_OVERRIDE_H_

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture.h"
#include "dictionary_file.h"  // MergeDictionaries

namespace hmbtrace {

struct DictionaryOverride {
  std::string path;
  std::array<uint8_t, 20> build_id{};
  std::vector<uint8_t> dict;  // the ABI dictionary
};

// Reads FILE (dict/dict_file.h) and sets it for the reads that follow;
// an error names the file.
Status SetDictionaryOverride(const std::string& path);
// The one set, or nullptr.
const DictionaryOverride* GetDictionaryOverride();

// The filter CaptureFile::Read puts before its callback.
class DictionaryMerger {
 public:
  explicit DictionaryMerger(const DictionaryOverride& o) : o_(o) {}
  // Passes `ev` on to `fn` (a dictionary: once complete, merged); false
  // to stop (fn's, or a build id mismatch: error()).
  bool Filter(const CaptureEvent& ev, const CaptureCallback& fn);
  const std::string& error() const { return error_; }

 private:
  struct Pending {
    std::vector<uint8_t> bytes;
    std::vector<bool> have;
    size_t held = 0;
  };
  const DictionaryOverride& o_;
  std::map<std::pair<uint16_t, uint32_t>, Pending> pending_;  // (dev, gen)
  std::string error_;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_DICTIONARY_OVERRIDE_H_
