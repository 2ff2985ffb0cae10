// SPDX-License-Identifier: GPL-2.0-only
#include "capture/capture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <event-parse.h>

#include "capture/count_records_testutil.h"
#include "capture/ftrace_events_c.h"
#include "capture/nvme_host_c.h"
#include "capture/fixture_testutil.h"
#include "hmbtrace/status_testutil.h"

namespace hmbtrace {
namespace {

TEST(Capture, DeliversEveryHmbEventOfTheFixtureInHostTimeOrder) {
  std::string error;
  const std::vector<CaptureEvent> events = ReadAll(FixturePath(), &error);
  ASSERT_TRUE(error.empty()) << error;
  uint64_t records = 0, states = 0, dicts = 0, other = 0;
  uint64_t last_ts = 0;
  for (const CaptureEvent& ev : events) {
    EXPECT_GE(ev.ts, last_ts);
    last_ts = ev.ts;
    records += ev.kind == CaptureKind::kRecord;
    states += ev.kind == CaptureKind::kState;
    dicts += ev.kind == CaptureKind::kDict;
    other += ev.kind != CaptureKind::kRecord && ev.kind != CaptureKind::kState &&
             ev.kind != CaptureKind::kDict;
  }
  EXPECT_EQ(records, 1035u);
  EXPECT_EQ(states, 2u);
  EXPECT_EQ(dicts, 8u);
  EXPECT_EQ(other, 0u);
}

TEST(Capture, RecordCountsPerCoreMatchAnIndependentReader) {
  uint64_t independent[8] = {};
  ASSERT_EQ(count_hmb_records_per_core(FixturePath().c_str(), independent, 8), 1035);
  std::string error;
  uint64_t ours[8] = {};
  for (const CaptureEvent& ev : ReadAll(FixturePath(), &error))
    if (ev.kind == CaptureKind::kRecord && ev.core < 8)
      ours[ev.core]++;
  for (int core = 0; core < 4; core++) {
    EXPECT_EQ(ours[core], independent[core]) << "core " << core;
    EXPECT_EQ(ours[core], kFixtureRecordsPerCore[core]) << "core " << core;
  }
}

TEST(Capture, TheMetadataPassDeliversExactlyTheStateAndDictionaryEvents) {
  std::string error;
  std::vector<std::pair<uint64_t, CaptureKind>> all, metadata;
  ASSERT_TRUE(StatusOk(ReadCapture(FixturePath(),
                                   [&all](const CaptureEvent& ev) {
                                     if (ev.kind == CaptureKind::kState ||
                                         ev.kind == CaptureKind::kDict)
                                       all.emplace_back(ev.ts, ev.kind);
                                     return true;
                                   }),
                       &error))
      << error;
  ASSERT_TRUE(StatusOk(ReadCapture(
                           FixturePath(),
                           [&metadata](const CaptureEvent& ev) {
                             metadata.emplace_back(ev.ts, ev.kind);
                             return true;
                           },
                           CaptureFilter::kMetadata),
                       &error))
      << error;
  EXPECT_GT(metadata.size(), 2u);
  EXPECT_EQ(metadata, all);
}

// What a pass delivers, comparable across passes.
std::vector<std::tuple<uint64_t, int, CaptureKind, uint64_t>> Pass(CaptureFile& file,
                                                                    CaptureFilter filter) {
  std::vector<std::tuple<uint64_t, int, CaptureKind, uint64_t>> out;
  std::string error;
  EXPECT_TRUE(StatusOk(file.Read(
                           [&out](const CaptureEvent& ev) {
                             out.emplace_back(ev.ts, ev.cpu, ev.kind, ev.seq);
                             return true;
                           },
                           filter),
                       &error))
      << error;
  return out;
}

// record-small.dat in file version 7 (testdata/record-small-v7.dat.license).
std::string V7FixturePath() {
  const std::string markers = MarkersFixturePath();
  return markers.substr(0, markers.rfind('/') + 1) + "record-small-v7.dat";
}

TEST(Capture, EveryPassOverOneOpenFileStartsAgainFromTheFirstEvent) {
  for (const std::string& path :
       {FixturePath(), MarkersFixturePath(), ClockFixturePath(), V7FixturePath()}) {
    std::string error;
    std::vector<std::tuple<uint64_t, int, CaptureKind, uint64_t>> fresh;
    for (const CaptureEvent& ev : ReadAll(path, &error))
      fresh.emplace_back(ev.ts, ev.cpu, ev.kind, ev.seq);
    ASSERT_TRUE(error.empty()) << error;
    CaptureFile file;
    ASSERT_TRUE(StatusOk(file.Open(path), &error)) << error;
    const auto metadata = Pass(file, CaptureFilter::kMetadata);
    const CaptureScan scan = file.scan();
    const auto first = Pass(file, CaptureFilter::kAll);
    const auto second = Pass(file, CaptureFilter::kAll);
    EXPECT_EQ(first, fresh) << path;
    EXPECT_EQ(second, fresh) << path;
    EXPECT_LT(metadata.size(), fresh.size());
    // The metadata pass counts what a full pass delivers, without decoding it.
    ASSERT_FALSE(fresh.empty());
    EXPECT_EQ(scan.events, fresh.size()) << path;
    EXPECT_EQ(scan.first_ts, std::get<0>(fresh.front()));
    EXPECT_EQ(scan.last_ts, std::get<0>(fresh.back()));
    EXPECT_EQ(file.scan().events, fresh.size());
  }
}

struct HostEvents {
  uint64_t setups = 0, completes = 0, ts_sum = 0;
  bool operator==(const HostEvents&) const = default;
};

int CountHostEvent(const hmb_nvme_host_event* ev, void* data) {
  auto* n = static_cast<HostEvents*>(data);
  (ev->kind == HMB_NVME_SETUP ? n->setups : n->completes)++;
  n->ts_sum += ev->ts;
  return 0;
}

// stat's readers share one open: the trace clocks and the host's nvme
// events read from it are those of a reader that opens the file itself,
// and its passes still start from the first event; in the page walk and
// in the reference walk (whose walks move libtracecmd's handles).
TEST(Capture, ReadersSharingAnOpenSeeWhatTheirOwnOpenSees) {
  for (const char* reference : {"0", "1"}) {
    ASSERT_EQ(setenv("HMBTRACE_REFERENCE_WALK", reference, 1), 0);
    for (const std::string& path : {CmdJoinFixturePath(), CmdJoinInstanceFixturePath(),
                                    MarkersFixturePath(), V7FixturePath()}) {
      std::string error;
      std::vector<std::tuple<uint64_t, int, CaptureKind, uint64_t>> fresh;
      for (const CaptureEvent& ev : ReadAll(path, &error))
        fresh.emplace_back(ev.ts, ev.cpu, ev.kind, ev.seq);
      ASSERT_TRUE(error.empty()) << error;
      CaptureClocks own, shared;
      ASSERT_TRUE(StatusOk(ReadCaptureClocks(path, &own), &error)) << error;
      HostEvents own_host, shared_host;
      uint64_t own_malformed = 0, shared_malformed = 0;
      hmb_nvme_host_source own_src{}, shared_src{};
      char err[256] = "";
      const int own_rc = hmb_nvme_host_read(path.c_str(), CountHostEvent, &own_host,
                                            &own_malformed, &own_src, err, sizeof(err));

      CaptureFile file;
      ASSERT_TRUE(StatusOk(file.Open(path), &error)) << error;
      EXPECT_EQ(Pass(file, CaptureFilter::kAll), fresh) << path;  // moves the handles
      ASSERT_TRUE(StatusOk(ReadCaptureClocks(file, &shared), &error)) << error;
      Result<hmb_tracecmd_file*> f = file.TracecmdFile();
      ASSERT_TRUE(f.ok()) << f.status().message();
      const int shared_rc = hmb_nvme_host_read_file(f.value(), CountHostEvent, &shared_host,
                                                    &shared_malformed, &shared_src, err,
                                                    sizeof(err));
      EXPECT_EQ(shared.top, own.top) << path;
      EXPECT_EQ(shared.hmb, own.hmb) << path;
      EXPECT_EQ(shared_rc, own_rc) << path;
      EXPECT_TRUE(shared_host == own_host) << path;
      EXPECT_EQ(shared_malformed, own_malformed) << path;
      EXPECT_STREQ(shared_src.instance, own_src.instance) << path;
      EXPECT_STREQ(shared_src.clock, own_src.clock) << path;
      EXPECT_EQ(Pass(file, CaptureFilter::kAll), fresh) << path << " reference " << reference;
    }
    // The join's fixtures have host commands, in the top buffer and in an instance.
    HostEvents n;
    uint64_t malformed = 0;
    char err[256] = "";
    ASSERT_EQ(hmb_nvme_host_read(CmdJoinInstanceFixturePath().c_str(), CountHostEvent, &n,
                                 &malformed, nullptr, err, sizeof(err)),
              0)
        << err;
    EXPECT_GT(n.setups, 0u);
  }
  unsetenv("HMBTRACE_REFERENCE_WALK");
}

// One other ftrace event as a reader of hmb_ftrace_read() sees it.
using FtraceSeen = std::tuple<uint64_t, int, int, std::string, std::string, std::string>;

int KeepFtraceEvent(const hmb_ftrace_event* ev, void* data) {
  std::string text(ev->buf ? std::string_view(ev->buf, ev->buf_len) : std::string_view());
  for (size_t i = 0; i < ev->nr_fields; i++) {
    const hmb_ftrace_field& f = ev->fields[i];
    text += std::string(" ") + f.name + "=" +
            (f.kind == HMB_FTRACE_STR ? std::string(f.str, f.str_len)
                                      : std::to_string(f.kind == HMB_FTRACE_INT ? f.i : f.u));
  }
  static_cast<std::vector<FtraceSeen>*>(data)->emplace_back(ev->ts, ev->cpu, ev->pid,
                                                           ev->system, ev->name, text);
  return 0;
}

std::vector<FtraceSeen> OtherFtraceEvents(const std::string& path, hmb_ftrace_info* info) {
  std::vector<FtraceSeen> seen;
  char err[256] = "";
  EXPECT_EQ(hmb_ftrace_read(path.c_str(), KeepFtraceEvent, &seen, info, err, sizeof(err)), 0)
      << path << ": " << err;
  return seen;
}

// Read by pages, only the buffers that hold other ftrace events are
// walked (none, or one: an instance's nvme events, the top buffer's
// markers): the events, their order and their counts are those of the
// reference walk over every buffer, from a reader's own open and from a
// CaptureFile's after a pass.
TEST(Capture, OtherFtraceEventsOfTheBuffersThatHoldThemAreEveryBuffersWalks) {
  size_t with_none = 0, with_some = 0;
  for (const std::string& path : {FixturePath(), MarkersFixturePath(), CmdJoinFixturePath(),
                                  CmdJoinInstanceFixturePath(), ClockFixturePath()}) {
    ASSERT_EQ(setenv("HMBTRACE_REFERENCE_WALK", "1", 1), 0);
    hmb_ftrace_info want_info{};
    const std::vector<FtraceSeen> want = OtherFtraceEvents(path, &want_info);
    ASSERT_EQ(setenv("HMBTRACE_REFERENCE_WALK", "0", 1), 0);
    hmb_ftrace_info own_info{};
    EXPECT_EQ(OtherFtraceEvents(path, &own_info), want) << path;
    EXPECT_EQ(own_info.events, want_info.events) << path;
    EXPECT_EQ(own_info.malformed, want_info.malformed) << path;
    EXPECT_EQ(own_info.fields_cut, want_info.fields_cut) << path;

    std::string error;
    CaptureFile file;
    ASSERT_TRUE(StatusOk(file.Open(path), &error)) << error;
    ASSERT_TRUE(StatusOk(file.Read([](const CaptureEvent&) { return true; }), &error)) << error;
    Result<hmb_tracecmd_file*> f = file.TracecmdFile();
    ASSERT_TRUE(f.ok()) << f.status().message();
    std::vector<FtraceSeen> shared;
    hmb_ftrace_info shared_info{};
    char err[256] = "";
    ASSERT_EQ(hmb_ftrace_read_file(f.value(), KeepFtraceEvent, &shared, &shared_info, err,
                                   sizeof(err)),
              0)
        << err;
    EXPECT_EQ(shared, want) << path;
    EXPECT_EQ(shared_info.events, want_info.events) << path;
    EXPECT_STREQ(shared_info.top_clock, want_info.top_clock) << path;
    EXPECT_STREQ(shared_info.hmb_clock, want_info.hmb_clock) << path;
    (want.empty() ? with_none : with_some)++;
  }
  unsetenv("HMBTRACE_REFERENCE_WALK");
  EXPECT_GT(with_none, 0u);
  EXPECT_GT(with_some, 0u);
}

TEST(Capture, APassStoppedEarlyDoesNotShortenTheNext) {
  std::string error;
  CaptureFile file;
  ASSERT_TRUE(StatusOk(file.Open(FixturePath()), &error)) << error;
  uint64_t n = 0;
  ASSERT_TRUE(StatusOk(file.Read([&n](const CaptureEvent&) { return ++n < 100; }), &error))
      << error;
  EXPECT_EQ(n, 100u);
  EXPECT_EQ(Pass(file, CaptureFilter::kAll).size(), ReadAll(FixturePath(), &error).size());
}

TEST(Capture, KernelSymbolsAreStillParsedForOtherCallersOfLibtraceevent) {
  // capture_c.c skips tep_parse_kallsyms() only while it opens a capture.
  std::string error;
  ASSERT_FALSE(ReadAll(FixturePath(), &error).empty()) << error;
  tep_handle* tep = tep_alloc();
  ASSERT_NE(tep, nullptr);
  ASSERT_EQ(tep_parse_kallsyms(tep,
                               "ffffffff81000000 T hmb_test_symbol\n"
                               "ffffffff81000100 T hmb_test_next\n"),
            0);
  const char* name = tep_find_function(tep, 0xffffffff81000010ull);
  EXPECT_STREQ(name ? name : "(none)", "hmb_test_symbol");
  tep_free(tep);
}

TEST(Capture, MissingFileIsAnErrorNamingTheFileAndWhy) {
  std::string error;
  EXPECT_FALSE(StatusOk(
      ReadCapture("/nonexistent/trace.dat", [](const CaptureEvent&) { return true; }), &error));
  EXPECT_EQ(error,
            "/nonexistent/trace.dat: No such file or directory; name the capture with -i FILE "
            "(default trace.dat), or record with `trace-cmd record -B hmb -e hmb`");
}

TEST(Capture, FileThatIsNotATraceIsAClearError) {
  TempFile garbage("garbage.dat", std::vector<uint8_t>(4096, 0x5a));
  std::string error;
  EXPECT_FALSE(
      StatusOk(ReadCapture(garbage.path(), [](const CaptureEvent&) { return true; }), &error));
  EXPECT_EQ(error, garbage.path() +
                       ": not a readable trace-cmd data file (truncated, corrupt, or not made by "
                       "trace-cmd record); copy it again, or record again with `trace-cmd record "
                       "-B hmb -e hmb`");
}

// Cut anywhere, the file gives either a clear error or the events before
// the cut; never a crash (the ASan build runs this too).
TEST(Capture, TruncatedFileGivesAnErrorOrFewerEventsNeverACrash) {
  const std::vector<uint8_t> whole = ReadBytes(FixturePath());
  ASSERT_GT(whole.size(), 90000u);
  bool saw_error = false;
  for (size_t cut :
       {size_t{0}, size_t{10}, size_t{100}, size_t{1000}, size_t{5000}, size_t{20000},
        size_t{40000}, size_t{60000}, size_t{70000}, size_t{90000}, whole.size() - 1}) {
    TempFile cut_file("cut.dat",
                      std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<long>(cut)));
    std::string error;
    uint64_t records = 0;
    const bool ok = StatusOk(ReadCapture(cut_file.path(),
                                         [&records](const CaptureEvent& ev) {
                                           records += ev.kind == CaptureKind::kRecord;
                                           return true;
                                         }),
                             &error);
    if (!ok) {
      saw_error = true;
      EXPECT_EQ(error.rfind(cut_file.path() + ": ", 0), 0u) << error;
    }
    EXPECT_LE(records, 1035u) << "cut at " << cut;
  }
  EXPECT_TRUE(saw_error);
}

// ---- Damaged captures: what the reader reports for each kind of damage ----

// The fixture's layout, taken from its bytes (trace-cmd.dat(5), version 6).
// The hmb instance's buffer is the file's last "flyrecord" section: for each
// of the 2 CPUs a u64 file offset and u64 size of a run of 4 KiB ring-buffer
// pages. A page starts with a u64 timestamp and a u64 commit, the bytes of
// events on it.
constexpr int kFixtureCpus = 2;
constexpr size_t kRingPage = 4096;
constexpr size_t kPageCommitAt = 8;
constexpr uint64_t kFixtureRecords = 1035;
constexpr uint64_t kFixtureDicts = 8;
// Event ids and field offsets of the fixture's formats
// (tests/data/hmb_record.format, hmb_dict.format).
constexpr uint16_t kRecordId = 1362;
constexpr size_t kRecordSeqAt = 8;
constexpr size_t kRecordCoreAt = 26;
constexpr size_t kRecordLenAt = 30;
constexpr size_t kRecordPayloadAt = 32;  // __data_loc u8[] payload
constexpr uint32_t kRecordDataStart = 36;
constexpr uint16_t kDictId = 1359;
constexpr size_t kDictChunkAt = 44;  // __data_loc u8[] chunk
constexpr uint32_t kDictDataStart = 48;

uint64_t Get(const std::vector<uint8_t>& b, size_t at, int size) {
  uint64_t v = 0;
  for (int i = size - 1; i >= 0; i--)
    v = v << 8 | b[at + static_cast<size_t>(i)];
  return v;
}

void Put(std::vector<uint8_t>& b, size_t at, int size, uint64_t v) {
  for (int i = 0; i < size; i++)
    b[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t DataLoc(uint32_t offset, uint32_t length) {
  return offset | length << 16;
}

// File offset of each ring-buffer page of `cpu`.
std::vector<size_t> RingPages(const std::vector<uint8_t>& b, int cpu) {
  static constexpr char kFly[] = "flyrecord";
  const auto it = std::find_end(b.begin(), b.end(), kFly, kFly + sizeof(kFly));
  EXPECT_NE(it, b.end());
  const size_t table = static_cast<size_t>(it - b.begin()) + sizeof(kFly);
  const size_t first = Get(b, table + 16 * static_cast<size_t>(cpu), 8);
  const size_t size = Get(b, table + 16 * static_cast<size_t>(cpu) + 8, 8);
  std::vector<size_t> pages;
  for (size_t off = first; off < first + size; off += kRingPage)
    pages.push_back(off);
  return pages;
}

// Where the events with `id` start in [from, to) of the file, found by their
// content: the event id, then at `loc_at` a __data_loc word as the kernel
// writes it (offset `data_start`; for hmb_record, the length in len).
std::vector<size_t> FindEvents(const std::vector<uint8_t>& b,
                               uint16_t id,
                               size_t from = 8,
                               size_t to = SIZE_MAX) {
  const size_t loc_at = id == kRecordId ? kRecordPayloadAt : kDictChunkAt;
  const uint32_t data_start = id == kRecordId ? kRecordDataStart : kDictDataStart;
  std::vector<size_t> at;
  for (size_t i = from; i < std::min(to, b.size() - loc_at - 4); i++) {
    if (Get(b, i, 2) != id)
      continue;
    const uint64_t loc = Get(b, i + loc_at, 4);
    if ((loc & 0xffff) != data_start)
      continue;
    if (id == kRecordId && loc >> 16 != Get(b, i + kRecordLenAt, 2))
      continue;
    at.push_back(i);
  }
  return at;
}

// The length of the event data at `event_at`, from the ring-buffer event
// header before it: type_len 1..28 counts 4-byte words (true of every
// hmb_record of the fixture).
uint32_t SmallEventSize(const std::vector<uint8_t>& b, size_t event_at) {
  const uint32_t type_len = static_cast<uint32_t>(Get(b, event_at - 4, 4) & 31);
  EXPECT_GE(type_len, 1u);
  EXPECT_LE(type_len, 28u);
  return type_len * 4;
}

// Every field of an event, its bytes included: equal strings, equal events.
std::string Describe(const CaptureEvent& ev) {
  std::ostringstream out;
  out << static_cast<int>(ev.kind) << " ts=" << ev.ts << " cpu=" << ev.cpu
      << " missed=" << ev.missed_events << " dev=" << ev.dev << " core=" << ev.core
      << " seq=" << ev.seq << " fw_ts=" << ev.fw_ts << " id=" << ev.event_id << " len=" << ev.len
      << " count=" << ev.count << " at=" << ev.at_seq << " reason=" << int{ev.reason}
      << " hz=" << ev.clock_hz << " gen=" << ev.producer_gen << " cores=" << ev.nr_cores
      << " state=" << int{ev.state} << " build=" << Hex(ev.build_id)
      << " name=" << Hex({reinterpret_cast<const uint8_t*>(ev.name.data()), ev.name.size()})
      << " total=" << ev.total_len << " off=" << ev.offset << " data=" << Hex(ev.data)
      << " malformed=" << ev.malformed_event << ":" << ev.malformed_reason;
  return out.str();
}

// What the reader reported for one file.
struct Outcome {
  std::string path;  // of the damaged copy, as messages name it
  bool ok = false;
  std::string error;
  uint64_t records = 0;
  uint64_t dicts = 0;
  uint64_t malformed = 0;
  uint64_t other = 0;
  // Events that are no event of the fixture: garbage, unless the damage
  // was to their own bytes.
  uint64_t unlike_fixture = 0;
  uint64_t records_as_in_fixture = 0;
  // Events handed out with bytes no record can hold: data longer than a
  // ring-buffer page, or data with a malformed event.
  uint64_t out_of_record = 0;
  // hmb_record events whose payload is not their len bytes.
  uint64_t payload_not_len = 0;
  std::vector<std::string> malformed_why;                        // "event: reason"
  std::vector<std::pair<uint16_t, uint64_t>> malformed_records;  // core, seq
  std::vector<uint64_t> record_data_sizes;
};

const std::set<std::string>& FixtureEvents() {
  static const std::set<std::string> events = [] {
    std::set<std::string> out;
    std::string error;
    EXPECT_TRUE(StatusOk(ReadCapture(FixturePath(),
                                     [&out](const CaptureEvent& ev) {
                                       out.insert(Describe(ev));
                                       return true;
                                     }),
                         &error))
        << error;
    return out;
  }();
  return events;
}

Outcome ReadDamaged(const std::vector<uint8_t>& bytes) {
  const std::set<std::string>& fixture = FixtureEvents();
  TempFile file("damaged.dat", bytes);
  Outcome o;
  o.path = file.path();
  o.ok =
      StatusOk(ReadCapture(file.path(),
                           [&](const CaptureEvent& ev) {
                             const bool known = fixture.contains(Describe(ev));
                             o.unlike_fixture += !known;
                             o.out_of_record += ev.data.size() > kRingPage;
                             switch (ev.kind) {
                               case CaptureKind::kRecord:
                                 o.records++;
                                 o.records_as_in_fixture += known;
                                 o.payload_not_len += ev.data.size() != ev.len;
                                 o.record_data_sizes.push_back(ev.data.size());
                                 break;
                               case CaptureKind::kDict:
                                 o.dicts++;
                                 break;
                               case CaptureKind::kMalformed:
                                 o.malformed++;
                                 o.out_of_record += !ev.data.empty();
                                 o.malformed_why.push_back(std::string(ev.malformed_event) + ": " +
                                                           std::string(ev.malformed_reason));
                                 if (ev.malformed_event == "hmb_record")
                                   o.malformed_records.emplace_back(ev.core, ev.seq);
                                 break;
                               default:
                                 o.other++;
                                 break;
                             }
                             return true;
                           }),
               &o.error);
  if (o.ok) {
    EXPECT_EQ(o.error, "");
  }
  return o;
}

std::string NotReadable(const std::string& path) {
  return path +
         ": not a readable trace-cmd data file (truncated, corrupt, or not made by trace-cmd "
         "record); copy it again, or record again with `trace-cmd record -B hmb -e hmb`";
}

TEST(Capture, FixtureLayoutIsFoundInItsBytes) {
  const std::vector<uint8_t> bytes = ReadBytes(FixturePath());
  EXPECT_EQ(FindEvents(bytes, kRecordId).size(), kFixtureRecords);
  EXPECT_EQ(FindEvents(bytes, kDictId).size(), kFixtureDicts);
  uint64_t in_pages = 0;
  for (int cpu = 0; cpu < kFixtureCpus; cpu++) {
    const std::vector<size_t> pages = RingPages(bytes, cpu);
    EXPECT_EQ(pages.size(), 9u) << "cpu " << cpu;
    if (!pages.empty())
      in_pages += FindEvents(bytes, kRecordId, pages.front(), pages.back() + kRingPage).size();
  }
  EXPECT_EQ(in_pages, kFixtureRecords);
  const Outcome o = ReadDamaged(bytes);
  EXPECT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.records, kFixtureRecords);
  EXPECT_EQ(o.unlike_fixture, 0u);
  EXPECT_EQ(o.malformed + o.out_of_record + o.payload_not_len, 0u);
}

// Which walk a read takes (capture/tracecmd_walk_c.h): libtracecmd's
// iteration (the reference) or the capture's pages, while it lives.
class WalkChoice {
 public:
  explicit WalkChoice(bool reference) {
    if (reference)
      setenv("HMBTRACE_REFERENCE_WALK", "1", 1);
    else
      unsetenv("HMBTRACE_REFERENCE_WALK");
  }
  ~WalkChoice() { unsetenv("HMBTRACE_REFERENCE_WALK"); }
  WalkChoice(const WalkChoice&) = delete;
  WalkChoice& operator=(const WalkChoice&) = delete;
};

// One damaged page: its events, or the rest of its CPU's, are gone, or the
// file is refused with a message; every event that arrives is the
// fixture's own, unchanged. Both walks: the page walk skips a bad page
// where libtracecmd stops reading its CPU.
TEST(Capture, DamagedRingBufferPageLosesItsEventsAndNothingElse) {
  const std::vector<uint8_t> fixture = ReadBytes(FixturePath());
  const std::vector<size_t> cpu0 = RingPages(fixture, 0), cpu1 = RingPages(fixture, 1);
  ASSERT_EQ(cpu0.size(), 9u);
  ASSERT_EQ(cpu1.size(), 9u);
  const auto records_in = [&fixture](size_t from, size_t to) {
    return static_cast<uint64_t>(FindEvents(fixture, kRecordId, from, to).size());
  };
  struct Case {
    const char* what;
    size_t page;
    void (*damage)(std::vector<uint8_t>&, size_t page);
    // Records of [page, lost_to) are gone; 0: the file is refused. By
    // libtracecmd's walk, and by the page walk.
    size_t lost_to;
    size_t lost_to_by_pages;
  } cases[] = {
      {"commit 0 on a middle page", cpu0[2],
       [](std::vector<uint8_t>& b, size_t p) { Put(b, p + kPageCommitAt, 8, 0); },
       cpu0[2] + kRingPage, cpu0[2] + kRingPage},
      {"events of a middle page zeroed", cpu1[3],
       [](std::vector<uint8_t>& b, size_t p) {
         std::fill_n(b.begin() + static_cast<long>(p + 16), kRingPage - 16, 0);
       },
       cpu1[3] + kRingPage, cpu1[3] + kRingPage},
      // libtracecmd stops reading a CPU at a page that claims more than a
      // page: the rest of that CPU is lost, the other CPU is not. The page
      // walk loses that page only.
      {"commit past the page on a middle page", cpu0[2],
       [](std::vector<uint8_t>& b, size_t p) { Put(b, p + kPageCommitAt, 8, 0xffff); },
       cpu0.back() + kRingPage, cpu0[2] + kRingPage},
      {"commit past the page on the last page", cpu1.back(),
       [](std::vector<uint8_t>& b, size_t p) { Put(b, p + kPageCommitAt, 8, 0xffff); },
       cpu1.back() + kRingPage, cpu1.back() + kRingPage},
      // ... and cannot open a file whose CPU's first page is bad.
      {"commit past the page on the first page", cpu1.front(),
       [](std::vector<uint8_t>& b, size_t p) { Put(b, p + kPageCommitAt, 8, 0xffff); }, 0, 0},
  };
  for (const bool reference : {true, false}) {
    const WalkChoice walk(reference);
    for (const Case& k : cases) {
      SCOPED_TRACE(std::string(k.what) + (reference ? ", libtracecmd's walk" : ", page walk"));
      std::vector<uint8_t> bytes = fixture;
      k.damage(bytes, k.page);
      const Outcome o = ReadDamaged(bytes);
      const size_t lost_to = reference ? k.lost_to : k.lost_to_by_pages;
      if (!lost_to) {
        EXPECT_FALSE(o.ok);
        EXPECT_EQ(o.error, NotReadable(o.path));
        EXPECT_EQ(o.records + o.dicts + o.malformed + o.other, 0u);
        continue;
      }
      const uint64_t lost = records_in(k.page, lost_to);
      ASSERT_GT(lost, 0u);
      EXPECT_TRUE(o.ok) << o.error;
      EXPECT_EQ(o.records, kFixtureRecords - lost);
      EXPECT_EQ(o.unlike_fixture, 0u);
      EXPECT_EQ(o.malformed, 0u);
      EXPECT_EQ(o.out_of_record + o.payload_not_len, 0u);
    }
  }
}

// Bytes scribbled all over the event data. What the reader makes of it is
// pinned: the numbers are what it reads from this file, by libtracecmd's
// walk (Debian 12's libtracecmd) and by the page walk (which stops a page
// at its first bad event header where kbuffer reads on), so a reader that
// gives up, skips what it could read, or lets a malformed record through
// changes them.
TEST(Capture, CorruptRingBufferPagesNeverCrash) {
  std::vector<uint8_t> bytes = ReadBytes(FixturePath());
  const size_t size = bytes.size();
  uint32_t x = 12345;
  for (size_t i = size - 60000; i < size; i += 97) {
    x = x * 1103515245u + 12345u;
    bytes[i] = static_cast<uint8_t>(x >> 16);
  }
  struct Expected {
    uint64_t records, malformed, payload_outside, fw_ts_missing, dicts_other, as_in_fixture,
        payload_not_len;
  };
  // Every hmb_record the reader cannot read is reported, none dropped
  // (by libtracecmd's walk: 31 with a payload outside the record, 1 too
  // short for fw_ts); records with a scribbled byte arrive with it (in 17
  // the byte is in len); the others are the fixture's.
  const Expected by_tracecmd{833, 32, 31, 1, 10, 451, 17};
  // The page walk drops the 2 records and 1 other event that kbuffer reads
  // from behind a bad header; all the rest as libtracecmd's.
  const Expected by_pages{831, 32, 31, 1, 9, 451, 17};
  for (const bool reference : {true, false}) {
    SCOPED_TRACE(reference ? "libtracecmd's walk" : "page walk");
    const WalkChoice walk(reference);
    const Expected& e = reference ? by_tracecmd : by_pages;
    const Outcome o = ReadDamaged(bytes);
    EXPECT_TRUE(o.ok) << o.error;
    EXPECT_EQ(o.records, e.records);
    EXPECT_EQ(o.malformed, e.malformed);
    EXPECT_EQ(static_cast<uint64_t>(std::count(o.malformed_why.begin(), o.malformed_why.end(),
                                               "hmb_record: payload outside the record")),
              e.payload_outside);
    EXPECT_EQ(
        static_cast<uint64_t>(std::count(o.malformed_why.begin(), o.malformed_why.end(),
                                         "hmb_record: field fw_ts missing or out of the record")),
        e.fw_ts_missing);
    EXPECT_EQ(o.dicts + o.other, e.dicts_other);
    EXPECT_EQ(o.records_as_in_fixture, e.as_in_fixture);
    EXPECT_EQ(o.payload_not_len, e.payload_not_len);
    EXPECT_EQ(o.out_of_record, 0u);
  }
}

// ---- Records whose __data_loc word points outside the record ----

// Each is reported as malformed, by event and reason, and hands out none of
// its bytes; every other event arrives. The records are the fixture's own,
// with the word rewritten in the file. (libtracecmd maps the file's pages,
// so ASan cannot see a read past a record inside a page: the tests count
// events handed out with more bytes than their record holds instead.)
TEST(Capture, PayloadPastTheRecordIsReportedMalformedAndNotRead) {
  std::vector<uint8_t> bytes = ReadBytes(FixturePath());
  const std::vector<size_t> at = FindEvents(bytes, kRecordId);
  ASSERT_EQ(at.size(), kFixtureRecords);
  // Three records far apart in the file, each lying another way.
  const size_t victims[] = {at[3], at[500], at[1000]};
  const uint32_t size0 = SmallEventSize(bytes, victims[0]);
  const uint32_t size1 = SmallEventSize(bytes, victims[1]);
  // One byte longer than the record.
  Put(bytes, victims[0] + kRecordPayloadAt, 4,
      DataLoc(kRecordDataStart, size0 - kRecordDataStart + 1));
  // Starting at the record's end.
  Put(bytes, victims[1] + kRecordPayloadAt, 4, DataLoc(size1, 1));
  // The largest length the word can say.
  Put(bytes, victims[2] + kRecordPayloadAt, 4, DataLoc(kRecordDataStart, 0xffff));

  const Outcome o = ReadDamaged(bytes);
  EXPECT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.malformed_why, std::vector<std::string>(3, "hmb_record: payload outside the record"));
  std::vector<std::pair<uint16_t, uint64_t>> expect;
  for (size_t v : victims)
    expect.emplace_back(Get(bytes, v + kRecordCoreAt, 2), Get(bytes, v + kRecordSeqAt, 8));
  std::vector<std::pair<uint16_t, uint64_t>> got = o.malformed_records;
  std::sort(expect.begin(), expect.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expect);
  EXPECT_EQ(o.records, kFixtureRecords - 3);
  EXPECT_EQ(o.dicts, kFixtureDicts);
  EXPECT_EQ(o.unlike_fixture, 3u);  // the three malformed ones
  EXPECT_EQ(o.out_of_record + o.payload_not_len, 0u);
}

// The bound is the record's end, not less: a payload that runs to the
// record's last byte (here over the padding after it) is read.
TEST(Capture, PayloadEndingAtTheRecordsLastByteIsRead) {
  std::vector<uint8_t> bytes = ReadBytes(FixturePath());
  const std::vector<size_t> at = FindEvents(bytes, kRecordId);
  ASSERT_EQ(at.size(), kFixtureRecords);
  const uint32_t size = SmallEventSize(bytes, at[3]);
  ASSERT_GT(size - kRecordDataStart, Get(bytes, at[3] + kRecordLenAt, 2));  // has padding
  Put(bytes, at[3] + kRecordPayloadAt, 4, DataLoc(kRecordDataStart, size - kRecordDataStart));

  const Outcome o = ReadDamaged(bytes);
  EXPECT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.malformed, 0u);
  EXPECT_EQ(o.records, kFixtureRecords);
  EXPECT_EQ(
      std::count(o.record_data_sizes.begin(), o.record_data_sizes.end(), size - kRecordDataStart),
      1);
  EXPECT_EQ(o.payload_not_len, 1u);  // that record: its data is not its len bytes
  EXPECT_EQ(o.out_of_record, 0u);
}

