#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build hmb_trace.ko (and the bench module) with W=1 for one kernel of the
# matrix, from the DKMS source set (scripts/dkms-source.sh), so what DKMS
# would build is what is checked. Fails on any warning or error.
#
# Usage: mock/kernels/build-module.sh KERNEL [--arch amd64|arm64] [--out DIR]
#        [--nvme-tree TREE]
#
#   KERNEL     as HMBTRACE_KVER (mock/kernels/lib.sh hmbk_resolve): "" or
#              "host" for the installed kernel, bookworm|6.1, trixie|6.12,
#              sid|7.2, or a KVER with a kernel.env in the cache
#   --arch A   amd64 (default), or arm64: cross-built against the release's
#              arm64 headers with aarch64-linux-gnu-gcc-N (on the host for
#              6.1, in the release's chroot for newer ones)
#   --out DIR  where the sources are copied and built (default
#              build/kernels/KVER); the module is DIR/kernel/hmb_trace/hmb_trace.ko
#   --nvme-tree TREE  with the nvme-pci backend: TREE has the kernel's
#              nvme-pci HMB trace series applied and its drivers/nvme/host
#              built (kernel/patches/verify-series.sh's
#              build/kernel-patches-SERIES/tree; the Makefile's
#              NVME_HMB_TRACE_TREE); inside the worktree, so the chroot sees it
#
# Kernels whose compiler the host lacks (kernel.env: chroot=SUITE) are built
# in that release's chroot (mock/kernels/chroot.sh). The build log is
# DIR/build.log. Prints the module's path last.
set -euo pipefail
# shellcheck source=mock/kernels/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

kernel=""
have_kernel=0
arch=amd64
out=""
nvme_tree=""
while (($#)); do
	case "$1" in
	--arch) arch=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--nvme-tree) nvme_tree=$(cd "${2:?}" && pwd); shift 2 ;;
	-h | --help) usage 0 ;;
	-*) hmbk_die "unknown option $1 (see --help)" ;;
	*) ((!have_kernel)) || usage; kernel=$1; have_kernel=1; shift ;;
	esac
done
[[ $kernel == host ]] && kernel=""

env=$(hmbk_resolve "$kernel" "$arch") || exit 2
kver=$(hmbk_env_get "$env" kver)
kdir=$(hmbk_env_get "$env" build)
suite=$(hmbk_env_get "$env" chroot)
[[ -f $kdir/Makefile ]] || hmbk_die "$kver: no headers in '$kdir'"
[[ -n $out ]] || out=$hmbk_repo/build/kernels/$kver
mkdir -p "$out"
out=$(cd "$out" && pwd)

# A fresh copy each time: no object of another kernel's build is reused.
rm -rf "$out/src"
"$hmbk_repo/scripts/dkms-source.sh" "$out/src"

make_args=(-C "$out/src/kernel/hmb_trace" KDIR="$kdir" W=1)
[[ -z $nvme_tree ]] || make_args+=(NVME_HMB_TRACE_TREE="$nvme_tree")
if [[ $arch == arm64 ]]; then
	# Debian's arm64 headers set CROSS_COMPILE only under dpkg-buildpackage
	# (DEB_HOST_GNU_TYPE); the compiler version comes from .kernelvariables.
	make_args+=(CROSS_COMPILE=aarch64-linux-gnu-)
fi
log=$out/build.log
hmbk_log "building hmb_trace.ko for $kver ($arch${suite:+, in the $suite chroot}), W=1: $log"
rc=0
if [[ -n $suite ]]; then
	"$hmbk_dir/chroot.sh" "$suite" -- nice -n 10 make "${make_args[@]}" >"$log" 2>&1 || rc=$?
else
	nice -n 10 make "${make_args[@]}" >"$log" 2>&1 || rc=$?
fi
# Any diagnostic of the compiler, modpost, objtool or pahole counts.
if ((rc != 0)) || grep -qiE '(warning|error):' "$log"; then
	grep -iE '(warning|error):' "$log" | head -n 20 >&2 || tail -n 20 "$log" >&2
	hmbk_die "hmb_trace.ko for $kver ($arch): build failed or warned (status $rc, log $log)"
fi
ko=$out/src/kernel/hmb_trace/hmb_trace.ko
[[ -f $ko ]] || hmbk_die "$ko missing after the build (log $log)"
hmbk_log "$kver ($arch): W=1 clean"
echo "$ko"
