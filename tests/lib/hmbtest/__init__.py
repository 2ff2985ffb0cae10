# SPDX-License-Identifier: GPL-2.0-only
"""hmbtest: the one set of Python helpers of hmbtrace's tests (the fixture
scripts, the benchmarks' capture writers).

Imported through PYTHONPATH=tests/lib (tests/lib/README.md): meson's
hmbtest_test gets it from its env. Python 3 standard library only.
"""
