# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers shared by the QEMU harness scripts. Sourced, never executed.
# Everything here runs on the host; nothing is ever loaded into the host kernel.

# shellcheck disable=SC2034 # used by the scripts that source this file
hmbq_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hmbq_repo=$(cd "$hmbq_dir/../.." && pwd)

hmbq_die() {
	echo "${0##*/}: error: $*" >&2
	exit 2
}

hmbq_log() {
	echo "${0##*/}: $*" >&2
}

# hmbq_need CMD PACKAGE: fail with the Debian package to install when CMD is missing.
hmbq_need() {
	command -v "$1" >/dev/null 2>&1 ||
		hmbq_die "'$1' not found: install the Debian package '$2' (apt-get install $2, or scripts/install-deps.sh --kernel)"
}

# The cache for the initramfs base and default images. build*/ is git-ignored.
hmbq_cache_dir() {
	echo "${HMBTRACE_QEMU_CACHE:-$hmbq_repo/build/qemu-cache}"
}

# shellcheck source=mock/kernels/lib.sh
source "$hmbq_dir/../kernels/lib.sh"

# hmbq_kernel: resolve the kernel the guest boots, once per process tree, and
# set HMBQ_KVER (its release), HMBQ_KIMAGE (the image to boot), HMBQ_KMODROOT
# (the base directory whose lib/modules/KVER has its modules, for modinfo -b;
# / for an installed kernel), HMBQ_KBUILD (its headers, KDIR) and
# HMBQ_KCHROOT (the Debian suite whose chroot builds for it; empty: the host).
# HMBTRACE_KVER selects it (default: the newest installed *-amd64 kernel): an
# installed KVER, a release or series of the kernel matrix (bookworm|6.1,
# trixie|6.12, sid|7.2: Debian's packages, fetched once into the cache by
# mock/kernels/fetch.sh), or any KVER with a kernel.env in
# ~/.cache/hmbtrace/kernels/KVER/ (mock/kernels/README.md: how to add a
# kernel). Exports HMBTRACE_KVER=KVER, so the scripts it starts resolve it
# without looking it up again.
hmbq_kernel() {
	local env
	env=$(hmbk_resolve "${HMBTRACE_KVER:-}") ||
		hmbq_die "no kernel to boot (HMBTRACE_KVER='${HMBTRACE_KVER:-}'): install the Debian package 'linux-image-amd64', or see mock/kernels/README.md"
	HMBQ_KVER=$(hmbk_env_get "$env" kver)
	HMBQ_KIMAGE=$(hmbk_env_get "$env" image)
	HMBQ_KMODROOT=$(hmbk_env_get "$env" modroot)
	HMBQ_KBUILD=$(hmbk_env_get "$env" build)
	HMBQ_KCHROOT=$(hmbk_env_get "$env" chroot)
	[[ -n $HMBQ_KIMAGE && -n $HMBQ_KMODROOT ]] ||
		hmbq_die "kernel $HMBQ_KVER has no image or modules ($env): headers only?"
	[[ -r $HMBQ_KIMAGE ]] ||
		hmbq_die "$HMBQ_KIMAGE is not readable (run as root or chmod o+r it)"
	export HMBTRACE_KVER=$HMBQ_KVER
}

# hmbq_kver: the release (uname -r) of the kernel the guest boots (hmbq_kernel).
hmbq_kver() {
	hmbq_kernel
	echo "$HMBQ_KVER"
}

# hmbq_module_for KVER: the hmb_trace.ko built for KVER: the tree's
# kernel/hmb_trace/hmb_trace.ko when its vermagic says KVER, else the one
# mock/kernels/build-module.sh built (build/kernels/KVER/...); empty if none.
hmbq_module_for() {
	local ko
	for ko in "$hmbq_repo/kernel/hmb_trace/hmb_trace.ko" \
		"$hmbq_repo/build/kernels/$1/src/kernel/hmb_trace/hmb_trace.ko"; do
		[[ -f $ko ]] || continue
		[[ $(modinfo -F vermagic "$ko" 2>/dev/null) == "$1 "* ]] || continue
		echo "$ko"
		return
	done
}

# The Debian modules nvme-core needs beside it in the guest (from
# `modinfo -k KVER -F depends`), in load order, relative to kernel/.
hmbq_nvme_deps=(lib/crc-t10dif lib/crc64 lib/crc64-rocksoft block/t10-pi
		crypto/crct10dif_common)

# hmbq_stage_modules KVER DIR MODULE...: each MODROOT/lib/modules/KVER/kernel/
# MODULE.ko (or .ko.xz, .ko.zst, decompressed) into DIR as NAME.ko, MODROOT
# that of the kernel hmbq_kernel resolved (/ for an installed one).
# Returns 1, naming the first one missing, if one is not installed.
hmbq_stage_modules() {
	local kmods m c f dir=$2
	[[ ${HMBQ_KVER:-} == "$1" ]] || hmbq_kernel
	kmods=${HMBQ_KMODROOT%/}/lib/modules/$1/kernel
	shift 2
	for m in "$@"; do
		c=""
		for f in "$kmods/$m".ko "$kmods/$m".ko.xz "$kmods/$m".ko.zst; do
			[[ -f $f ]] && { c=$f; break; }
		done
		[[ -n $c ]] || { echo "$kmods/$m.ko missing (linux-image-$1)"; return 1; }
		case "$c" in
		*.ko) cp "$c" "$dir/" ;;
		*.ko.xz) xz -dc "$c" >"$dir/$(basename "$m").ko" ;;
		*.ko.zst) zstd -qdc "$c" >"$dir/$(basename "$m").ko" ;;
		esac
	done
}

# hmbq_size_bytes 64M -> 67108864 (accepts plain bytes or a K/M/G suffix).
hmbq_size_bytes() {
	local s=$1 n mult=1
	case "$s" in
	*[kK]) mult=1024 ;;
	*[mM]) mult=$((1024 * 1024)) ;;
	*[gG]) mult=$((1024 * 1024 * 1024)) ;;
	esac
	n=${s%[kKmMgG]}
	[[ "$n" =~ ^[0-9]+$ ]] || hmbq_die "bad size '$s'"
	echo $((n * mult))
}

hmbq_is_pow2() {
	local n=$1
	((n > 0 && (n & (n - 1)) == 0))
}

# hmbq_now: seconds since the epoch with milliseconds, for timings.
hmbq_now() {
	date +%s.%3N
}

# hmbq_elapsed START [END]: "12.345" seconds.
hmbq_elapsed() {
	local end=${2:-$(hmbq_now)}
	awk -v a="$1" -v b="$end" 'BEGIN { printf "%.1f", b - a }'
}
