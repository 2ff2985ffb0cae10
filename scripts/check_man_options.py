#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Fail if a program's --help and its man page disagree on options or defaults.

usage: check_man_options.py BINARY MAN_PAGE [SUBCOMMAND...]

With SUBCOMMAND, checks `BINARY SUBCOMMAND --help` (e.g. hmbtrace-cmd report)
against MAN_PAGE. The man page lists options in its == OPTIONS section as
`*-x, --long* _ARG_::` followed by indented text that says `(default D)`
wherever --help shows a default.

A page of a command with subcommands of its own (hmbtrace-cmd dump info,
dump save) groups their options under `=== NAME` headings in OPTIONS: the
options before the first heading are every subcommand's; `BINARY dump save`
is checked against those and the `=== save` group, `BINARY dump` against
those alone.
"""
import re
import subprocess
import sys


def help_options(command):
    text = subprocess.run(command + ['--help'], check=True,
                          capture_output=True, text=True).stdout
    opts = {}
    for line in text.splitlines():
        # "-h,--help" (CLI11 up to 2.4) or "-h,      --help" (2.5, sid);
        # not a wrapped description's line that starts with "--cmd)".
        m = re.match(r'\s+((?:-\w,\s*)?--[\w-]+)(?=\s|$)\s*(\S*)', line)
        if not m:
            continue
        names = [n.strip() for n in m.group(1).split(',')]
        default = None
        d = re.search(r'=(\S+)', m.group(2))
        if d:
            default = d.group(1)
        opts[names[-1]] = (tuple(names), default)
    return opts


def man_options(path, group):
    opts = {}
    section = False
    wanted = True  # before any === heading: every subcommand's
    for line in open(path, encoding='utf-8'):
        if line.startswith('== '):
            section = line.strip() == '== OPTIONS'
            continue
        if not section:
            continue
        if line.startswith('=== '):
            wanted = line[4:].strip() == group
            continue
        if not wanted:
            continue
        m = re.match(r'\*((?:-\w, )?--[\w-]+)\*', line)
        if m:
            names = tuple(n.strip() for n in m.group(1).split(','))
            current = names[-1]
            opts[current] = [names, '']
        elif opts and line.startswith('  '):
            opts[current][1] += line
    return opts


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, man = sys.argv[1], sys.argv[2]
    helps = help_options([binary] + sys.argv[3:])
    mans = man_options(man, sys.argv[-1] if len(sys.argv) > 3 else None)
    errors = []
    for name in sorted(set(helps) | set(mans)):
        if name not in mans:
            errors.append(f'{name}: in --help, not in {man}')
            continue
        if name not in helps:
            errors.append(f'{name}: in {man}, not in --help')
            continue
        names, default = helps[name]
        if names != mans[name][0]:
            errors.append(f'{name}: spelled {names} in --help, '
                          f'{mans[name][0]} in the man page')
        body = ' '.join(mans[name][1].split())
        if default is not None and f'(default {default})' not in body:
            errors.append(f'{name}: --help says default {default}, '
                          f'the man page does not')
    for e in errors:
        print(e)
    print(f'{len(helps)} options checked, {len(errors)} mismatches')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
