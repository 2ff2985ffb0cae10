// SPDX-License-Identifier: GPL-2.0-only
#include "live/record.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "join/nvme_capture.h"
#include "live/instance.h"
#include "live/stop_signals.h"
#include "retime/retime.h"

namespace hmbtrace {
namespace {

// When we own the terminal, trace-cmd's group gets it for the recording
// (Ctrl-C then reaches trace-cmd and COMMAND directly, and COMMAND can read
// the terminal), and it comes back at the end. SIGTTOU must be blocked.
class TerminalScope {
 public:
  TerminalScope() : ours_(isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) {}
  ~TerminalScope() {
    if (given_)
      tcsetpgrp(STDIN_FILENO, getpgrp());
  }
  TerminalScope(const TerminalScope&) = delete;
  TerminalScope& operator=(const TerminalScope&) = delete;

  bool ours() const { return ours_; }
  void GiveTo(pid_t group) {
    if (ours_ && tcsetpgrp(STDIN_FILENO, group) == 0)
      given_ = true;
  }

 private:
  bool ours_;
  bool given_ = false;
};

std::string DurationText(double seconds) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), seconds, std::chars_format::fixed);
  return r.ec == std::errc() ? std::string(buf, r.ptr) : std::to_string(seconds);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string WaitStatusText(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) +
           (name ? std::string(" (SIG") + name + ")" : std::string());
  }
  return "ended with wait status " + std::to_string(status);
}

// Runs argv (argv[0] a path) in its own process group and waits for it.
// An error if it could not be started or did not exit 0.
Status RunTraceCmd(const std::vector<std::string>& args) {
  // Everything the child needs is allocated before the fork.
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string exec_failed = "hmbtrace-cmd record: cannot run " + args[0] + ": ";

  // SIGINT/SIGTERM are forwarded to trace-cmd's group while it runs, as a
  // terminal's Ctrl-C would to a plain `trace-cmd record` (trace-cmd, its
  // per-CPU recorders and COMMAND); blocked from before the fork until
  // that group is known.
  SignalScope signals({.block_until_ready = true});
  TerminalScope terminal;
  const pid_t pid = fork();
  if (pid < 0) {
    return Status::Error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    if (terminal.ours())
      tcsetpgrp(STDIN_FILENO, getpid());  // SIGTTOU is blocked: allowed
    signals.RestoreInChild();
    execv(argv[0], argv.data());
    const char* why = std::strerror(errno);
    [[maybe_unused]] ssize_t n = write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    n = write(STDERR_FILENO, why, std::strlen(why));
    n = write(STDERR_FILENO, "\n", 1);
    _exit(127);
  }
  // Both sides set the group, so that it exists whichever runs first.
  setpgid(pid, pid);
  terminal.GiveTo(pid);
  SignalScope::ForwardTo(pid);
  signals.UnblockStop();  // a signal that came meanwhile is forwarded now

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return Status::Error(std::string("waiting for trace-cmd: ") + std::strerror(errno));
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return {};
  return Status::Error("trace-cmd " + WaitStatusText(status) + " (its messages are above)");
}

}  // namespace

std::optional<std::string> FindProgram(const std::string& name, const std::string& path) {
  if (name.empty())
    return std::nullopt;
  if (name.find('/') != std::string::npos)
    return IsExecutableFile(name) ? std::optional<std::string>(name) : std::nullopt;
  size_t start = 0;
  for (;;) {
    const size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutableFile(candidate))
      return candidate;
    if (colon == std::string::npos)
      return std::nullopt;
    start = colon + 1;
  }
}

Result<std::string> CheckRecordPreconditions(const RecordOptions& options,
                                             const std::string& path_env) {
  if (!ModuleLoaded(options.sysfs_dir))
    return Status::Error(NotLoadedMessage(options.sysfs_dir));
  if (!TracefsMounted(options.tracefs_dir))
    return Status::Error(NoTracefsMessage(options.tracefs_dir));
  if (!InstanceExists(options.tracefs_dir))
    return Status::Error(NoInstanceMessage(options.tracefs_dir));
  const std::string name = options.trace_cmd.empty() ? "trace-cmd" : options.trace_cmd;
  const std::optional<std::string> found = FindProgram(name, path_env);
  if (!found)
    return Status::Error(
        (name.find('/') != std::string::npos ? name + " is not an executable file"
                                             : name + " not found in PATH") +
        " (install trace-cmd: apt-get install trace-cmd; or name it with --trace-cmd PATH)");
  return *found;
}

std::vector<std::string> TraceCmdArgv(const std::string& trace_cmd, const RecordOptions& options) {
  std::vector<std::string> argv = {trace_cmd, "record"};
  if (options.nvme)
    for (std::string& a : NvmeHostEventArgs()) {
      // NvmeHostEventArgs() puts the top buffer on "local": -C local.
      if (a == "local" && !options.clock.empty())
        a = options.clock;
      argv.push_back(std::move(a));
    }
  argv.insert(argv.end(), {"-B", "hmb"});
  if (!options.clock.empty())
    argv.insert(argv.end(), {"-C", options.clock});
  argv.insert(argv.end(), {"-e", "hmb", "-o", TraceCmdOutput(options)});
  if (!options.command.empty()) {
    argv.insert(argv.end(), options.command.begin(), options.command.end());
  } else if (options.duration > 0) {
    argv.push_back("sleep");
    argv.push_back(DurationText(options.duration));
  }
  return argv;
}

