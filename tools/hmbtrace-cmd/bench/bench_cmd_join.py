#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark of the command join: its cost per command next to `trace-cmd report`.

    PYTHONPATH=tests/lib tools/hmbtrace-cmd/bench/bench_cmd_join.py \\
        --template build/e2e/cmd-join/cmd-join.dat \\
        --cmd build/tools/hmbtrace-cmd/hmbtrace-cmd [--commands 1000000] [--out /tmp/x.dat]

Writes a synthetic capture of --commands host NVMe commands, each served by
the simulated firmware (hmbtest.cmd_join_capture, tests/lib/), taking the
event formats, dictionary and header from --template, a capture of the
cmd-join scenario (converted here to an uncompressed version 6 file with
`trace-cmd convert`). Then times, on that file (best of --runs):

  report   trace-cmd report -i FILE > /dev/null (the baseline: one pass)
  stat     hmbtrace-cmd stat --no-commands -i FILE (reading, no join)
  join     hmbtrace-cmd stat -i FILE (the same plus the command join)

and prints join - stat per command, and the ratios to report. Times are
wall clock on this machine: compare the ratios, not the seconds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from hmbtest.cmd_join_capture import generate


def timed(argv, runs):
    best = None
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        dt = time.monotonic() - t0
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--template', required=True)
    ap.add_argument('--cmd', required=True, help='hmbtrace-cmd')
    ap.add_argument('--commands', type=int, default=1000000)
    ap.add_argument('--runs', type=int, default=2)
    ap.add_argument('--out', help='keep the synthetic capture here')
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        v6 = os.path.join(tmp, 'template6.dat')
        subprocess.run(['trace-cmd', 'convert', '-i', args.template, '-o', v6,
                        '--file-version', '6', '--compression', 'none'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        dat = args.out or os.path.join(tmp, 'bench.dat')
        t0 = time.monotonic()
        size = generate(v6, dat, args.commands)
        print('capture: %d commands, %d bytes, written in %.1f s' %
              (args.commands, size, time.monotonic() - t0))
        out = subprocess.run([args.cmd, 'stat', '-i', dat, '--json'], capture_output=True,
                             text=True, check=True)
        c = json.loads(out.stdout)['commands']
        print('join: host %d, joined %d, partial %d, not joined %d' %
              (c['host_commands'], c['joined'], c['partial'], c['unjoined']))
        report = timed(['trace-cmd', 'report', '-i', dat], args.runs)
        stat = timed([args.cmd, 'stat', '--no-commands', '-i', dat], args.runs)
        join = timed([args.cmd, 'stat', '-i', dat], args.runs)
        n = args.commands
        print('trace-cmd report        %7.2f s  %7.0f ns/command' % (report, report * 1e9 / n))
        print('stat --no-commands      %7.2f s  %7.0f ns/command  %.2fx report' %
              (stat, stat * 1e9 / n, stat / report))
        print('stat (with the join)    %7.2f s  %7.0f ns/command  %.2fx report' %
              (join, join * 1e9 / n, join / report))
        print('the join alone          %7.2f s  %7.0f ns/command  %.2fx report' %
              (join - stat, (join - stat) * 1e9 / n, (join - stat) / report))
    return 0


if __name__ == '__main__':
    sys.exit(main())