TEST(Capture, DictionaryChunkPastTheRecordIsReportedMalformedAndNotRead) {
  std::vector<uint8_t> bytes = ReadBytes(FixturePath());
  const std::vector<size_t> at = FindEvents(bytes, kDictId);
  ASSERT_EQ(at.size(), kFixtureDicts);
  // The first chunk, 1024 bytes, ends its record (whose length is a
  // multiple of 4): 8 bytes more are past the end.
  const uint32_t chunk = static_cast<uint32_t>(Get(bytes, at[0] + kDictChunkAt, 4) >> 16);
  ASSERT_EQ(chunk, 1024u);
  Put(bytes, at[0] + kDictChunkAt, 4, DataLoc(kDictDataStart, chunk + 8));
  // Another starts far past its record.
  Put(bytes, at[5] + kDictChunkAt, 4, DataLoc(0xfff0, 8));

  const Outcome o = ReadDamaged(bytes);
  EXPECT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.malformed_why, std::vector<std::string>(2, "hmb_dict: chunk outside the record"));
  EXPECT_EQ(o.dicts, kFixtureDicts - 2);
  EXPECT_EQ(o.records, kFixtureRecords);
  EXPECT_EQ(o.out_of_record + o.payload_not_len, 0u);
}

TEST(Capture, HostTimeRoundsToTheMicrosecondLikeTraceCmd) {
  EXPECT_EQ(HostTime(7535708500), "7.535709");
  EXPECT_EQ(HostTime(7535708499), "7.535708");
  EXPECT_EQ(HostTime(999999500), "1.000000");
}

