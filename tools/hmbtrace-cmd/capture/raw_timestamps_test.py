# SPDX-License-Identifier: GPL-2.0-only
"""hmbtrace-cmd reads a capture's timestamps as the trace clock gave them,
whatever corrections trace-cmd report would apply (capture/tracecmd_walk_c.h).

A capture recorded with `trace-cmd record --date` carries an option that
makes trace-cmd report add the offset between the trace clock and the time
of day to every timestamp (--ts-offset: another). The module's clock fits
convert firmware time to the trace clock itself, so a reader that applied the
offset would put every converted firmware record far from its drain, its
markers and the host's nvme events. Here a fixture is rewritten with those
two options (and once without, as the baseline) and:
- trace-cmd report moves every event by the offsets (the options work);
- hmbtrace-cmd report, stat --json and export read both files the same;
- hmbtrace-cmd retime of both: trace-cmd report of the retimed files differ
  by the offsets on every line, in the same order (retime keeps the options,
  and its times are on the trace clock like every other event's).

Usage: raw_timestamps_test.py HMBTRACE_CMD FIXTURE.dat WORKDIR
"""
import os
import subprocess
import sys

from hmbtest import tracedat
from hmbtest.report import parse_line

OPTION_DATE = 1      # TRACECMD_OPTION_DATE: µs, text, as strtoll(, 0) reads it
OPTION_OFFSET = 7    # TRACECMD_OPTION_OFFSET: ns, text
DATE_US = 1_000_000_000      # 1000 s
OFFSET_NS = 7_000_000_123
SHIFT_NS = DATE_US * 1000 + OFFSET_NS

failures = []


def check(ok, what):
    print(('ok    ' if ok else 'FAIL  ') + what)
    if not ok:
        failures.append(what)


def rewrite(fixture, out, extra_options):
    f = tracedat.parse(fixture)
    if any(pair != (0, 0) for pair in f['top_pairs']):
        sys.exit(f'{fixture}: the top buffer has events; this test rewrites only the hmb instance')
    f['options'] = f['options'] + extra_options
    head, table = tracedat.header_of(f, f['systems'], f['kallsyms'])
    tracedat.write_capture(out, head, table, f['pages'])


def run(*argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'{" ".join(argv)}: exit {p.returncode}\n{p.stderr}')
    return p.stdout


def events(path):
    """(ts, cpu, event text) of every line of trace-cmd report -t."""
    out = []
    for line in run('trace-cmd', 'report', '-R', '-t', '-N', path).splitlines():
        e = parse_line(line)
        if e:
            cpu, ts, name, rest = e
            out.append((ts, cpu, name + ': ' + rest))
    return out


def shifted_by(base, moved, what):
    check(len(base) == len(moved) and len(base) > 0,
          f'{what}: {len(moved)} events, as the baseline\'s {len(base)}')
    wrong = [(b, m) for b, m in zip(base, moved)
             if m[0] - b[0] != SHIFT_NS or m[1:] != b[1:]]
    check(not wrong, f'{what}: every event {SHIFT_NS} ns later, same CPU, same text, same order'
          + (f' (first wrong: {wrong[0]})' if wrong else ''))


def main():
    tool, fixture, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    base = os.path.join(work, 'base.dat')
    dated = os.path.join(work, 'dated.dat')
    rewrite(fixture, base, [])
    rewrite(fixture, dated, [(OPTION_DATE, b'%#x\0' % DATE_US),
                             (OPTION_OFFSET, b'%d\0' % OFFSET_NS)])

    base_events = events(base)
    shifted_by(base_events, events(dated), 'trace-cmd report of the dated capture')

    for sub in (['report'], ['stat', '--json']):
        a = run(tool, *sub, '-i', base).replace(base, 'FILE')
        b = run(tool, *sub, '-i', dated).replace(dated, 'FILE')
        check(a == b and len(a) > 0, f'hmbtrace-cmd {" ".join(sub)}: the same of both files')
    for fmt in ('proto', 'json'):
        outs = []
        for path in (base, dated):
            out = path + '.' + fmt
            run(tool, 'export', '-q', '--format', fmt, '-i', path, '-o', out)
            outs.append(open(out, 'rb').read())
        check(outs[0] == outs[1], f'hmbtrace-cmd export --format {fmt}: the same bytes of both')

    retimed = []
    for path in (base, dated):
        out = path + '.retimed'
        run(tool, 'retime', '-q', '-i', path, '-o', out)
        retimed.append(events(out))
    check(retimed[0] != base_events, 'retime moved records of the baseline (not a copy)')
    shifted_by(retimed[0], retimed[1], 'trace-cmd report of the retimed dated capture')

    if failures:
        print(f'{len(failures)} check(s) failed')
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
