# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers of the kernel matrix (mock/kernels/README.md). Sourced, never executed.
# Nothing here touches the host's apt configuration: each Debian release gets
# its own sources list, lists and package cache under the hmbtrace cache, and
# apt-get/apt-cache are pointed at them with -o options.

hmbk_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this file
hmbk_repo=$(cd "$hmbk_dir/../.." && pwd)
hmbk_cache=${HMBTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmbtrace}

hmbk_die() {
	echo "${0##*/}: error: $*" >&2
	exit 2
}

hmbk_log() {
	echo "${0##*/}: $*" >&2
}

# hmbk_release NAME: the Debian suite of a release name or kernel series
# (bookworm|6.1, trixie|6.12, sid|7.2); dies on anything else. A new kernel
# series of the matrix is one more line here (Documentation/design.rst).
hmbk_release() {
	case "$1" in
	bookworm | 6.1) echo bookworm ;;
	trixie | 6.12) echo trixie ;;
	sid | unstable | 7.2) echo sid ;;
	*) return 1 ;;
	esac
}

# hmbk_archive [security]: the archive's address, from the host's own apt
# configuration (deb822 debian.sources, or a one-line sources.list).
hmbk_archive() {
	local want=debian u
	[[ ${1:-} == security ]] && want=debian-security
	u=$(awk -v w="$want" '/^URIs:/ { for (i = 2; i <= NF; i++) { n = $i; sub("/+$", "", n);
		if (n ~ ("/" w "$")) { print n; exit } } }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null)
	[[ -n $u ]] || u=$(awk -v w="$want" '$1 == "deb" { n = $2; sub("/+$", "", n);
		if (n ~ ("/" w "$")) { print n; exit } }' /etc/apt/sources.list 2>/dev/null)
	[[ -n $u ]] || return 1
	echo "$u"
}

# hmbk_apt_dir SUITE: the private apt state of SUITE (sources.list, lists,
# package cache), created and its lists refreshed when older than
# HMBTRACE_APT_MAX_AGE minutes (default one day), or when $2 is "update".
# Both amd64 and arm64 indexes (the arm64 headers for cross-builds).
hmbk_apt_dir() {
	local suite=$1 d="$hmbk_cache/apt/$1" main sec age=${HMBTRACE_APT_MAX_AGE:-1440}
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	main=$(hmbk_archive) || hmbk_die "no Debian archive address in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
	{
		echo "deb [arch=amd64,arm64] $main $suite main"
		if [[ $suite != sid ]]; then
			echo "deb [arch=amd64,arm64] $main $suite-updates main"
			sec=$(hmbk_archive security) &&
				echo "deb [arch=amd64,arm64] $sec $suite-security main"
		fi
	} >"$d/sources.list.new"
	if ! cmp -s "$d/sources.list.new" "$d/sources.list"; then
		mv "$d/sources.list.new" "$d/sources.list"
		rm -f "$d/updated"
	else
		rm -f "$d/sources.list.new"
	fi
	if [[ ${2:-} == update || ! -e $d/updated ]] ||
		[[ -n $(find "$d/updated" -mmin +"$age" 2>/dev/null) ]]; then
		hmbk_log "apt-get update ($suite, private lists in $d)"
		# shellcheck disable=SC2046 # one word per option
		apt-get $(hmbk_apt_opts "$d") -q update >"$d/update.log" 2>&1 ||
			{ tail -n 5 "$d/update.log" >&2; hmbk_die "apt-get update for $suite failed (log: $d/update.log)"; }
		touch "$d/updated"
	fi
	echo "$d"
}

# hmbk_apt_opts DIR: the apt options that make apt-get/apt-cache use DIR only
# (no host sources, no host dpkg status). Valid-Until is not checked: the
# host's address may be a frozen snapshot of the archive (its Release files
# expire while their signatures stay good), as on the machine this was
# made on.
hmbk_apt_opts() {
	local d=$1
	echo "-o Dir::Etc::SourceList=$d/sources.list -o Dir::Etc::SourceParts=/dev/null" \
		"-o Dir::State::Lists=$d/lists -o Dir::Cache=$d/cache" \
		"-o Dir::State::status=/dev/null -o APT::Architectures::=amd64" \
		"-o APT::Architectures::=arm64 -o Debug::NoLocking=1" \
		"-o Acquire::Check-Valid-Until=false"
}

