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

# hmbq_kver: the installed Debian kernel the guest boots. HMBTRACE_KVER overrides.
# Prefers a *-amd64 flavour that has both /boot/vmlinuz-KVER and /lib/modules/KVER;
# the highest version wins when several are installed.
hmbq_kver() {
	if [[ -n "${HMBTRACE_KVER:-}" ]]; then
		echo "$HMBTRACE_KVER"
		return
	fi
	local v best="" any=""
	for v in $(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V); do
		[[ -r /boot/vmlinuz-$v && -d /lib/modules/$v/kernel ]] || continue
		any=$v
		[[ $v == *-amd64 ]] && best=$v
	done
	[[ -n "$best" ]] || best=$any
	[[ -n "$best" ]] ||
		hmbq_die "no installed kernel with /boot/vmlinuz-KVER and /lib/modules/KVER: install the Debian package 'linux-image-amd64'"
	[[ -r /boot/vmlinuz-$best ]] ||
		hmbq_die "/boot/vmlinuz-$best is not readable (run as root or chmod o+r it)"
	echo "$best"
}

# The Debian modules nvme-core needs beside it in the guest (from
# `modinfo -k KVER -F depends`), in load order, relative to kernel/.
hmbq_nvme_deps=(lib/crc-t10dif lib/crc64 lib/crc64-rocksoft block/t10-pi
		crypto/crct10dif_common)

# hmbq_stage_modules KVER DIR MODULE...: each /lib/modules/KVER/kernel/
# MODULE.ko (or .ko.xz, .ko.zst, decompressed) into DIR as NAME.ko.
# Returns 1, naming the first one missing, if one is not installed.
hmbq_stage_modules() {
	local kmods=/lib/modules/$1/kernel dir=$2 m c f
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
