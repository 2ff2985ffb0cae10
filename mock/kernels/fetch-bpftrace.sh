#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A release's bpftrace as a bundle the QEMU guest can run next to Debian
# 12's user space: the bpftrace binary and every library it loads (LLVM,
# clang, libbpf, that release's glibc and loader), from packages of that
# release, never installed anywhere.
#
# Usage: mock/kernels/fetch-bpftrace.sh [SUITE]    (default sid)
# Prints the bundle's directory, to be put at /opt/bpfsid in the guest:
#   bpftrace   the binary, its ELF interpreter set to /opt/bpfsid/ld.so
#   ld.so      the release's dynamic loader
#   lib/       the libraries its loader lists for bpftrace
#   run        a wrapper: LD_LIBRARY_PATH=/opt/bpfsid/lib /opt/bpfsid/bpftrace
# The interpreter is patched in place (the path is shorter than
# /lib64/ld-linux-x86-64.so.2) rather than running the loader as a command,
# so that /proc/self/exe stays bpftrace.
#
# Cache: ~/.cache/hmbtrace/bpftrace/SUITE-VERSION; the packages come from
# the kernel matrix's private apt state of SUITE (lib.sh hmbk_apt_dir:
# apt-get install --download-only against an empty dpkg status, so the
# whole dependency closure, ~70 MB of .debs for sid's 0.27.1).
set -euo pipefail
# shellcheck source=mock/kernels/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

suite=$(hmbk_release "${1:-sid}") || hmbk_die "unknown release '${1:-}'"
apt=$(hmbk_apt_dir "$suite")
# shellcheck disable=SC2046 # one word per option
read -ra opts <<<"$(hmbk_apt_opts "$apt")"
version=$(apt-cache "${opts[@]}" show bpftrace:amd64 2>/dev/null | sed -n 's/^Version: //p' | head -1)
[[ -n $version ]] || hmbk_die "no bpftrace in $suite"
out=$hmbk_cache/bpftrace/$suite-$version
if [[ -x $out/bundle/bpftrace ]]; then
	echo "$out/bundle"
	exit 0
fi

mkdir -p "$hmbk_cache/bpftrace"
exec 9>"$hmbk_cache/bpftrace/.lock"
flock 9
if [[ ! -x $out/bundle/bpftrace ]]; then
	hmbk_log "fetching $suite's bpftrace $version and its libraries"
	rm -rf "$out"
	mkdir -p "$out/debs/partial"
	# The closure as apt resolves it for an empty system (no recommends).
	mapfile -t debs < <(apt-get "${opts[@]}" -o APT::Install-Recommends=false \
		-s install bpftrace:amd64 2>/dev/null | awk '$1 == "Inst" { print $2 }')
	((${#debs[@]})) || hmbk_die "apt-get could not resolve bpftrace in $suite"
	apt-get "${opts[@]}" -o APT::Install-Recommends=false -o Dir::Cache::archives="$out/debs" \
		-q -y --download-only install bpftrace:amd64 >"$out/download.log" 2>&1 ||
		{ tail -n 5 "$out/download.log" >&2; hmbk_die "apt-get download of bpftrace failed"; }
	mkdir -p "$out/root"
	for d in "$out"/debs/*.deb; do
		dpkg-deb -x "$d" "$out/root"
	done
	b=$out/bundle.new
	mkdir -p "$b/lib"
	libdir=$out/root/usr/lib/x86_64-linux-gnu
	ldso=$libdir/ld-linux-x86-64.so.2
	[[ -x $ldso ]] || hmbk_die "no loader in $suite's libc6"
	# The release's loader lists what bpftrace loads from the release's
	# libraries (it runs here: only the kernel is shared).
	"$ldso" --list --library-path "$libdir" "$out/root/usr/bin/bpftrace" >"$out/ldd.txt" ||
		hmbk_die "$ldso --list bpftrace failed"
	! grep -q 'not found' "$out/ldd.txt" || { cat "$out/ldd.txt" >&2; hmbk_die "a library is missing"; }
	awk '$2 == "=>" && $3 ~ /^\// { print $3 }' "$out/ldd.txt" | while read -r lib; do
		cp -L "$lib" "$b/lib/"
	done
	cp -L "$ldso" "$b/ld.so"
	cp "$out/root/usr/bin/bpftrace" "$b/bpftrace"
	python3 - "$b/bpftrace" /opt/bpfsid/ld.so <<-'EOF'
		# Overwrite PT_INTERP's path (ELF64, little-endian) with a shorter one.
		import struct, sys
		path, interp = sys.argv[1], sys.argv[2].encode() + b"\0"
		with open(path, "r+b") as f:
		    elf = f.read()
		    assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1
		    phoff, = struct.unpack_from("<Q", elf, 0x20)
		    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
		    for i in range(phnum):
		        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
		            "<IIQQQQ", elf, phoff + i * phentsize)
		        if p_type == 3:  # PT_INTERP
		            assert len(interp) <= p_filesz, "new interpreter path too long"
		            f.seek(p_offset)
		            f.write(interp.ljust(p_filesz, b"\0"))
		            break
		    else:
		        sys.exit("no PT_INTERP")
	EOF
	printf '#!/bin/sh\n# %s bpftrace %s (mock/kernels/fetch-bpftrace.sh)\nLD_LIBRARY_PATH=/opt/bpfsid/lib exec /opt/bpfsid/bpftrace "$@"\n' \
		"$suite" "$version" >"$b/run"
	chmod +x "$b/run"
	rm -rf "$out/root" "$out/debs"
	mv "$b" "$out/bundle"
	hmbk_log "bundle: $out/bundle ($(du -sh "$out/bundle" | cut -f1))"
fi
echo "$out/bundle"
