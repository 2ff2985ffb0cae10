#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The three decoders of hmbtrace print the same text for the same record.

Inputs, all from one firmware run (the decoders scenario):
  --plugin  trace-cmd report of the guest's capture with plugin_hmb.so
  --cmd     hmbtrace-cmd report of the same capture
  --read    hmb-read --records, read from the area itself on the host
  --truth   hmb-fwsim's truth (the builds of each producer generation)

A record is named by (dev, core, seq, fw_ts): sequence numbers restart at a
reset, firmware timestamps do not repeat. Each decoder prints it as
"dev=D core=C seq=S fw_ts=T <decoded>", <decoded> being "name: text" or,
when the decoder has no dictionary for it, "event_id=N ...".

Checks:
  - the plugin and hmbtrace-cmd see the same records (the same capture);
  - hmbtrace-cmd decodes every record (it reads the capture twice);
  - every record the plugin decodes reads exactly as hmbtrace-cmd prints it;
  - the plugin (one pass) leaves a record undecoded only before the
    dictionary of its generation is complete in the capture;
  - every record that hmb-read and hmbtrace-cmd both have reads the same,
    and they have records of every build in common.
Exit status 0 when all hold, 1 otherwise (hmbtest.check).
"""
import json
import re
import sys

from hmbtest.check import Failures, finish, parser

RECORD_RE = re.compile(r"dev=(\d+) core=(\d+) seq=(\d+) fw_ts=(\d+) (.*)$")
# trace-cmd report keeps the plugin's trailing notes; hmbtrace-cmd has its own.
SUFFIX_RE = re.compile(r" (\[payload cut: .*\]|\(len \d+, \d+ bytes captured\))$")
# The converted firmware time (plugin and hmbtrace-cmd report) and report's
# placement note: hmb-read has neither (it reads the area, not a capture).
FWTIME_RE = re.compile(r" fw_time=(\S+ \u00b1\S+( \(stale fit\))?|\? \([^)]*\))")
PLACED_RE = re.compile(r" \[placed late by [^\]]*\]")


def parse(path, only=None):
    """(records: key -> decoded text, order: keys in file order,
    complete: producer_gen -> how many records came before the plugin said
    that generation's dictionary is complete, dups: keys seen twice)."""
    records, order, complete, dups = {}, [], {}, 0
    with open(path, errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if "dictionary complete" in line:
                g = re.search(r"producer_gen=(\d+)", line)
                if g:
                    complete.setdefault(int(g.group(1)), len(order))
            if only and only not in line:
                continue
            m = RECORD_RE.search(line)
            if not m:
                continue
            key = tuple(int(x) for x in m.groups()[:4])
            text = SUFFIX_RE.sub("", PLACED_RE.sub("", FWTIME_RE.sub("", m.group(5))))
            if key in records:
                dups += 1
            records[key] = text
            order.append(key)
    return records, order, complete, dups


def decoded(text):
    return not text.startswith("event_id=")


def main():
    ap = parser(__doc__)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--cmd", required=True)
    ap.add_argument("--read", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--plugin-decodes-all", action="store_true",
                    help="the capture began before the firmware's first record: the module "
                         "puts its metadata before the first record after a quiet spell, so "
                         "the plugin must decode every record")
    a = ap.parse_args()

    Failures.verbose = True  # the passes are part of the record
    F = Failures()
    check = F.check
    with open(a.truth) as fh:
        truth = json.load(fh)
    # The event names of each producer generation's firmware build.
    builds = [set(e["name"] for e in life.get("events", [])) for life in truth.get("lives", [])]
    plugin, plugin_order, plugin_complete, plugin_dups = parse(a.plugin, only="hmb_record:")
    cmd, _, _, cmd_dups = parse(a.cmd)
    read, _, _, read_dups = parse(a.read)

    check(cmd and plugin and read,
          f"records: plugin {len(plugin)}, hmbtrace-cmd {len(cmd)}, hmb-read {len(read)}",
          f"a decoder printed no records: plugin {len(plugin)}, hmbtrace-cmd {len(cmd)}, "
          f"hmb-read {len(read)}")
    check(plugin_dups == cmd_dups == read_dups == 0, "no record printed twice",
          f"records printed twice: plugin {plugin_dups}, hmbtrace-cmd {cmd_dups}, "
          f"hmb-read {read_dups}")
    check(set(plugin) == set(cmd), "the plugin and hmbtrace-cmd print the same records",
          f"{len(set(cmd) - set(plugin))} records only in hmbtrace-cmd's report, "
          f"{len(set(plugin) - set(cmd))} only in the plugin's")

    undecoded = [k for k, t in cmd.items() if not decoded(t)]
    check(not undecoded, "hmbtrace-cmd decodes every record",
          f"hmbtrace-cmd left {len(undecoded)} records undecoded, e.g. "
          f"{undecoded[:1]} {cmd.get(undecoded[0]) if undecoded else ''}")

    both = [k for k, t in plugin.items() if decoded(t) and k in cmd]
    differ = [k for k in both if plugin[k] != cmd[k]]
    check(both and not differ,
          f"{len(both)} records the plugin decodes read as hmbtrace-cmd prints them",
          f"{len(differ)} of {len(both)} records differ, e.g. {differ[:1]}: plugin "
          f"'{plugin.get(differ[0]) if differ else ''}' vs hmbtrace-cmd "
          f"'{cmd.get(differ[0]) if differ else ''}'")
    # A record the plugin leaves undecoded must come before the dictionary
    # of its generation (named by the build hmbtrace-cmd decoded it with).
    def generation(key):
        name = cmd.get(key, "").split(":", 1)[0]
        return next((i + 1 for i, names in enumerate(builds) if name in names), None)

    late = [k for i, k in enumerate(plugin_order)
            if not decoded(plugin[k]) and i >= plugin_complete.get(generation(k), 0)]
    raw = sum(1 for t in plugin.values() if not decoded(t))
    check(not late,
          f"the plugin leaves {raw} records undecoded, each before its generation's "
          f"dictionary is complete (dictionaries complete after "
          f"{sorted(plugin_complete.items())} records)",
          f"the plugin leaves {len(late)} records undecoded after their generation's "
          f"dictionary was complete, e.g. {late[:1]}")

    if a.plugin_decodes_all:
        check(raw == 0, "the plugin decodes every record, from the first",
              f"the plugin left {raw} records undecoded (no metadata before the first "
              f"record of the capture?)")

    common = [k for k in read if k in cmd]
    differ = [k for k in common if read[k] != cmd[k]]
    check(common and not differ,
          f"{len(common)} records hmb-read and hmbtrace-cmd both have read the same",
          f"{len(differ)} of {len(common)} records differ, e.g. {differ[:1]}: hmb-read "
          f"'{read.get(differ[0]) if differ else ''}' vs hmbtrace-cmd "
          f"'{cmd.get(differ[0]) if differ else ''}'")

    check(len(builds) >= 2 and all(builds),
          f"the truth has {len(builds)} producer generations with their builds' event names",
          "the truth does not name each generation's events (hmb-fwsim --new-build-at-reset)")
    for i, names in enumerate(builds):
        seen = sum(1 for k in common if cmd[k].split(":", 1)[0] in names)
        check(seen > 0, f"build of generation {i + 1}: {seen} common records decoded with it",
              f"no common record decoded with the build of generation {i + 1}")
    return finish(F, "decoders")


if __name__ == "__main__":
    sys.exit(main())
