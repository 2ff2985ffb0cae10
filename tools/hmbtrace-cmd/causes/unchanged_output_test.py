#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Captures without command attribution print as before ABI 1.2.

Usage: unchanged_output_test.py HMBTRACE_CMD SOURCE_ROOT SUMS [--update]

Runs hmbtrace-cmd stat, stat --json, report, report --cmd and export
(protobuf and JSON: the file it writes) on the committed captures (whose
dictionaries have no command attribution) and compares the SHA-256 of
each output with SUMS, written by the tool before command attribution
existed (the export's: before export drew command causes; --update
rewrites SUMS from this build).
"""
import hashlib
import os
import subprocess
import sys
import tempfile

RUNS = (
    ("tests/data/record-small.dat", ["stat"]),
    ("tests/data/record-small.dat", ["stat", "--json"]),
    ("tests/data/record-small.dat", ["report"]),
    ("tools/hmbtrace-cmd/testdata/cmd-join-small.dat", ["stat"]),
    ("tools/hmbtrace-cmd/testdata/cmd-join-small.dat", ["report"]),
    ("tools/hmbtrace-cmd/testdata/cmd-join-small.dat", ["report", "--cmd", "1:0"]),
    ("tools/hmbtrace-cmd/testdata/cmd-join-instance.dat", ["stat"]),
    ("tools/hmbtrace-cmd/testdata/markers-small.dat", ["report"]),
    # The export's file (OUT below) rather than its summary line.
    ("tests/data/record-small.dat", ["export", "--format", "proto", "-q", "-o", "OUT"]),
    ("tests/data/record-small.dat", ["export", "--format", "json", "-q", "-o", "OUT"]),
    ("tools/hmbtrace-cmd/testdata/cmd-join-small.dat",
     ["export", "--format", "proto", "-q", "-o", "OUT"]),
    ("tools/hmbtrace-cmd/testdata/cmd-join-small.dat",
     ["export", "--format", "json", "-q", "-o", "OUT"]),
)


def digest(tool, root, capture, args):
    # From the source root with a relative path: stat prints the path.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        argv = [out if a == "OUT" else a for a in args[1:]]
        p = subprocess.run([tool, args[0], "-i", capture, *argv], cwd=root,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        data = p.stdout
        if "OUT" in args:
            with open(out, "rb") as f:
                data = f.read()
    h = hashlib.sha256(data + b"\0" + str(p.returncode).encode()).hexdigest()
    return h


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tool, root, sums = os.path.abspath(argv[1]), argv[2], argv[3]
    got = [f"{digest(tool, root, c, a)}  {c} {' '.join(a)}" for c, a in RUNS]
    if "--update" in argv[4:]:
        with open(sums, "w", encoding="utf-8") as f:
            f.write("\n".join(got) + "\n")
        return 0
    with open(sums, encoding="utf-8") as f:
        want = f.read().splitlines()
    bad = [g for g, w in zip(got, want) if g != w]
    for g in bad:
        print(f"output changed: {g}", file=sys.stderr)
    if len(got) != len(want):
        print("SUMS lists other runs", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
