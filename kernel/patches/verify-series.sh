#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Verify the nvme-pci HMB trace series of a newer kernel series
# (kernel/patches/SERIES/, e.g. 7.2) without a guest:
#   1. download Debian's linux-source-SERIES with apt-get download through
#      the kernel matrix's private apt state of its release
#      (mock/kernels/lib.sh; the host's apt sources are not touched) and
#      extract drivers/nvme/host, include/linux/nvme*, checkpatch.pl and
#      MAINTAINERS (both cached in ~/.cache/hmbtrace/linux-source/SERIES)
#   2. apply the patches in order to a fresh copy (patch -p1, no fuzz), and
#      to a git repository of the same files with git am
#   3. build the patched nvme-core.ko and nvme.ko as external modules with
#      W=1 and -Werror against Debian's headers of that series
#      (mock/kernels/fetch.sh), in the release's chroot with the compiler
#      that kernel was built with (mock/kernels/chroot.sh)
#   4. checkpatch.pl --strict (the series' own kernel's) every patch
#
# Usage: kernel/patches/verify-series.sh SERIES [--build-dir DIR] [--no-fetch]
#   SERIES         a directory of kernel/patches: 7.2 (sid), 6.12 (trixie)
#   --build-dir D  work directory (default build/kernel-patches-SERIES)
#   --no-fetch     do not download the source, the kernel or make the
#                  chroot: skip when one of them is not in the cache yet
#
# Prints one "ok - ..." or "not ok - ..." line per check and ends with
# "kernel-patches-SERIES: N passed, M failed". Exit status 0: all passed;
# 1: a check failed; 77: skipped, when the source, the headers or the
# chroot are not available (the reason is printed): never counted passed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=mock/kernels/lib.sh
source "$repo/mock/kernels/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

series=""
bdir=""
fetch=1
while (($#)); do
	case "$1" in
	--build-dir) bdir=${2:?--build-dir needs a directory}; shift 2 ;;
	--no-fetch) fetch=0; shift ;;
	-h | --help) usage 0 ;;
	-*) echo "verify-series.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) [[ -z $series ]] || usage; series=$1; shift ;;
	esac
done
[[ -n $series ]] || usage
[[ -d $here/$series ]] || { echo "verify-series.sh: no series $here/$series" >&2; exit 2; }
suite=$(hmbk_release "$series") ||
	{ echo "verify-series.sh: $series is not a kernel series of the matrix (mock/kernels/lib.sh)" >&2; exit 2; }
[[ $suite != bookworm ]] ||
	{ echo "verify-series.sh: the 6.1 series is verified by kernel/patches/verify.sh" >&2; exit 2; }
name=kernel-patches-$series
bdir=${bdir:-$repo/build/$name}
mkdir -p "$bdir"

tap_name=$name
# shellcheck source=kernel/patches/tap.sh
source "$here/tap.sh"

patches=()
for p in "$here/$series"/0[0-9][0-9][0-9]-*.patch; do
	[[ -f $p && $(basename "$p") != 0000-* ]] && patches+=("$p")
