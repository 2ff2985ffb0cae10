#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Configure (once) and build the user-space parts into build/ (warnings are
# errors), and the kernel module against the installed Debian headers.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build/build.ninja ]]; then
	meson setup build --werror
fi
ninja -C build
if [[ "${1:-}" == "--module" ]]; then
	make -s -C kernel/hmb_trace
fi
