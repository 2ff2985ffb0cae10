#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck disable=SC2317 # the check functions are called through check()
#
# The install check: what a user gets from the Debian packages, not from the
# build tree.
#   1. dpkg-buildpackage -us -uc -b in a copy of the tree (nocheck: the unit
#      suites run elsewhere) builds hmbtrace, libtraceevent-plugin-hmb,
#      hmbtrace-dkms, hmbtrace-nvme-dkms and hmbtrace-dev; lintian reports no
#      error.
#   2. The .debs are unpacked (dpkg -x) into an empty root, to which only the
#      host's trace-cmd and the shared libraries that it and the packaged
#      binaries need are added (as mock/qemu puts them in the initramfs).
#      In that root, with no TRACEEVENT_PLUGIN_DIR and no HOME plugins:
#      trace-cmd report decodes a capture with the packaged plugin_hmb.so
#      (found where libtraceevent looks), and the packaged hmbtrace-cmd
#      reads it; man renders the packaged hmbtrace-cmd-stat(1); the bash
#      completion offers the subcommands; hmbtrace.pc compiles the producer.
#   3. DKMS builds hmb_trace.ko from the hmbtrace-dkms package's source
#      against the installed linux-headers (temporary DKMS trees: nothing
#      under /var/lib/dkms or /lib/modules is touched, nothing is loaded
#      here), and that module passes the e2e "record" scenario in the QEMU
#      guest, with the packaged hmb-fwsim, hmbtrace-cmd and plugin.
#   4. DKMS builds the patched nvme and hmb_trace.ko (nvme backend) from
#      the hmbtrace-nvme-dkms package's source (linux-source-6.1 from
#      /usr/src) and installs them into a temporary install tree holding a
#      copy of the kernel's own nvme modules (so DKMS's version check meets
#      them, as on a machine): the modules of the kernel's configuration
#      are there, and depmod resolves nvme, nvme-core, nvme-tcp and
#      hmb_trace to them. They are kept in OUT/nvme-modules:
#      scripts/test.sh's reference SSD stage runs the reset scenario on
#      them (HMB_SSD_MODULES). A kernel of a series with no patches
#      (6.13 here) is refused with the reason: hmb_trace.ko alone.
# Usage: tests/install/run.sh [--out DIR] [--debs DIR] [--no-qemu] [--no-dkms] [--keep]
#   --out DIR   work directory (default: build/install-check, emptied first)
#   --debs DIR  check the .debs already in DIR instead of building them
#   --no-qemu   stop after the DKMS build (no guest)
#   --no-dkms   stop before the DKMS build: steps 1 and 2 only (a chroot of
#               another release, mock/kernels/chroot.sh --tools, has no
#               headers of the kernel it runs on)
#   --keep      keep the unpacked root and the DKMS trees
# Ends with one line "N passed, M failed"; exits non-zero on any failure.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
# shellcheck source=mock/qemu/lib.sh
source mock/qemu/lib.sh

out=$repo/build/install-check
run_qemu=1
run_dkms=1
keep=0
debs_dir=""
while (($#)); do
	case "$1" in
	--out) out=${2:?}; shift 2 ;;
	--debs) debs_dir=$(cd "${2:?}" && pwd); shift 2 ;;
	--no-qemu) run_qemu=0; shift ;;
	--no-dkms) run_dkms=0; run_qemu=0; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	*) echo "install check: unknown option $1" >&2; exit 2 ;;
	esac
done

passed=0
failed=0
t_start=$(date +%s)
check() { # check NAME COMMAND...: one counted check; output indented
	local name=$1 rc=0 t0
	shift
	t0=$(date +%s)
	"$@" >"$out/check.log" 2>&1 || rc=$?
	if ((rc == 0)); then
		passed=$((passed + 1))
		echo "ok   $name ($(($(date +%s) - t0))s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name ($(($(date +%s) - t0))s, status $rc)"
	fi
	sed 's/^/     /' "$out/check.log" | tail -n 25
	return "$rc"
}
finish() {
	echo "(install check: $(($(date +%s) - t_start))s)"
	echo "$passed passed, $failed failed"
	((failed == 0 && passed > 0))
	exit
}

version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" meson.build)
deb_version=$(dpkg-parsechangelog -l debian/changelog -S Version)
dkms_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
nvme_dkms_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' kernel/patches/dkms.conf)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/src/hmbtrace-$version
root=$out/root

