#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Configure (once) and build the user-space parts into build/ (warnings are
# errors), and the kernel module against the installed Debian headers.
# Usage: scripts/build.sh [--module] [TARGET...]   (no TARGET: everything;
# e.g. "demo", the alias of what scripts/demo.sh runs)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build/build.ninja ]]; then
	meson setup build --werror
fi
module=0
targets=()
for arg in "$@"; do
	case "$arg" in
	--module) module=1 ;;
	*) targets+=("$arg") ;;
	esac
done
ninja -C build "${targets[@]}"
if ((module)); then
	make -s -C kernel/hmb_trace
fi
