#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Fail unless an .rst document quotes each FILE whole, as a literal block.

Usage: check_doc_literal.py DOC.rst FILE...

A literal block is the file's lines indented by three spaces (tabs
expanded to 8 columns), blank lines left empty: what a worked example in
the documentation looks like when it is the compiled file itself.
"""
import sys


def literal_block(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().rstrip("\n").split("\n")
    return "\n".join(("   " + line.expandtabs(8)).rstrip() if line else ""
                     for line in lines)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        doc = f.read()
    bad = [p for p in argv[2:] if literal_block(p) not in doc]
    for p in bad:
        print(f"{argv[1]} does not quote {p} as it is", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