# One version everywhere: meson, debian/changelog, the two dkms.conf.
same_versions() {
	echo "meson $version, debian/changelog $deb_version, dkms.conf $dkms_version," \
		"kernel/patches/dkms.conf $nvme_dkms_version"
	[[ -n $version && $deb_version == "$version" && $dkms_version == "$version" &&
		$nvme_dkms_version == "$version" ]]
}
check "one version in meson.build, debian/changelog and both dkms.conf" same_versions || true

# 1. The packages, from a copy of the tree (the files git knows, committed
# or not): dpkg-buildpackage writes its .debs next to the source directory.
build_debs() {
	mkdir -p "$src"
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
			tar --null -T - -cf - | tar -C "$src" -xf -
	else
		tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$src" -xf -
	fi
	(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
		dpkg-buildpackage -us -uc -b >"$out/dpkg-buildpackage.log" 2>&1) ||
		{ tail -n 30 "$out/dpkg-buildpackage.log"; return 1; }
	local p
	for p in hmbtrace libtraceevent-plugin-hmb; do
		[[ -f $out/src/${p}_${deb_version}_$arch.deb ]] || { echo "no ${p} .deb"; return 1; }
	done
	for p in hmbtrace-dkms hmbtrace-nvme-dkms hmbtrace-dev; do
		[[ -f $out/src/${p}_${deb_version}_all.deb ]] || { echo "no ${p} .deb"; return 1; }
	done
}
if [[ -z $debs_dir ]]; then
	check "dpkg-buildpackage -us -uc -b builds the five packages" build_debs || finish
	debs_dir=$out/src
fi

debs=()
for p in hmbtrace libtraceevent-plugin-hmb hmbtrace-dkms hmbtrace-nvme-dkms hmbtrace-dev; do
	debs+=("$(ls "$debs_dir"/"${p}"_"${deb_version}"_*.deb)")
done
du -h "${debs[@]}" | sed "s|$debs_dir/||"

run_lintian() {
	lintian --tag-display-limit 0 "${debs[@]}" >"$out/lintian.txt" 2>&1 || true
	cat "$out/lintian.txt"
	echo "$(grep -c '^E: ' "$out/lintian.txt" || true) error(s), $(grep -c '^W: ' "$out/lintian.txt" || true) warning(s)"
	! grep -q '^E: ' "$out/lintian.txt"
}
check "lintian: no error" run_lintian || true

# 2. A clean root: the packages' files, then trace-cmd and the libraries.
copy_with_libs() { # copy_with_libs ROOT BINARY...: each binary and what ldd lists
	local r=$1 f lib
	shift
	for f in "$@"; do
		[[ -e $r$f ]] || install -D -m 0755 "$f" "$r$f"
		for lib in $(ldd "$r$f" | grep -o '/[^ ]*' | sort -u); do
			# Modes kept: the dynamic loader must stay executable.
			[[ -e $r$lib ]] || { mkdir -p "$r$(dirname "$lib")" && cp -L --preserve=mode "$lib" "$r$lib"; }
		done
	done
}
make_root() {
	local d
	for d in "${debs[@]}"; do dpkg -x "$d" "$root"; done
	# The packaged hmbtrace-cmd is already there: only its libraries are added.
	copy_with_libs "$root" "$(command -v trace-cmd)" /usr/bin/hmbtrace-cmd || return 1
	find "$root" -type f | sed "s|^$root||" | sort >"$out/root-files.txt"
	wc -l <"$out/root-files.txt"
	grep -E '^/usr/(bin|lib/[^/]+/traceevent|share/man/man1|include|share/pkgconfig|src|share/bash-completion)' \
		"$out/root-files.txt" | grep -v '^/usr/src/.*/kernel/' | head -n 40
}
check "packages unpacked into a clean root" make_root || finish

