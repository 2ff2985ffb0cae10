// SPDX-License-Identifier: GPL-2.0-only
// A directory of the tests' own under /tmp, removed with what is in it.
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_TEMP_DIR_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_TEMP_DIR_TESTUTIL_H_

#include <stdlib.h>

#include <cstdlib>
#include <string>

namespace hmbtrace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/retime_unittest.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_TEMP_DIR_TESTUTIL_H_