TEST(Capture, TextFromTheFileIsPrintedEscapedAndValidUtf8) {
  EXPECT_EQ(Printable("0000:\x8b"
                      "0:02.0"),
            "0000:\\x8b0:02.0");
  EXPECT_EQ(Printable("a\\b\tc\n"), "a\\\\b\\x09c");
  EXPECT_EQ(Printable("marker\n"), "marker");
}

TEST(Capture, ClockFitsAreReadWithEveryField) {
  std::string error;
  const std::vector<CaptureEvent> events = ReadAll(ClockFixturePath(), &error);
  ASSERT_TRUE(error.empty()) << error;
  std::vector<CaptureEvent> clocks;
  for (const CaptureEvent& ev : events) {
    EXPECT_TRUE(ev.clock_format);  // the capture's formats have hmb_clock
    if (ev.kind == CaptureKind::kClock)
      clocks.push_back(ev);
  }
  ASSERT_EQ(clocks.size(), 6u);  // 3 fits, each on both CPUs
  // make_clock_capture.py: gen 1's firmware clock reads 9 s at host 1 s and
  // runs 50 ppm fast; its fit's reference sample is at host 0.5 s.
  const CaptureEvent& a = clocks[0];
  EXPECT_EQ(a.ts, 1000200000u);
  EXPECT_EQ(a.dev, 0u);
  EXPECT_EQ(a.producer_gen, 1u);
  EXPECT_EQ(a.clock.host_ref, 500000000u);
  EXPECT_EQ(a.clock.tick_ref, 8499975000u);
  EXPECT_EQ(a.clock.mult, 4294752558u);
  EXPECT_EQ(a.clock.slope_err, 4295u);
  EXPECT_EQ(a.clock.half_gap, 50000000u);
  EXPECT_EQ(a.clock.err_ns, 2000u);
  EXPECT_EQ(a.clock.rtt_min_ns, 3000u);
  EXPECT_EQ(a.clock.samples, 16u);
  EXPECT_EQ(a.clock_flags, 0u);
  EXPECT_EQ(clocks[2].clock_flags, 1u);  // stale
  EXPECT_EQ(clocks[4].producer_gen, 2u);
  EXPECT_EQ(clocks[4].clock.samples, 4u);
  // A capture of a module before clock fits says so on every event.
  for (const CaptureEvent& ev : ReadAll(FixturePath(), &error))
    EXPECT_FALSE(ev.clock_format);
}

