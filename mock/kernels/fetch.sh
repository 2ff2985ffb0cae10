#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Fetch a Debian kernel of the matrix into the hmbtrace cache, without
# installing anything: its packages are downloaded with apt-get download
# from the release's own suite (a private sources list, the archive address
# taken from the host's apt configuration) and unpacked with dpkg-deb -x.
#
# Usage: mock/kernels/fetch.sh RELEASE [--arch amd64|arm64] [--headers-only]
#                              [--update] [--print KEY]
#
#   RELEASE         bookworm (6.1), trixie (6.12) or sid (7.2)
#   --arch A        the kernel's architecture (default amd64); arm64 is for
#                   cross-building the module: headers only
#   --headers-only  only what building a module needs, no image/modules
#   --update        refresh the release's package lists now (default: when
#                   older than HMBTRACE_APT_MAX_AGE minutes, one day)
#   --print KEY     print only that value of kernel.env (e.g. build)
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/hmbtrace/kernels/KVER/ (HMBTRACE_CACHE
# replaces ~/.cache/hmbtrace), KVER the kernel release (uname -r) of the
# archive's current version: debs/ (the .deb files), root/ (all unpacked
# into one tree) and kernel.env, which is written last and says (one
# KEY=VALUE a line):
#   kver      the kernel release, e.g. 7.2.13+deb14-amd64
#   arch      amd64 or arm64
#   release   the Debian suite it comes from
#   version   the Debian package version (a new one is fetched again)
#   image     the bootable image (vmlinuz), empty with --headers-only
#   modroot   the base directory for modinfo -b / depmod -b: its
#             lib/modules/KVER holds the modules, with modules.dep
#   build     the headers tree to build an external module (KDIR)
#   chroot    the Debian suite whose compiler builds for this kernel
#             (mock/kernels/chroot.sh), empty: the host's
# A second run with the same version only prints it. Prints kernel.env.
set -euo pipefail
# shellcheck source=mock/kernels/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

release=""
arch=amd64
headers_only=0
update=""
print=""
while (($#)); do
	case "$1" in
	--arch) arch=${2:?}; shift 2 ;;
	--headers-only) headers_only=1; shift ;;
	--update) update=update; shift ;;
	--print) print=${2:?}; shift 2 ;;
	-h | --help) usage 0 ;;
	-*) hmbk_die "unknown option $1 (see --help)" ;;
	*) [[ -z $release ]] || usage; release=$1; shift ;;
	esac
done
[[ -n $release ]] || usage
suite=$(hmbk_release "$release") || hmbk_die "unknown release '$release' (bookworm, trixie, sid)"
case $arch in
amd64 | arm64) ;;
*) hmbk_die "--arch: amd64 or arm64" ;;
esac
# A foreign kernel is only cross-built against.
[[ $arch == amd64 ]] || headers_only=1
for c in apt-get apt-cache dpkg-deb depmod; do
	command -v "$c" >/dev/null || hmbk_die "'$c' not found (Debian: apt, dpkg, kmod)"
done

aptd=$(hmbk_apt_dir "$suite" "$update")
read -ra apt_opts <<<"$(hmbk_apt_opts "$aptd")"

# field PKG FIELD: one field of the candidate version of PKG.
field() {
	apt-cache "${apt_opts[@]}" show --no-all-versions "$1" 2>/dev/null |
		awk -v f="$2:" '$1 == f { sub(/^[^:]*: */, ""); print; exit }'
}

# The kernel release the meta package points at: linux-image-ARCH depends
# on linux-image-KVER (the ABI suffix changes with uploads: looked up).
meta_depends=$(field "linux-image-$arch:$arch" Depends)
kver=$(tr ',' '\n' <<<"$meta_depends" |
	sed -n "s/^ *linux-image-\([0-9][^ ]*-$arch\)\( .*\)\{0,1\}$/\1/p" | head -n1)
[[ -n $kver ]] || hmbk_die "no linux-image-KVER in the Depends of linux-image-$arch in $suite: '$meta_depends'"
version=$(field "linux-image-$kver:$arch" Version)
[[ -n $version ]] || hmbk_die "linux-image-$kver: no version in $suite"

kdir="$hmbk_cache/kernels/$kver"
env="$kdir/kernel.env"
want_image=$((!headers_only))

print_env() {
	if [[ -n $print ]]; then
		sed -n "s/^$print=//p" "$env"
	else
		cat "$env"
	fi
}

# Cached: same version, and the image there if wanted.
if [[ -r $env ]] && grep -qx "version=$version" "$env" &&
	{ ((!want_image)) || grep -q '^image=/' "$env"; }; then
	print_env
	exit 0
fi

mkdir -p "$kdir"
exec 9>"$kdir/.lock"
flock 9

