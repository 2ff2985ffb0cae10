# SPDX-License-Identifier: GPL-2.0-only
"""How the e2e verifiers report: each check prints "ok: ..." (with -v) or
"FAIL: ... expected X, saw Y"; the last line counts them and the exit
status is 1 if any failed, 2 on unusable input (die())."""
import argparse
import sys


class Failures:
    """Collects check results; prints them as they come."""

    verbose = False

    def __init__(self):
        self.count = 0
        self.passed = 0

    def ok(self, msg):
        self.passed += 1
        if Failures.verbose:
            print(f"ok: {msg}")

    def info(self, msg):
        print(f"info: {msg}")

    def fail(self, msg):
        self.count += 1
        print(f"FAIL: {msg}")

    def check(self, cond, ok_msg, fail_msg):
        if cond:
            self.ok(ok_msg)
        else:
            self.fail(fail_msg)
        return cond


def parser(doc):
    """A verifier's command line: the first line of its docstring DOC as the
    description, and -v (print the checks that passed too)."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every check that passed too")
    return p


def start(p, argv=None):
    """Parses the command line of parser(); returns (args, Failures)."""
    a = p.parse_args(argv)
    Failures.verbose = a.verbose
    return a, Failures()


def report_problems(F, problems, ok_msg, limit=8):
    """One check over a list of problems: ok if there is none, else the
    first `limit` of them as failures."""
    if not problems:
        F.ok(ok_msg)
        return True
    for p in problems[:limit]:
        F.fail(p)
    if len(problems) > limit:
        F.fail(f"... and {len(problems) - limit} more")
    return False


def finish(F, label):
    """The verifier's last line and exit status."""
    if F.count:
        print(f"{label}: {F.count} check(s) FAILED, {F.passed} passed")
        return 1
    print(f"{label}: all {F.passed} checks passed")
    return 0


def die(msg):
    """Unusable input: exit status 2."""
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)