std::string RecordSummary(const std::string& file, const StatCollector& stat) {
  uint64_t lost = 0;
  for (const auto& [key, cs] : stat.cores())
    lost += cs.lost_total();
  std::string out = "hmbtrace-cmd record: " + file + ": " + std::to_string(stat.records()) +
                    " records, " + std::to_string(lost) + " lost, " +
                    std::to_string(stat.hmb_events()) + " hmb events\n";
  for (const auto& [key, cs] : stat.cores()) {
    out += "  dev " + std::to_string(key.first) + " core " + std::to_string(key.second) + ": " +
           std::to_string(cs.records) + " records";
    if (cs.records)
      out += " (seq " + std::to_string(cs.first_seq) + ".." + std::to_string(cs.last_seq) + ")";
    out += ", lost " + std::to_string(cs.lost_total());
    std::string reasons;
    for (size_t r = 0; r <= kLostReasonCount; r++) {
      if (cs.lost[r])
        reasons += (reasons.empty() ? "" : ", ") +
                   std::string(r < kLostReasonCount ? LostReasonName(static_cast<uint8_t>(r))
                                                    : "unknown reason") +
                   " " + std::to_string(cs.lost[r]);
    }
    if (!reasons.empty())
      out += " (" + reasons + ")";
    if (!cs.seq_agrees())
      out += "; the sequence numbers disagree with hmb_lost (see hmbtrace-cmd stat)";
    out += "\n";
  }
  out += "decode with: hmbtrace-cmd report -i " + file + "\n";
  return out;
}

std::string TraceCmdOutput(const RecordOptions& options) {
  return options.retime ? options.output + ".drain-time" : options.output;
}

int RunRecord(const RecordOptions& options) {
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "hmbtrace-cmd record: %s\n", msg.c_str());
    return 1;
  };
  const char* path_env = std::getenv("PATH");
  const Result<std::string> trace_cmd =
      CheckRecordPreconditions(options, path_env ? path_env : "/usr/bin:/bin");
  if (!trace_cmd.ok())
    return fail(trace_cmd.message());
  RecordOptions run = options;
  if (run.nvme && !NvmeHostEventsPresent(run.tracefs_dir)) {
    run.nvme = false;
    std::fputs(
        "hmbtrace-cmd record: no nvme events in tracefs (nvme driver not loaded): "
        "recording without the host side of the command join\n",
        stderr);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (Status s = RunTraceCmd(TraceCmdArgv(trace_cmd.value(), run)); !s.ok())
    return fail(s.message());
  if (run.retime) {
    // Firmware records at their firmware time for every reader of the file.
    RetimeOptions retime;
    retime.input = TraceCmdOutput(run);
    retime.output = run.output;
    retime.quiet = true;
    RetimeSummary retimed;
    if (Status s = Retime(retime, &retimed); s.ok()) {
      std::remove(retime.input.c_str());
    } else if (retimed.no_clock_fits) {
      // A module or device without clock sync: nothing to retime to.
      if (std::rename(retime.input.c_str(), run.output.c_str()) != 0)
        return fail(run.output + ": " + std::strerror(errno) + " (trace-cmd's capture is " +
                    retime.input + ")");
      if (!retimed.clock_problem.empty())
        std::fprintf(stderr, "hmbtrace-cmd record: %s: %s keeps the records at their drain time\n",
                     retimed.clock_problem.c_str(), run.output.c_str());
      else
        std::fprintf(stderr,
                     "hmbtrace-cmd record: the capture has no clock fits (no control channel): "
                     "%s keeps the records at their drain time\n",
                     run.output.c_str());
    } else {
      return fail(s.message() + " (trace-cmd's capture is kept as " + retime.input +
                  "; hmbtrace-cmd report reads it as it is)");
    }
    if (retimed.not_converted)
      std::fprintf(stderr,
                   "hmbtrace-cmd record: %llu of %llu records had no clock fit and stay at their "
                   "drain time (hmbtrace-cmd retime lists them)\n",
                   static_cast<unsigned long long>(retimed.not_converted),
                   static_cast<unsigned long long>(retimed.records));
  }

  DictionaryStore dicts;
  StatCollector stat(&dicts);
  if (Status s = CollectStat(options.output, &dicts, &stat); !s.ok())
    return fail(s.message());
  if (stat.hmb_events() == 0)
    return fail(options.output +
                ": trace-cmd recorded no hmb events (is a trace area attached and producing? "
                "see hmbtrace-cmd status)");
  std::fputs(RecordSummary(options.output, stat).c_str(), stderr);
  return 0;
}

}  // namespace hmbtrace