# hmbk_kernel_env KVER: the kernel.env of a kernel of the matrix, if any
# provider (fetch.sh, or a kernel built from source) wrote one.
hmbk_kernel_env() {
	local f="$hmbk_cache/kernels/$1/kernel.env"
	[[ -r $f ]] && echo "$f"
}

# hmbk_host_kver: the newest installed Debian kernel that has both
# /boot/vmlinuz-KVER and /lib/modules/KVER (a *-amd64 flavour preferred).
hmbk_host_kver() {
	local v best="" any=""
	for v in $(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V); do
		[[ -r /boot/vmlinuz-$v && -d /lib/modules/$v/kernel ]] || continue
		any=$v
		[[ $v == *-amd64 ]] && best=$v
	done
	[[ -n $best ]] || best=$any
	[[ -n $best ]] || return 1
	echo "$best"
}

# hmbk_host_env KVER: write the kernel.env of an installed kernel (the same
# keys as fetch.sh's; modroot /, no chroot) and print its path.
hmbk_host_env() {
	local kver=$1 d="$hmbk_cache/kernels/$1" build
	build=/lib/modules/$kver/build
	[[ -f $build/Makefile ]] || build=/usr/src/linux-headers-$kver
	mkdir -p "$d"
	{
		echo "kver=$kver"
		echo "arch=amd64"
		echo "release=host"
		echo "version=$(dpkg-query -W -f '${Version}' "linux-image-$kver" 2>/dev/null || true)"
		echo "image=/boot/vmlinuz-$kver"
		echo "modroot=/"
		echo "build=$build"
		echo "chroot="
	} >"$d/kernel.env.new"
	mv "$d/kernel.env.new" "$d/kernel.env"
	echo "$d/kernel.env"
}

# hmbk_resolve KERNEL [ARCH]: the kernel.env of KERNEL, the one place that
# maps a kernel name to its image, modules and headers. KERNEL is
#   ""                  the installed kernel (hmbk_host_kver)
#   an installed KVER   that one (/boot, /lib/modules)
#   a release or series bookworm|6.1 (the installed 6.1 kernel if there is
#                       one), trixie|6.12, sid|7.2: Debian's current kernel
#                       of that release, fetched (fetch.sh) when missing
#   any other KVER      a kernel.env some provider wrote in
#                       $hmbk_cache/kernels/KVER/ (fetch.sh, or a kernel
#                       built from source)
# ARCH (default amd64): arm64 gives the headers of the release's arm64
# kernel (cross-builds). Prints the path of kernel.env.
hmbk_resolve() {
	local k=${1:-} arch=${2:-amd64} suite hk env
	if [[ $arch == amd64 ]]; then
		hk=$(hmbk_host_kver || true)
		if [[ -z $k && -n $hk ]]; then
			hmbk_host_env "$hk"
			return
		fi
		if [[ -n $k && -r /boot/vmlinuz-$k && -d /lib/modules/$k/kernel ]]; then
			hmbk_host_env "$k"
			return
		fi
		if [[ $(hmbk_release "$k" 2>/dev/null) == bookworm && $hk == 6.1.* ]]; then
			hmbk_host_env "$hk"
			return
		fi
	fi
	if suite=$(hmbk_release "$k"); then
		"$hmbk_dir/fetch.sh" "$suite" --arch "$arch" >/dev/null || return 1
		k=$("$hmbk_dir/fetch.sh" "$suite" --arch "$arch" --print kver) || return 1
	fi
	env=$(hmbk_kernel_env "$k") || {
		echo "${0##*/}: error: no kernel '$k': not installed, not a release (bookworm, trixie, sid), no $hmbk_cache/kernels/$k/kernel.env" >&2
		return 1
	}
	echo "$env"
}

# hmbk_env_get ENV KEY: one value of a kernel.env.
hmbk_env_get() {
	sed -n "s/^$2=//p" "$1" | head -n1
}
