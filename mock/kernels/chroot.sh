#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A chroot of a newer Debian release, to build for the kernels it ships
# with the compiler they were built with (Debian 12 has no gcc-14/gcc-16),
# and to build the tools against its libraries. Nothing is installed on the
# host; the chroot lives in the hmbtrace cache.
#
# Usage: mock/kernels/chroot.sh SUITE [--tools] [--path|--cached] [--] [COMMAND [ARG]...]
#
#   SUITE    trixie or sid (release names as fetch.sh: 6.12, 7.2)
#   --tools  the chroot that also has the tools' build dependencies
#            (meson, libtracefs-dev, ...: scripts/install-deps.sh's list)
#   --path   print the chroot's directory (created if missing) and exit
#   --cached print the chroot's directory and exit 0 if it is made, exit 1
#            (printing nothing) if not: never creates it
#   COMMAND  run in the chroot (default: an interactive shell), as root, in
#            the current directory, with the worktree and the hmbtrace cache
#            bound at their own paths (the kernel trees of fetch.sh build
#            where they are), /proc, /dev and /dev/shm; in a private mount
#            namespace (unshare), so nothing stays mounted
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/hmbtrace/chroot/SUITE-KEY, KEY a hash of
# the suite, the package list and this script's mmdebstrap command: made
# once (mmdebstrap --variant=buildd from the host's Debian archive address,
# a few minutes), made again only when the key changes; older ones of the
# suite are removed then. Needs root (chroot), mmdebstrap and unshare.
set -euo pipefail
# shellcheck source=mock/kernels/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

suite=""
tools=0
path_only=0
cached_only=0
while (($#)); do
	case "$1" in
	--tools) tools=1; shift ;;
	--path) path_only=1; shift ;;
	--cached) cached_only=1; shift ;;
	--) shift; break ;;
	-h | --help) usage 0 ;;
	-*) hmbk_die "unknown option $1 (see --help)" ;;
	*) if [[ -z $suite ]]; then suite=$1; shift; else break; fi ;;
	esac
done
[[ -n $suite ]] || usage
suite=$(hmbk_release "$suite") || hmbk_die "unknown release '$suite'"
[[ $suite != bookworm ]] || hmbk_die "bookworm is the host's release: build there"
(($(id -u) == 0)) || hmbk_die "chroot needs root"
command -v mmdebstrap >/dev/null ||
	hmbk_die "'mmdebstrap' not found: apt-get install mmdebstrap (scripts/install-deps.sh --kernel)"

# What the kernel headers of the release need to build a module: their
# compiler (the headers' .kernelvariables say CC = x86_64-linux-gnu-gcc-N),
# make, libelf for objtool, pahole for the modules' BTF (the headers ship
# vmlinux), kmod; and the arm64 cross compiler of the same version.
case $suite in
trixie) gcc=14 ;;
sid) gcc=16 ;;
esac
pkgs=(build-essential make kmod dwarves libelf-dev bc "gcc-$gcc" "gcc-$gcc-for-host"
	"gcc-$gcc-aarch64-linux-gnu" python3)
if ((tools)); then
	# scripts/install-deps.sh's base list and debian/control's Build-Depends
	# (the unit suite, the man pages, the packages: tests/install/run.sh
	# --no-dkms), without clang (the ASan build stays on the host) and
	# gcc-arm-none-eabi (the producer's optional freestanding check, ~1 GB).
	# man-db, lintian, fakeroot: what the install check uses besides.
	pkgs+=(meson ninja-build pkg-config g++ libgtest-dev libgmock-dev libbenchmark-dev
		nlohmann-json3-dev libcli11-dev libtraceevent-dev libtracefs-dev libtracecmd-dev
		trace-cmd protobuf-compiler libprotobuf-dev zlib1g-dev libdeflate-dev libzstd-dev asciidoctor bash-completion
		dpkg-dev debhelper dh-dkms fakeroot lintian man-db)
fi
mirror=$(hmbk_archive) || hmbk_die "no Debian archive address in the host's apt configuration"
# Valid-Until: see hmbk_apt_opts (lib.sh).
mmdeb=(mmdebstrap --variant=buildd --mode=root --format=directory --components=main
	--aptopt='Acquire::Check-Valid-Until "false"'
	--include="$(IFS=,; echo "${pkgs[*]}")" "$suite")
key=$(printf '%s\n' "${mmdeb[@]}" | sha256sum | cut -c1-12)
((tools)) && key=tools-$key
dir="$hmbk_cache/chroot/$suite-$key"

if ((cached_only)); then
	[[ -e $dir/.hmbtrace-ready ]] || exit 1
	echo "$dir"
	exit 0
fi

mkdir -p "$hmbk_cache/chroot"
# One lock per kind: making the tools chroot (minutes) does not hold up the
# kernel builds in the plain one.
lock=$hmbk_cache/chroot/.lock-$suite
((tools)) && lock+=-tools
exec 9>"$lock"
flock 9
if [[ ! -e $dir/.hmbtrace-ready ]]; then
	hmbk_log "creating the $suite chroot in $dir (mmdebstrap, a few minutes)"
	rm -rf "$dir.new"
	nice -n 10 "${mmdeb[@]}" "$dir.new" "$mirror" >"$dir.log" 2>&1 ||
		{ tail -n 20 "$dir.log" >&2; hmbk_die "mmdebstrap failed (log: $dir.log)"; }
	touch "$dir.new/.hmbtrace-ready"
	mv "$dir.new" "$dir"
	# Chroots (and logs) of an older key of the same kind.
	kind="$hmbk_cache/chroot/$suite-"
	((tools)) && kind+=tools-
	for old in "$kind"*; do
		[[ $old == "$dir" || $old == "$dir.log" ]] && continue
		((tools)) || [[ $old != "$hmbk_cache/chroot/$suite-tools-"* ]] || continue
		hmbk_log "removing the stale $old"
		rm -rf "$old"
	done
fi
flock -u 9
exec 9>&-

if ((path_only)); then
	echo "$dir"
	exit 0
fi

(($#)) || set -- /bin/bash
# Bind at the same path: the worktree (or the current directory when
# outside it) and the cache (kernel trees). Inside a private mount
# namespace: the mounts end with the command.
binds=("$hmbk_repo" "$hmbk_cache/kernels" /proc /dev /dev/shm)
case $PWD in
"$hmbk_repo"/*) ;;
*) binds+=("$PWD") ;;
esac
mkdir -p "$hmbk_cache/kernels"
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private -- /bin/bash -c '
	set -e
	dir=$1 cwd=$2 nb=$3
	shift 3
	for ((i = 0; i < nb; i++)); do
		mkdir -p "$dir$1"
		mount --rbind "$1" "$dir$1"
		shift
	done
	cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
	exec chroot "$dir" /usr/bin/env -C "$cwd" "$@"
' hmbk-chroot "$dir" "$PWD" "${#binds[@]}" "${binds[@]}" "$@"
