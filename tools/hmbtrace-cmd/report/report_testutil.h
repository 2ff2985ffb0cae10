// SPDX-License-Identifier: GPL-2.0-only
//
// For tests: what `hmbtrace-cmd report` prints of a capture (or a crash
// dump), split into lines.
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_REPORT_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_REPORT_TESTUTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hmbtrace/status_testutil.h"
#include "report/report.h"

namespace hmbtrace {

// Both passes, in timeline order; `summary` gets WriteReport's summary.
inline std::vector<std::string> ReportLinesOf(const std::string& path,
                                              const ReportOptions& options = {},
                                              ReportSummary* summary = nullptr) {
  std::string text, error;
  ReportSummary ignored;
  EXPECT_TRUE(StatusOk(WriteReport(
                           path, options,
                           [&text](const std::string& batch) {
                             text += batch;
                             return true;
                           },
                           summary ? summary : &ignored),
                       &error))
      << error;
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  return lines;
}

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_REPORT_TESTUTIL_H_