done
((${#patches[@]})) || { not_ok "no patches in $here/$series"; finish; }

# 1. The source: linux-source-SERIES of the release, downloaded once; the
# parts the checks need extracted once per package (xz is read to its end
# whatever is taken: ~1 min).
pkg=linux-source-$series
cache=$hmbk_cache/linux-source/$series
mkdir -p "$cache"
deb=$(find "$cache" -maxdepth 1 -name "${pkg}_*_all.deb" | sort -V | tail -n1)
if [[ -z $deb ]]; then
	((fetch)) || skip "$pkg not in $cache (run without --no-fetch)"
	aptd=$(hmbk_apt_dir "$suite" 2>"$bdir/apt.log") ||
		skip "no apt lists for $suite (log: $bdir/apt.log)"
	# shellcheck disable=SC2046 # one word per option
	(cd "$cache" && apt-get $(hmbk_apt_opts "$aptd") -q download "$pkg") >>"$bdir/apt.log" 2>&1 ||
		skip "apt-get download $pkg from $suite failed (log: $bdir/apt.log)"
	deb=$(find "$cache" -maxdepth 1 -name "${pkg}_*_all.deb" | sort -V | tail -n1)
	[[ -n $deb ]] || skip "apt-get download $pkg left no package in $cache"
fi
top=linux-source-$series
members=(drivers/nvme/host include/linux/nvme.h scripts/checkpatch.pl
	scripts/spelling.txt scripts/const_structs.checkpatch MAINTAINERS)
src=$cache/src
stamp="$(basename "$deb") ${members[*]}"
if [[ ! -f $src/.stamp || "$(cat "$src/.stamp")" != "$stamp" ]]; then
	echo "verify-series.sh: extracting ${members[*]} from $(basename "$deb")" >&2
	rm -rf "$src"
	mkdir -p "$src"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$top.tar.xz" |
		tar -xJ -C "$src" --strip-components=1 "${members[@]/#/$top/}" ||
		{ not_ok "extract ${members[*]} from $deb"; finish; }
	echo "$stamp" >"$src/.stamp"
fi
echo "verify-series.sh: ${#patches[@]} patches against $(basename "$deb")"

# 2. Apply, in order, to a fresh copy; and with git am.
tree=$bdir/tree
rm -rf "$tree"
mkdir -p "$tree"
cp -a "$src/drivers" "$src/include" "$tree/"
applied=1
for p in "${patches[@]}"; do
	if ! out=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -s <"$p" 2>&1); then
		not_ok "apply $(basename "$p"): $out"
		applied=0
		break
	fi
done
((applied)) && ok "the ${#patches[@]} patches apply in order to $top (patch -p1, no fuzz)"
((applied)) || finish
gtree=$bdir/git
rm -rf "$gtree"
mkdir -p "$gtree"
cp -a "$src/drivers" "$src/include" "$gtree/"
if git -C "$gtree" init -q && git -C "$gtree" add -A &&
	git -C "$gtree" -c user.name=base -c user.email=base@invalid commit -q -m base &&
	git -C "$gtree" -c user.name=verify -c user.email=verify@invalid am -q "${patches[@]}" >"$bdir/git-am.log" 2>&1 &&
	diff -r -q -x .git "$tree" "$gtree" >>"$bdir/git-am.log" 2>&1; then
	ok "git am applies the series to $top, same result as patch -p1"
else
	not_ok "git am (log: $bdir/git-am.log)"
fi
rm -rf "$gtree"

# 3. Build, W=1 -Werror, in the release's chroot. The fabrics transports
# and the target are not built (their Kconfig symbols are cleared); the
# series does not touch them.
if ((fetch)); then
	env=$(hmbk_resolve "$series" 2>"$bdir/fetch.log") ||
		skip "Debian's $series kernel headers not available (log: $bdir/fetch.log)"
else
	env=$(grep -l -x "release=$suite" "$hmbk_cache"/kernels/*/kernel.env 2>/dev/null |
		xargs -r grep -l -x "arch=amd64" | sort -V | tail -n1)
	[[ -n $env ]] || skip "Debian's $series headers not in the cache (run without --no-fetch)"
fi
kdir=$(hmbk_env_get "$env" build)
chroot_suite=$(hmbk_env_get "$env" chroot)
[[ -f $kdir/Makefile ]] || skip "headers $kdir missing"
run=()
if [[ -n $chroot_suite ]]; then
	if ((!fetch)); then
		have=0
		for d in "$hmbk_cache/chroot/$chroot_suite"-*; do
			[[ -d $d ]] && have=1
		done
		((have)) || skip "no $chroot_suite chroot in $hmbk_cache/chroot (run without --no-fetch)"
	fi
	"$repo/mock/kernels/chroot.sh" "$chroot_suite" --path >"$bdir/chroot.log" 2>&1 ||
		skip "the $chroot_suite chroot cannot be made (log: $bdir/chroot.log)"
	run=("$repo/mock/kernels/chroot.sh" "$chroot_suite" --)
fi
log=$bdir/build.log
if "${run[@]}" nice -n 10 make -C "$kdir" M="$tree/drivers/nvme/host" -j2 W=1 \
	KCFLAGS="-Werror -I$tree/include" \
	CONFIG_NVME_FABRICS= CONFIG_NVME_RDMA= CONFIG_NVME_FC= CONFIG_NVME_TCP= \
	CONFIG_NVME_APPLE= CONFIG_NVME_TARGET= modules >"$log" 2>&1 &&
	[[ -f $tree/drivers/nvme/host/nvme.ko && -f $tree/drivers/nvme/host/nvme-core.ko ]]; then
	ok "patched nvme-core.ko and nvme.ko built with W=1 -Werror against $kdir${chroot_suite:+ (in the $chroot_suite chroot)}"
else
	grep -E "error|warning" "$log" | head -n 20
	not_ok "build of the patched drivers/nvme/host (log: $log)"
fi

# 4. checkpatch --strict. FILE_PATH_CHANGES only asks whether MAINTAINERS
# needs an entry for a new file: the NVM EXPRESS DRIVER entry's
# "F: include/linux/nvme-*.h" (7.2; "nvme*" in older trees) covers
# include/linux/nvme-hmb-trace.h, which is checked here instead (as
# verify.sh does for 6.1).
if awk '/^NVM EXPRESS DRIVER$/ { s = 1 } s && /^$/ { exit }
	s && ($0 == "F:\tinclude/linux/nvme*" || $0 == "F:\tinclude/linux/nvme-*.h") { f = 1 }
	END { exit !f }' \
	"$src/MAINTAINERS"; then
	ok "MAINTAINERS: NVM EXPRESS DRIVER covers include/linux/nvme-hmb-trace.h"
else
	not_ok "MAINTAINERS: NVM EXPRESS DRIVER lists neither include/linux/nvme* nor nvme-*.h: the series must add its header there"
fi
for p in "${patches[@]}"; do
	if out=$(cd "$src" && perl scripts/checkpatch.pl --strict --no-tree --show-types \
		--ignore FILE_PATH_CHANGES "$p" 2>&1) &&
		[[ "$out" == *"total: 0 errors, 0 warnings, 0 checks"* ]]; then
		ok "checkpatch --strict $(basename "$p")"
	else
		echo "$out" | grep -E "^(ERROR|WARNING|CHECK|#)" | head -n 20
		not_ok "checkpatch --strict $(basename "$p")"
	fi
done
finish