every_man_page_packaged() { # one man1 page per Documentation/man/*.1.adoc
	local adoc page missing=0
	for adoc in Documentation/man/*.1.adoc; do
		page=$(basename "$adoc" .adoc)
		if [[ -f $root/usr/share/man/man1/$page.gz ]]; then
			echo "$page.gz"
		else
			echo "missing: /usr/share/man/man1/$page.gz (from $adoc)"
			missing=1
		fi
	done
	((!missing))
}
check "every man page of Documentation/man is in the hmbtrace package" every_man_page_packaged || true

plugin_path=/usr/lib/$multiarch/traceevent/plugins/plugin_hmb.so
chroot_bin=$(command -v chroot)
in_root() { # runs a command in the root with an empty environment
	env -i PATH=/usr/bin:/bin HOME=/nonexistent LANG=C "$chroot_bin" "$root" "$@"
}

capture=tests/data/record-small.dat
trace_cmd_report_decodes() {
	[[ -f $root$plugin_path ]] || { echo "no $plugin_path in the package"; return 1; }
	cp "$capture" "$root/capture.dat"
	in_root trace-cmd report -i /capture.dat >"$out/report.txt" 2>"$out/report.err" ||
		{ cat "$out/report.err"; return 1; }
	# Records the plugin decoded from the capture's dictionary (without it,
	# trace-cmd prints event_id= and the payload in hex).
	grep -F "dictionary complete: 10 events" "$out/report.txt" &&
		grep -m1 -F "nand_program: die=5 plane=3 block=176 page=179 latency=807868" "$out/report.txt" &&
		grep -m1 -F "cmd_complete: qid=8 cid=1032 status=SUCCESS latency=97249" "$out/report.txt" ||
		return 1
	local undecoded
	undecoded=$(awk '/dictionary complete/ { done = 1 } done && /hmb_record:/ && /event_id=/' "$out/report.txt" | wc -l)
	echo "$undecoded records after the dictionary left undecoded"
	((undecoded == 0))
}
check "trace-cmd report decodes with the packaged plugin (no TRACEEVENT_PLUGIN_DIR)" \
	trace_cmd_report_decodes || true

hmbtrace_cmd_runs() {
	in_root hmbtrace-cmd --version || return 1
	in_root hmbtrace-cmd stat -i /capture.dat >"$out/stat.txt" || return 1
	head -n 5 "$out/stat.txt"
}
check "the packaged hmbtrace-cmd reads the capture" hmbtrace_cmd_runs || true

man_renders() {
	local page
	page=$(man -M "$root/usr/share/man" -w hmbtrace-cmd-stat) || return 1
	echo "$page"
	[[ $page == "$root"/usr/share/man/man1/hmbtrace-cmd-stat.1* ]] || return 1
	MANWIDTH=80 man -M "$root/usr/share/man" -P cat hmbtrace-cmd-stat 2>"$out/man.err" >"$out/man.txt" ||
		{ cat "$out/man.err"; return 1; }
	head -n 8 "$out/man.txt"
	grep -q 'hmbtrace-cmd-stat - per device' "$out/man.txt" && grep -q '^SYNOPSIS' "$out/man.txt" &&
		! grep -q 'warning' "$out/man.err"
}
check "man hmbtrace-cmd-stat renders the packaged page" man_renders || true

completion_completes() {
	local file=$root/usr/share/bash-completion/completions/hmbtrace-cmd
	[[ -f $file ]] || { echo "no $file"; return 1; }
	# hmbtrace-cmd on PATH runs the packaged binary in the root.
	mkdir -p "$out/bin"
	printf '#!/bin/sh\nexec env -i PATH=/usr/bin:/bin %q %q /usr/bin/hmbtrace-cmd "$@"\n' "$chroot_bin" "$root" \
		>"$out/bin/hmbtrace-cmd"
	chmod +x "$out/bin/hmbtrace-cmd"
	PATH=$out/bin:$PATH bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$1"
		complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"
			COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _hmbtrace_cmd; echo "${COMPREPLY[*]}"; }
		subs=$(complete_words hmbtrace-cmd st); echo "hmbtrace-cmd st<TAB>: $subs"
		opts=$(complete_words hmbtrace-cmd report --r); echo "hmbtrace-cmd report --r<TAB>: $opts"
		[[ $subs == "stat status stream" && $opts == "--raw --reorder-margin" ]]' _ "$file"
}
check "bash completion of the packaged hmbtrace-cmd" completion_completes || true

pkgconfig_builds_producer() {
	local cflags producer
	cflags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/share/pkgconfig \
		pkg-config --cflags hmbtrace) || return 1
	producer=$(PKG_CONFIG_LIBDIR=$root/usr/share/pkgconfig \
		pkg-config --variable=producer_source hmbtrace) || return 1
	echo "cflags: $cflags; producer_source: $producer"
	# shellcheck disable=SC2086 # cflags are words
	cc -std=c11 -ffreestanding -Wall -Wextra -Werror $cflags -c "$root$producer" -o "$out/producer.o"
}
check "hmbtrace-dev: pkg-config hmbtrace compiles the producer" pkgconfig_builds_producer || true

# 3. The module, built by DKMS from the package's source tree.
if ((!run_dkms)); then
	((keep)) || rm -rf "$root" "$out/src/hmbtrace-$version"
	finish
fi
kver=$(hmbq_kver)
dkms_tree=$out/dkms
module=""
dkms_builds() {
	local srcdir=$root/usr/src/hmbtrace-$version
	[[ -f $srcdir/dkms.conf ]] || { echo "no $srcdir/dkms.conf"; return 1; }
	[[ -d /lib/modules/$kver/build ]] || { echo "no headers for $kver: install linux-headers-amd64"; return 1; }
	mkdir -p "$dkms_tree/tree" "$dkms_tree/install" "$dkms_tree/keys"
	# dkms signs with a MOK it makes if missing: a throwaway one, here.
	export mok_signing_key=$dkms_tree/keys/mok.key mok_certificate=$dkms_tree/keys/mok.pub
	local opts=(--sourcetree "$root/usr/src" --dkmstree "$dkms_tree/tree" --installtree "$dkms_tree/install")
	dkms add -m hmbtrace -v "$version" "${opts[@]}" || return 1
	dkms build -m hmbtrace -v "$version" -k "$kver" "${opts[@]}" ||
		{ cat "$dkms_tree/tree/hmbtrace/$version/build/make.log"; return 1; }
	dkms status -m hmbtrace "${opts[@]}"
	module=$dkms_tree/tree/hmbtrace/$version/$kver/$(uname -m)/module/hmb_trace.ko
	modinfo -F vermagic "$module" || return 1
	[[ $(modinfo -F vermagic "$module") == "$kver "* ]]
}
check "dkms build of hmbtrace-dkms against linux-headers-$kver" dkms_builds || finish
module=$dkms_tree/tree/hmbtrace/$version/$kver/$(uname -m)/module/hmb_trace.ko

if ((run_qemu)); then
	# The record scenario takes its tools from the meson build dir that holds
	# hmb-fwsim: a dir with the packaged files in that layout.
	layout=$out/packaged-build
	install -D "$root/usr/bin/hmb-fwsim" "$layout/mock/fwsim/hmb-fwsim"
	install -D "$root/usr/bin/hmbtrace-cmd" "$layout/tools/hmbtrace-cmd/hmbtrace-cmd"
	install -D -m 0644 "$root$plugin_path" "$layout/plugins/traceevent/plugin_hmb.so"
	check "the DKMS-built module passes the e2e record scenario in the guest" \
		mock/qemu/run-scenario.sh record --module "$module" --fwsim "$layout/mock/fwsim/hmb-fwsim" \
		--out "$out/record" --quiet || true
fi

# 4. The patched nvme, built and installed by DKMS from hmbtrace-nvme-dkms.
nvme_out=$out/nvme-modules
nvme_itree=$dkms_tree/nvme-install
nvme_dkms_installs() {
	local srcdir=$root/usr/src/hmbtrace-nvme-$version force m want got
	[[ -f $srcdir/dkms.conf ]] || { echo "no $srcdir/dkms.conf"; return 1; }
	[[ -f /usr/src/linux-source-6.1.tar.xz ]] ||
		{ echo "no /usr/src/linux-source-6.1.tar.xz: scripts/install-deps.sh --kernel-source"; return 1; }
	# The kernel's own nvme where DKMS looks for it (its install tree).
	mkdir -p "$nvme_itree/$kver/kernel/drivers"
	cp -r "/lib/modules/$kver/kernel/drivers/nvme" "$nvme_itree/$kver/kernel/drivers/"
	export mok_signing_key=$dkms_tree/keys/mok.key mok_certificate=$dkms_tree/keys/mok.pub
	local opts=(--sourcetree "$root/usr/src" --dkmstree "$dkms_tree/tree" --installtree "$nvme_itree")
	dkms add -m hmbtrace-nvme -v "$version" "${opts[@]}" || return 1
	dkms build -m hmbtrace-nvme -v "$version" -k "$kver" "${opts[@]}" ||
		{ tail -n 30 "$dkms_tree/tree/hmbtrace-nvme/$version/build/make.log"; return 1; }
	# Installed as the package has DKMS do it: nvme's version ("1.0") is
	# the kernel's, so the package asks for a version override in
	# /usr/share/dkms/modules_to_force_install (read from / by dkms: given
	# here on the command line once the packaged file is checked).
	force=$(cat "$root/usr/share/dkms/modules_to_force_install/hmbtrace-nvme") || return 1
	[[ $force == hmbtrace-nvme_version-override ]] ||
		{ echo "modules_to_force_install/hmbtrace-nvme says '$force'"; return 1; }
	dkms install -m hmbtrace-nvme -v "$version" -k "$kver" --no-depmod --force-version-override \
		"${opts[@]}" || return 1
	dkms status -m hmbtrace-nvme "${opts[@]}"
	# The modules of the kernel's configuration, and hmb_trace.
	want=$(bash "$srcdir/kernel/patches/nvme-build.sh" --list --hmb-trace "$srcdir" "$kver" \
		"/lib/modules/$kver/build" | sort | paste -sd ' ')
	got=$(find "$nvme_itree/$kver/updates/dkms" -name '*.ko' -printf '%f\n' | sed 's/\.ko$//' |
		sort | paste -sd ' ')
	echo "installed in updates/dkms: $got"
	[[ $got == "$want" ]] || { echo "expected: $want"; return 1; }
	for m in nvme-core nvme nvme-fabrics nvme-tcp hmb_trace; do
		[[ " $got " == *" $m "* ]] || { echo "no $m.ko"; return 1; }
	done
	for m in $got; do
		[[ $(modinfo -F vermagic "$nvme_itree/$kver/updates/dkms/$m.ko") == "$kver "* ]] ||
			{ echo "$m.ko: vermagic is not $kver"; return 1; }
	done
	modinfo -F depends "$nvme_itree/$kver/updates/dkms/hmb_trace.ko" | grep -qw nvme ||
		{ echo "hmb_trace.ko has no nvme backend"; return 1; }
	rm -rf "$nvme_out"
	cp -r "$nvme_itree/$kver/updates/dkms" "$nvme_out"
}
check "dkms build and install of hmbtrace-nvme-dkms for $kver (linux-source-6.1)" nvme_dkms_installs || true

# What modprobe would load: depmod over the kernel's nvme and the package's.
nvme_depmod_prefers_package() {
	local r=$out/depmod-root d=$out/depmod-root/lib/modules/$kver line m
	[[ -d $nvme_out ]] || { echo "no modules installed by the previous check"; return 1; }
	rm -rf "$r"
	mkdir -p "$d/updates"
	cp -r "$nvme_itree/$kver/kernel" "$d/"
	cp -r "$nvme_out" "$d/updates/dkms"
	depmod -b "$r" "$kver" || return 1
	for m in nvme-core nvme nvme-tcp hmb_trace; do
		line=$(grep -E "^[^:]*/$m\.ko:" "$d/modules.dep") || { echo "no $m in modules.dep"; return 1; }
		echo "$line"
		[[ $line == "updates/dkms/$m.ko:"* ]] || return 1
	done
	grep -qE '^updates/dkms/hmb_trace.ko:.*updates/dkms/nvme.ko' "$d/modules.dep"
}
check "depmod resolves nvme, nvme-core, nvme-tcp and hmb_trace to hmbtrace-nvme-dkms's" \
	nvme_depmod_prefers_package || true

# A kernel series with no patches: refused with the reason, hmb_trace alone.
nvme_refuses_other_series() {
	local srcdir=$root/usr/src/hmbtrace-nvme-$version list
	list=$(bash "$srcdir/kernel/patches/nvme-build.sh" --list --fallback --hmb-trace "$srcdir" \
		6.13.0-1-amd64 "/lib/modules/$kver/build" 2>"$out/refuse.err") || return 1
	cat "$out/refuse.err"
	echo "modules: $list"
	[[ $list == hmb_trace ]] && grep -q 'no nvme-pci HMB trace series for Linux 6.13' "$out/refuse.err" &&
		grep -q 'there is one for 6.1 ' "$out/refuse.err"
}
check "hmbtrace-nvme-dkms refuses a kernel series with no patches, with the reason" \
	nvme_refuses_other_series || true

if ((!keep)); then
	rm -rf "$root" "$dkms_tree" "$out/src/hmbtrace-$version" "$out/depmod-root"
fi
finish