// The metadata pass scans each CPU and sorts what it keeps by time, which
// is the merged walk's order only while each CPU's time goes forward; a
// page whose time goes back (a trace clock set back while recording) must
// give the merged walk's order still. Every page after a CPU's first set
// before that first page's time, in turn.
TEST(Capture, TheMetadataPassOfACpuWhoseTimeGoesBackIsInTheMergedWalksOrder) {
  const std::vector<uint8_t> fixture = ReadBytes(FixturePath());
  using Meta = std::vector<std::tuple<uint64_t, int, CaptureKind>>;
  const auto read = [](const std::string& path, CaptureFilter filter) {
    Meta out;
    std::string error;
    EXPECT_TRUE(StatusOk(ReadCapture(
                             path,
                             [&out](const CaptureEvent& ev) {
                               if (ev.kind == CaptureKind::kState ||
                                   ev.kind == CaptureKind::kDict)
                                 out.emplace_back(ev.ts, ev.cpu, ev.kind);
                               return true;
                             },
                             filter),
                         &error))
        << error;
    return out;
  };
  const WalkChoice walk(false);
  size_t out_of_time_order = 0;
  for (int cpu = 0; cpu < kFixtureCpus; cpu++) {
    const std::vector<size_t> pages = RingPages(fixture, cpu);
    for (size_t i = 1; i < pages.size(); i++) {
      SCOPED_TRACE("cpu " + std::to_string(cpu) + " page " + std::to_string(i));
      std::vector<uint8_t> bytes = fixture;
      Put(bytes, pages[i], 8, Get(bytes, pages[0], 8) - 1);
      TempFile file("back.dat", bytes);
      const Meta all = read(file.path(), CaptureFilter::kAll);
      EXPECT_EQ(read(file.path(), CaptureFilter::kMetadata), all);
      out_of_time_order += !std::is_sorted(all.begin(), all.end());
    }
  }
  EXPECT_GT(out_of_time_order, 0u);  // the merged walk's order is not the sorted one
}

}  // namespace
}  // namespace hmbtrace
