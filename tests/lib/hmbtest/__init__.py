# SPDX-License-Identifier: GPL-2.0-only
"""hmbtest: the one set of Python helpers of hmbtrace's tests (the e2e
verifiers, the fixture scripts, the benchmarks' capture writers).

Imported through PYTHONPATH=tests/lib (tests/lib/README.md): the e2e
scenarios get it from tests/e2e/e2e-lib.sh, meson's hmbtest_test from its
env. Python 3 standard library only.
"""
