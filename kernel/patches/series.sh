#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Work on the nvme-pci HMB trace series as git commits.
#
# Usage: kernel/patches/series.sh repo DIR     a git repository in DIR: the
#                                              base (the parts of
#                                              linux-source-6.1 the series
#                                              touches) as one commit, then
#                                              the patches with git am
#        kernel/patches/series.sh export DIR   the commits on top of DIR's
#                                              base back into kernel/patches
#                                              (git format-patch); the cover
#                                              letter keeps its subject and
#                                              text, with a fresh shortlog
#
# The base is taken from verify.sh's extraction cache
# (build/kernel-patches/src; run verify.sh --no-guest once first).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
src=${HMB_PATCHES_SRC:-$repo/build/kernel-patches/src}
base_msg="linux-source-6.1 (base: the files the series touches)"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}
die() { echo "series.sh: $*" >&2; exit 1; }

(($# == 2)) || usage 2
cmd=$1
dir=$2

case "$cmd" in
repo)
	[[ -d "$src/drivers/nvme/host" ]] ||
		die "$src has no extracted source: run kernel/patches/verify.sh --no-guest first"
	[[ ! -e "$dir" ]] || die "$dir exists"
	mkdir -p "$dir/drivers/nvme" "$dir/include/linux"
	cp -a "$src/drivers/nvme/host" "$dir/drivers/nvme/"
	cp -a "$src/include/linux/nvme.h" "$dir/include/linux/"
	git -C "$dir" init -q
	git -C "$dir" add -A
	git -C "$dir" -c user.name=base -c user.email=base@invalid commit -q -m "$base_msg"
	git -C "$dir" am -q "$here"/0[0-9][0-9][1-9]-*.patch
	git -C "$dir" log --oneline
	;;
export)
	base=$(git -C "$dir" log --format=%H --grep="^$base_msg" | tail -n1)
	[[ -n "$base" ]] || die "$dir: no base commit '$base_msg'"
	cover=$here/0000-cover-letter.patch
	[[ -f "$cover" ]] || die "$cover missing"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git -C "$dir" format-patch -q --cover-letter -o "$tmp" "$base"
	# Subject and text from the old cover letter, the rest from the new.
	python3 - "$cover" "$tmp/0000-cover-letter.patch" <<-'EOF'
	import re, sys
	old = open(sys.argv[1]).read()
	new = open(sys.argv[2]).read()
	subj = re.search(r'^Subject: \[PATCH 0/\d+\] (.*)$', old, re.M).group(1)
	body = old.split('\n\n', 1)[1].split('\n\n' + re.search(
	    r'^\S.* \(\d+\):$', old, re.M).group(0), 1)[0]
	new = re.sub(r'\*\*\* SUBJECT HERE \*\*\*', lambda m: subj, new)
	new = new.replace('*** BLURB HERE ***', body)
	open(sys.argv[2], 'w').write(new)
	EOF
	rm -f "$here"/0[0-9][0-9][0-9]-*.patch
	cp "$tmp"/*.patch "$here/"
	ls "$here"/0*.patch
	;;
*) usage 2 ;;
esac
