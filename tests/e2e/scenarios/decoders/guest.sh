#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# decoders, guest side: trace-cmd records the whole run, through the reset.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
capture_all decoders
finish