# pkg_closure PKG...: PKG and, recursively, the versioned kernel packages it
# depends on (linux-{image,binary,modules,base,headers,kbuild}-N...; not
# linux-base itself, compilers or initramfs tools, which a build or a boot
# here does not need). Prints NAME:ARCH for apt-get download. The kbuild
# programs (fixdep, modpost) run on the build machine: always amd64.
declare -A closure=()
pkg_closure() {
	local p a deps d
	for p in "$@"; do
		[[ -n ${closure[$p]:-} ]] && continue
		a=$(field "$p:$arch" Architecture)
		[[ $p == linux-kbuild-* ]] && a=$(field "$p:amd64" Architecture)
		# Architecture: all packages are not found as NAME:ARCH.
		[[ -n $a ]] || a=$(field "$p" Architecture)
		[[ -n $a ]] || hmbk_die "package $p not found in $suite ($arch)"
		[[ $a == all ]] || { [[ $p == linux-kbuild-* ]] && a=amd64 || a=$arch; }
		closure[$p]=$a
		deps=$(field "$p$([[ $a == all ]] || echo ":$a")" Depends | tr ',|' '\n' | sed 's/^ *//; s/[ :].*//' |
			grep -E '^linux-(image|binary|modules|base|headers|kbuild)-[0-9]' |
			grep -v -- '-unsigned$' || true)
		# The headers list the image as an alternative: only with the image.
		if ((!want_image)); then
			deps=$(grep -v -E '^linux-(image|binary|modules)-' <<<"$deps" || true)
		fi
		for d in $deps; do
			pkg_closure "$d"
		done
	done
}
roots=("linux-headers-$kver")
((want_image)) && roots+=("linux-image-$kver")
pkg_closure "${roots[@]}"

# debs.new keeps what an interrupted run downloaded.
rm -rf "$kdir/root.new"
mkdir -p "$kdir/debs.new" "$kdir/root.new"
list=()
for p in "${!closure[@]}"; do
	compgen -G "$kdir/debs.new/${p}_*.deb" >/dev/null && continue
	if [[ ${closure[$p]} == all ]]; then
		list+=("$p")
	else
		list+=("$p:${closure[$p]}")
	fi
done
if ((${#list[@]})); then
	hmbk_log "downloading ${list[*]} ($suite $version)"
	(cd "$kdir/debs.new" && apt-get "${apt_opts[@]}" -q download "${list[@]}") >"$kdir/download.log" 2>&1 ||
		{ tail -n 5 "$kdir/download.log" >&2; hmbk_die "apt-get download failed (log: $kdir/download.log)"; }
fi
for deb in "$kdir/debs.new"/*.deb; do
	dpkg-deb -x "$deb" "$kdir/root.new"
done

root="$kdir/root"
image=""
modroot=""
if ((want_image)); then
	# 7.2 (linux-binary-KVER): /usr/lib/modules/KVER/vmlinuz.
	image=""
	for f in "$kdir/root.new/boot/vmlinuz-$kver" "$kdir/root.new/usr/lib/modules/$kver/vmlinuz"; do
		[[ -f $f ]] && { image=$f; break; }
	done
	[[ -n $image ]] || hmbk_die "no vmlinuz-$kver in $kdir/debs.new"
	image=${image/\/root.new\//\/root\/}
	# 7.2 installs modules under /usr/lib/modules: depmod and modinfo -b
	# look in BASE/lib/modules.
	[[ -e $kdir/root.new/lib ]] || ln -s usr/lib "$kdir/root.new/lib"
	[[ -d $kdir/root.new/lib/modules/$kver/kernel ]] ||
		hmbk_die "no lib/modules/$kver/kernel in $kdir/debs.new"
	# The packages ship no modules.dep (their postinst runs depmod).
	depmod -b "$kdir/root.new" "$kver"
	modroot=$root
fi
build=$kdir/root/usr/src/linux-headers-$kver
mk=$kdir/root.new/usr/src/linux-headers-$kver/Makefile
[[ -f $mk ]] || hmbk_die "no usr/src/linux-headers-$kver/Makefile in $kdir/debs.new"
# Debian's headers Makefile names its trees by absolute /usr/src paths
# (KBUILD_OUTPUT, the -common Makefile): point them at this tree, so that
# it builds where it is, on the host or in a chroot that binds the cache
# at the same path.
sed -i "s|/usr/src/linux-headers-|$kdir/root/usr/src/linux-headers-|g" "$mk"

# The compiler the kernel was built with: the host's gcc for Debian 12's,
# the release's own (a chroot) for newer ones.
chroot_suite=$suite
[[ $suite == bookworm ]] && chroot_suite=""

rm -rf "$kdir/root" "$kdir/debs"
mv "$kdir/root.new" "$kdir/root"
mv "$kdir/debs.new" "$kdir/debs"
{
	echo "kver=$kver"
	echo "arch=$arch"
	echo "release=$suite"
	echo "version=$version"
	echo "image=$image"
	echo "modroot=$modroot"
	echo "build=$build"
	echo "chroot=$chroot_suite"
} >"$env.new"
mv "$env.new" "$env"
hmbk_log "$kver ($version) in $kdir ($(du -sh "$kdir/root" | cut -f1))"
print_env
