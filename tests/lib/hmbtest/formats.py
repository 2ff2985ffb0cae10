# SPDX-License-Identifier: GPL-2.0-only
"""The names of event values, read from the capture's own event formats
(the module's __print_symbolic, generated from include/hmb_trace_events_abi.h)
so that no verifier restates the event ABI."""
import re
import subprocess

from hmbtest.check import die

SYMBOL_RE = re.compile(r"\{\s*(-?\d+),\s*\"([^\"]*)\"\s*\}")
# hmb_lost.reason value -> name: load_lost_reasons().
LOST_REASONS = {}


def load_formats(report):
    """The event formats of the capture whose report is REPORT (NAME.txt):
    its sibling NAME.formats (`trace-cmd dump --events`, written by
    e2e_report), or when that has no hmb events, `trace-cmd dump --events`
    of the sibling NAME.dat."""
    base = re.sub(r"\.txt$", "", report)
    try:
        with open(base + ".formats", errors="replace") as fh:
            text = fh.read()
    except OSError:
        text = ""
    if "name: hmb_" not in text:
        try:
            text = subprocess.run(["trace-cmd", "dump", "--events", base + ".dat"],
                                  capture_output=True, text=True, check=False).stdout
        except OSError as e:
            die(f"no event formats in {base}.formats and trace-cmd dump failed: {e}")
    if "name: hmb_" not in text:
        die(f"no hmb event formats in {base}.formats nor in `trace-cmd dump --events "
            f"{base}.dat` (e2e_report writes the .formats file)")
    return text


def symbolic(text, event, field):
    """{value: name} of __print_symbolic(REC->field, ...) in event's print
    fmt, {} if it has none."""
    block = text[text.find(f"name: {event}\n"):]
    m = re.search(rf"__print_symbolic\(REC->{field},([^)]*)\)", block)
    return {int(v): n for v, n in SYMBOL_RE.findall(m.group(1))} if m else {}


def load_lost_reasons(report):
    """Fills LOST_REASONS from the capture's formats; returns their text."""
    text = load_formats(report)
    names = symbolic(text, "hmb_lost", "reason")
    if not names:
        die(f"{report}: no __print_symbolic(REC->reason, ...) in hmb_lost's print fmt")
    LOST_REASONS.update(names)
    return text


def reason_name(value):
    """hmb_lost's reason as a name ("overwritten", ...), once loaded."""
    return LOST_REASONS.get(value, value)
