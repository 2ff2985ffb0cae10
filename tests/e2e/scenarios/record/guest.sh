#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# record, guest side: trace-cmd record -B hmb -e hmb while hmb-fwsim (host)
# produces a fixed count per core; the traced command starts the producer
# (/mnt/ready) and ends once hmb-fwsim has written its truth file, plus a
# margin for the last poll and a periodic dictionary. Brings back the
# capture, the status files and the ftrace per-cpu stats; host.sh compares
# them with the truth (tests/e2e/verify_trace.py record).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
capture_all record
finish
