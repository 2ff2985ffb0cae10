#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The project's test command: installs what is missing, builds, and runs
#   unit  - GoogleTest suites (meson suite "unit"), gcc, warnings as errors
#   asan  - the same suites built with clang + ASan + UBSan
#   browser - tests/browser: the HTML report of hmbtrace-cmd stat --html
#           opened in headless Chromium (network off), its DOM checked
#   fuzz  - each libFuzzer target for HMBTRACE_FUZZ_SECONDS (default 30)
#   e2e   - the QEMU scenarios: hmb_trace.ko in a Debian guest, verified
#           against hmb-fwsim's ground truth
#   demo  - the demo's QEMU half (mock/qemu/run-scenario.sh demo) and its
#           checks (without the guest under --no-e2e)
#   install - tests/install/run.sh: the Debian packages built, lintian,
#           installed into a clean root and used from there; the module
#           built by DKMS from the package passes the record scenario
#           (without the guest under --no-e2e); hmbtrace-nvme-dkms built
#           and installed by DKMS for 6.1 (its modules pass the reset
#           scenario in the reference SSD stage)
#   tools on trixie/sid - mock/kernels/build-tools.sh: in each release's
#           tools chroot (mock/kernels/chroot.sh SUITE --tools), the tools
#           built with -Werror, the unit suite, and the Debian packages
#           (tests/install/run.sh --no-dkms). Only with --full-matrix (two
#           builds of the tools, ~10 min each on 2 idle CPUs, estimated):
#           otherwise counted skipped; --full-matrix makes the chroots
#   kernel patches - kernel/patches/verify.sh: the nvme-pci series applies to
#           linux-source-6.1, builds with -Werror, is checkpatch clean, and
#           the patched nvme drives an emulated NVMe disk in the guest
#           (without the guest under --no-e2e)
#   kernel patches 6.12, 7.2 - kernel/patches/verify-series.sh: those
#           series apply to Debian's linux-source-6.12/-7.2 (downloaded
#           into ~/.cache/hmbtrace/linux-source), build with W=1 -Werror in
#           their release's chroot, are checkpatch --strict clean (no
#           guest; skipped when the source, headers or chroot are missing)
#   kernel matrix - mock/kernels: hmb_trace.ko built with W=1 (no warning)
#           against Debian 12's 6.1, Debian 13's 6.12 and sid's 7.2 (amd64;
#           6.12/7.2 in chroots of their release) and cross-built for arm64
#           against 6.1 and 7.2; the e2e scenarios record, reset,
#           flight-reset, clock, hostile and cmd-join in a guest booting
#           7.2 (and 6.12 with --full-matrix; without it that half is
#           counted skipped, with the command that runs it). Kernels and
#           chroots are cached in ~/.cache/hmbtrace (kernels, chroot); the
#           trixie chroot (6.12's module build and series check) is made
#           only with --full-matrix, and without it they are counted
#           skipped (the time budget of a fresh machine)
#   reference SSD - mock/qemu-nvme/run-ssd.sh record, record-mono,
#           record-global, causes, causes-off, quiet, reset, dump, hang,
#           assert, freeze, ctrl, and resets with --full-matrix (quiet: no
#           control command while nobody traces; record-CLOCK: the capture
#           on that trace clock; causes: the device's die model, why each
#           command above p99 was slow as stat says it against the device's
#           truth, causes-off: no blame without causes;
#           dump, hang, assert, freeze: the crash dumps of a reset, a hung
#           queue, a firmware assert and a firmware freeze on a latency
#           outlier, checked against the device): the
#           patched nvme-pci and hmb_trace.ko on Debian's QEMU 7.2 patched to
#           have an NVMe HMB and the trace capability (built once, cached in
#           ~/.cache/hmbtrace/qemu-nvme; skipped under --no-e2e); then
#           the reset scenario on the modules hmbtrace-nvme-dkms installed
#           in the install stage (skipped without it)
#   nvme package 6.12, 7.2 - tests/install/nvme-series.sh: DKMS builds
#           and installs hmbtrace-nvme-dkms in the trixie/sid chroot for
#           Debian's 6.12/7.2 kernel, and its modules run in a guest of
#           that kernel on the reference SSD (trace area placed, reset,
#           transports load). Only with --full-matrix (time budget);
#           otherwise counted skipped
#   reference SSD 7.2, 6.12 - run-ssd.sh record, reset, ctrl booting
#           sid's 7.2 and trixie's 6.12 with their series (kernel/patches/
#           7.2, 6.12: nvme-pci's auxiliary device, hmb_trace.ko bound to
#           it); only with --full-matrix (4-5 min a scenario on the loaded
#           2-CPU machine, the first adds the series and module builds), otherwise counted
#           skipped (one each); 6.12 also needs the trixie chroot
#   debug kernel - the reference SSD scenarios record-global, reset, dump,
#           assert, freeze, ctrl, resets and the
#           e2e scenario hostile on the debug kernel (mock/debug-kernel:
#           Debian's linux-source-6.1 with the nvme-pci series, lockdep,
#           DEBUG_ATOMIC_SLEEP, KASAN, DEBUG_OBJECTS, the workqueue
#           watchdog, DMA-API debugging); any WARNING, BUG, lockdep, KASAN,
#           ODEBUG or watchdog report in the guest's dmesg fails a
#           scenario. Runs only with --debug-kernel, which builds the
#           kernel first when ~/.cache/hmbtrace/debug-kernel lacks it (a
#           full kernel build: mock/qemu/README.md says how long one took;
#           a change of the series alone is rebuilt incrementally);
#           otherwise counted skipped. Skipped under --no-e2e.
# Usage: scripts/test.sh [--no-e2e] [--no-fuzz] [--no-install] [--full-matrix]
#                       [--debug-kernel]
# Ends with one line "N passed, M failed" over every test it ran
# (", K skipped" added when a stage could not run, e.g. no linux-source-6.1).
set -euo pipefail
cd "$(dirname "$0")/.."

run_e2e=1
run_fuzz=1
run_install=1
build_debug_kernel=0
full_matrix=0
for arg in "$@"; do
	case "$arg" in
	--full-matrix) full_matrix=1 ;;
	--no-e2e) run_e2e=0 ;;
	--no-fuzz) run_fuzz=0 ;;
	--no-install) run_install=0 ;;
	--debug-kernel) build_debug_kernel=1 ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	*) echo "test.sh: unknown option $arg" >&2; exit 2 ;;
	esac
done

passed=0
failed=0
skipped=0
# Adds the results of one meson build dir's last test run to the totals.
# A run that left no log, or no result in it, counts as a failure: the
# tests of that stage did not run, which must not read as "0 failed".
count_meson() {
	local log=$1/meson-logs/testlog.json what=$2 p f
	if [[ ! -f $log ]]; then
		echo "$what: no test log $log — meson test did not run" >&2
		failed=$((failed + 1))
		return
	fi
	p=$(grep -c '"result": "OK"' "$log" || true)
	f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
	if ((p + f == 0)); then
		echo "$what: no test results in $log — no test of the suite ran" >&2
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}
stage() { printf '\n==== %s\n' "$*"; }
# count_tagged WHAT TAG COMMAND...: runs a runner that ends with a line
# "TAG: N passed, M failed" and exits 77 when it cannot run (counted
# skipped). No such line, or a failing status with 0 failed, counts as a
# failure: a failure that left no "not ok" line still fails the stage.
count_tagged() {
	local what=$1 tag=$2 out rc=0 line
	shift 2
	out=$(mktemp)
	"$@" 2>&1 | tee "$out" || rc=$?
	line=$(grep -E "^$tag: [0-9]+ passed, [0-9]+ failed" "$out" | tail -1 || true)
	rm -f "$out"
	if ((rc == 77)); then
		echo "$what: skipped (reason above)" >&2
		skipped=$((skipped + 1))
	elif [[ -z $line ]]; then
		echo "$what: $1 reported no results (status $rc)" >&2
		failed=$((failed + 1))
	else
		line=${line#"$tag": }
		passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
		failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
		if ((rc != 0)) && [[ $(echo "$line" | cut -d' ' -f3) == 0 ]]; then
			failed=$((failed + 1))
		fi
	fi
}
# count_runner WHAT COMMAND...: runs a runner that ends with a line
# "N passed, M failed" and adds it to the totals; no such line, or nothing
# run, counts as a failure.
count_runner() {
	local what=$1 out line
	shift
	out=$(mktemp)
	"$@" 2>&1 | tee "$out" || true
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
	rm -f "$out"
	if [[ -z $line ]]; then
		echo "$what: the runner did not report results" >&2
		failed=$((failed + 1))
	elif [[ $line == "0 passed, 0 failed" ]]; then
		echo "$what: the runner ran nothing" >&2
		failed=$((failed + 1))
	else
		passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
		failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
	fi
}

stage "dependencies"
deps=(--kernel --package --qemu-source --browser)
((build_debug_kernel)) && deps+=(--debug-kernel)
scripts/install-deps.sh "${deps[@]}"

stage "unit (gcc, -Werror)"
scripts/build.sh
rm -f build/meson-logs/testlog.json
meson test -C build --suite unit --print-errorlogs || true
count_meson build "unit (gcc)"

stage "browser (hmbtrace-cmd stat --html in headless Chromium)"
count_runner browser tests/browser/html_report_test.py build/tools/hmbtrace-cmd/hmbtrace-cmd \
	tools/hmbtrace-cmd/testdata/cmd-join-small.dat build/browser \
	--causes build/tools/hmbtrace-cmd/die-model.hmbdump

stage "unit (clang, ASan + UBSan)"
if [[ ! -f build-asan/build.ninja ]]; then
	CC=clang CXX=clang++ meson setup build-asan --werror -Db_sanitize=address,undefined \
		-Db_lundef=false -Dfuzz=true -Dbenchmarks=disabled \
		-Dfuzz_seconds="${HMBTRACE_FUZZ_SECONDS:-30}"
else
	# -Dfuzz=true too: a build-asan set up without it has no fuzz suite.
	meson configure build-asan -Dfuzz=true -Dfuzz_seconds="${HMBTRACE_FUZZ_SECONDS:-30}"
fi
ninja -C build-asan
rm -f build-asan/meson-logs/testlog.json
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --suite unit --print-errorlogs || true
count_meson build-asan "unit (clang, ASan + UBSan)"

if ((run_fuzz)); then
	stage "fuzz (${HMBTRACE_FUZZ_SECONDS:-30} s per target)"
	rm -f build-asan/meson-logs/testlog.json
	meson test -C build-asan --suite fuzz --print-errorlogs || true
	count_meson build-asan "fuzz"
fi

if ((run_e2e)); then
	stage "e2e (QEMU guest, Debian kernel, hmb_trace.ko)"
	make -s -C kernel/hmb_trace
	count_runner e2e tests/e2e/run-all.sh build
	# The demo's guest half, with its checks (a joined command, a marker in
	# the timeline, no loss), so that scripts/demo.sh cannot rot.
	stage "demo (mock/qemu/run-scenario.sh demo)"
	if mock/qemu/run-scenario.sh demo --fwsim build/mock/fwsim/hmb-fwsim --quiet; then
		passed=$((passed + 1))
	else
		echo "demo: failed (run directory build/qemu-runs/demo)" >&2
		failed=$((failed + 1))
	fi
fi

if ((run_install)); then
	stage "install (Debian packages, DKMS, QEMU guest)"
	install_args=()
	((run_e2e)) || install_args+=(--no-qemu)
	count_runner install tests/install/run.sh "${install_args[@]}"
fi

stage "kernel matrix (hmb_trace.ko on 6.1, 6.12, 7.2; arm64 6.1, 7.2)"
# Each build counts once: W=1, any warning fails it (mock/kernels/README.md).
km_t0=$SECONDS
# Debian 13's half (6.12: its chroot, kernel and source) is made here only
# with --full-matrix: made from nothing it would take the test command past
# its 60 min on a fresh 2-CPU machine. Once made (cached), it runs always.
trixie_ok=$full_matrix
mock/kernels/chroot.sh trixie --cached >/dev/null && trixie_ok=1
((trixie_ok)) || {
	echo "kernel matrix: SKIPPED the 6.12 module build (no trixie chroot cached;" \
		"time budget): run scripts/test.sh --full-matrix, or mock/kernels/build-module.sh trixie" >&2
	skipped=$((skipped + 1))
}
for km in "host" "trixie" "sid" "bookworm --arch arm64" "sid --arch arm64"; do
	[[ $km != trixie ]] || ((trixie_ok)) || continue
	# shellcheck disable=SC2086 # KERNEL [--arch A]
	if mock/kernels/build-module.sh $km >/dev/null; then
		passed=$((passed + 1))
	else
		echo "kernel matrix: build-module.sh $km failed" >&2
		failed=$((failed + 1))
	fi
done
echo "kernel matrix: module builds took $((SECONDS - km_t0)) s"
# Measured 2026-12-03 on the shared 2-CPU machine (load average 10-20):
# cold, fetching the kernels ~4 min each (6.12, 7.2; arm64 headers ~1 min
# each) and making each chroot 7-9 min; warm, the five builds 60-80 s each
# (9-18 CPU-s) and the six scenarios 6 min a kernel. 6.12's scenarios
# would take the test command past its 60 min: --full-matrix.
km_scenarios=(record reset flight-reset clock hostile cmd-join)
km_guest=(sid)
((full_matrix)) && km_guest=(trixie sid)
if ((run_e2e)); then
	for km in "${km_guest[@]}"; do
		km_t0=$SECONDS
		HMBTRACE_KVER=$km count_runner "e2e on $km" tests/e2e/run-all.sh build \
			"${km_scenarios[@]}"
		echo "kernel matrix: e2e on $km took $((SECONDS - km_t0)) s"
	done
fi
if ((!run_e2e || !full_matrix)); then
	# Not run: counted skipped, never passed.
	echo "kernel matrix: SKIPPED the e2e scenarios on trixie (6.12)$( ((run_e2e)) || echo ' and sid (7.2)')" \
		"(time budget of the test command): run them with" \
		"HMBTRACE_KVER=trixie tests/e2e/run-all.sh build ${km_scenarios[*]}," \
		"or scripts/test.sh --full-matrix" >&2
	skipped=$((skipped + 1))
	((run_e2e)) || skipped=$((skipped + 1))
fi

stage "tools on trixie/sid (chroot: build, unit suite, packages)"
# mock/kernels/build-tools.sh: the user-space tools built (-Werror) and
# unit-tested against Debian 13's and sid's libraries, compiler and meson
# in each release's tools chroot, and their Debian packages built and used
# from a clean root there. Only with --full-matrix (the chroots ~6-9 min
# each to make, ~1 GB; two more full builds of the tools, ~10 min each on
# 2 idle CPUs, estimated): otherwise counted skipped, never passed.
for ts in trixie sid; do
	if ((!full_matrix)); then
		echo "tools on $ts: SKIPPED (time budget of the test command): run" \
			"scripts/test.sh --full-matrix, or mock/kernels/build-tools.sh --make $ts" >&2
		skipped=$((skipped + 1))
		continue
	fi
	tt0=$SECONDS
	tools_make=()
	mock/kernels/chroot.sh "$ts" --tools --cached >/dev/null || tools_make=(--make)
	count_tagged "tools on $ts" tools-chroot mock/kernels/build-tools.sh "${tools_make[@]}" "$ts"
	echo "tools on $ts: took $((SECONDS - tt0)) s"
done

stage "kernel patches (nvme-pci HMB trace series)"
kp_args=()
((run_e2e)) || kp_args=(--no-guest)
count_tagged "kernel patches" kernel-patches kernel/patches/verify.sh "${kp_args[@]}"

# ~90 s each with the source and chroots cached (the first run downloads
# ~160 MB per series and extracts it, ~1 more min each).
for ks in 6.12 7.2; do
	stage "kernel patches $ks (nvme-pci HMB trace series, no guest)"
	if [[ $ks == 6.12 ]] && ((!trixie_ok)); then
		echo "kernel patches 6.12: SKIPPED (no trixie chroot cached; time budget):" \
			"run scripts/test.sh --full-matrix, or kernel/patches/verify-series.sh 6.12" >&2
		skipped=$((skipped + 1))
		continue
	fi
	count_tagged "kernel patches $ks" "kernel-patches-$ks" kernel/patches/verify-series.sh "$ks"
done

if ((run_e2e)); then
	# The first run builds QEMU (~8 min of 2 idle CPUs); then ~1 min each.
	stage "reference SSD (mock/qemu-nvme: QEMU NVMe with HMB and trace capability)"
	# quiet: ~2 min (20 s of nobody tracing, then tracing, then not: 0
	# vendor commands idle). record-mono and record-global: both buffers on
	# that trace clock, every command joined as on the default (~1 min each).
	# dump: nobody tracing, a reset: the crash dump checked against the
	# device (~1 min). hang: a queue hangs, nvme times out and resets:
	# the dump lists every command the device held; assert: the firmware
	# restarts its area on its own: a dump of the ended generation; freeze:
	# nobody tracing, a slow command freezes the firmware's rings, the
	# fw_freeze dump holds its records and N after per core, re-armed (~1
	# min each).
	# resets (8 resets in a row with I/O and memory pressure, ~3 min):
	# only with --full-matrix (time budget), counted skipped otherwise.
	# causes: the die model with GC, read retries and thermal throttling
	# (hmb.causes=on) under a mixed load, recorded: for every command above
	# its opcode's p99, the cause hmbtrace-cmd stat names for its longest
	# wait is the device's truth for >= 99 %, its stages add up to the
	# split's firmware part; causes-off: the same load with the causes
	# switched off, nothing blamed above queueing (~65 s each on a shared host: ~2 min for both).
	ssd_list=(record record-mono record-global causes causes-off quiet reset dump hang assert freeze ctrl)
	if ((full_matrix)); then
		ssd_list+=(resets)
	else
		echo "reference SSD: SKIPPED resets (time budget): run scripts/test.sh --full-matrix," \
			"or mock/qemu-nvme/run-ssd.sh resets" >&2
		skipped=$((skipped + 1))
	fi
	for s in "${ssd_list[@]}"; do
		ssd_rc=0
		mock/qemu-nvme/run-ssd.sh "$s" || ssd_rc=$?
		case $ssd_rc in
		0) passed=$((passed + 1)) ;;
		77) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	done
	# The patched nvme of the hmbtrace-nvme-dkms package, as DKMS built and
	# installed it in the install stage (tests/install/run.sh keeps the
	# modules): the reset scenario on them, nvme-fabrics and nvme-tcp
	# loaded on the patched nvme-core too. The same recipe
	# (kernel/patches/nvme-build.sh) is scripts/install-nvme-hmb-trace.sh's.
	# Measured 2026-12-03 (load ~20): the DKMS build and install in the
	# install stage 142 s, this scenario 50 s with verify.sh's build cached.
	ssd_rc=0
	nvme_pkg=$PWD/build/install-check/nvme-modules
	if ((run_install)) && [[ -f $nvme_pkg/nvme.ko ]]; then
		HMB_SSD_MODULES=$nvme_pkg mock/qemu-nvme/run-ssd.sh reset || ssd_rc=$?
	elif ((run_install)); then
		echo "reference SSD: no $nvme_pkg/nvme.ko: hmbtrace-nvme-dkms's DKMS install failed (install stage)" >&2
		ssd_rc=1
	else
		echo "reference SSD: SKIPPED the reset scenario on hmbtrace-nvme-dkms's modules (--no-install)" >&2
		ssd_rc=77
	fi
	case $ssd_rc in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
fi

# hmbtrace-nvme-dkms on 6.12 and 7.2: DKMS in the release's chroot, the
# modules in a guest of that kernel. Only with --full-matrix: measured
# 2026-12-03 (load ~20) 684 s for 6.12 and 571 s for 7.2, most of it the
# DKMS build of 12 modules in the chroot.
for ks in 6.12 7.2; do
	stage "nvme package $ks (hmbtrace-nvme-dkms: DKMS in the chroot, guest)"
	if ((!full_matrix || !run_install)); then
		echo "nvme package $ks: SKIPPED (time budget): run scripts/test.sh --full-matrix," \
			"or tests/install/run.sh then tests/install/nvme-series.sh $ks" >&2
		skipped=$((skipped + 1))
		continue
	fi
	ns_args=()
	((run_e2e)) || ns_args=(--no-guest)
	count_tagged "nvme package $ks" "nvme-dkms-$ks" tests/install/nvme-series.sh "$ks" "${ns_args[@]}"
done

if ((run_e2e)); then
	# The 6.12 and 7.2 series with their reader (nvme-pci's auxiliary
	# device). Measured 2026-12-03 on the shared 2-CPU machine (load
	# average 14-20): 4-5 min a scenario with the series and module
	# builds cached (6.12: ctrl 281 s, reset 258 s; guests 64-122 s), and
	# the first run after a change of either rebuilds them (7.2: reset
	# 770 s, ctrl 754 s, record 779 s): ~13 min a kernel at best, too much
	# for the 60 min budget: --full-matrix.
	for km in sid trixie; do
		stage "reference SSD on $km (its nvme-pci series, hmb_trace.ko on the auxiliary device)"
		if ((!full_matrix)) || { [[ $km == trixie ]] && ((!trixie_ok)); }; then
			echo "reference SSD on $km: SKIPPED (time budget): run scripts/test.sh --full-matrix," \
				"or HMBTRACE_KVER=$km mock/qemu-nvme/run-ssd.sh record|reset|ctrl" >&2
			skipped=$((skipped + 1))
			continue
		fi
		for s in record reset ctrl; do
			ssd_rc=0
			ssd_t0=$SECONDS
			HMBTRACE_KVER=$km mock/qemu-nvme/run-ssd.sh "$s" || ssd_rc=$?
			echo "reference SSD on $km: $s took $((SECONDS - ssd_t0)) s (status $ssd_rc)"
			case $ssd_rc in
			0) passed=$((passed + 1)) ;;
			77) skipped=$((skipped + 1)) ;;
			*) failed=$((failed + 1)) ;;
			esac
		done
	done
fi

if ((run_e2e)); then
	# The debug kernel: built once, cached (a change of the series alone is
	# an incremental build); only with --debug-kernel.
	stage "debug kernel (lockdep, KASAN, DEBUG_OBJECTS: reference SSD, hostile)"
	dk_rc=0
	((build_debug_kernel)) &&
		{ dk=$(mock/debug-kernel/build.sh 2>build/debug-kernel-build.log) || dk_rc=$?; }
	if ((!build_debug_kernel)); then
		# Not run: counted skipped, never passed. Its guests take ~80 s to
		# boot each, and a fresh machine would build the kernel first.
		echo "debug kernel: skipped: run scripts/test.sh --debug-kernel (builds the kernel once, cached)" >&2
		skipped=$((skipped + 1))
	elif ((dk_rc == 77)); then
		sed 's/^/    /' build/debug-kernel-build.log | tail -n 3
		echo "debug kernel: skipped: not built (build it once with mock/debug-kernel/build.sh, a full kernel build, or run scripts/test.sh --debug-kernel)" >&2
		skipped=$((skipped + 1))
	elif ((dk_rc != 0)); then
		tail -n 20 build/debug-kernel-build.log
		echo "debug kernel: mock/debug-kernel/build.sh failed (log: build/debug-kernel-build.log)" >&2
		failed=$((failed + 1))
	else
		echo "debug kernel: $dk"
		# KASAN and lockdep make the guest slower: longer guest timeouts,
		# and a busy firmware it can drain (resets: at the default 2000
		# Hz the drain and the trace_pipe reader took both vCPUs and the
		# scenario never reached its first reset; at 200 Hz ftrace
		# overwrote 86760 events the reader did not take in time; at 20
		# Hz it passed in 890 s of guest time).
		# The ELF vmlinux extracted from its bzImage does not boot (QEMU
		# ends at once, not yet understood): boot the bzImage.
		export HMBTRACE_QEMU_TIMEOUT_SCALE=4 HMBTRACE_QEMU_BZIMAGE=1 HMB_SSD_MIX_HZ=20
		# record-global, not record: this kernel keeps ftrace's default
		# "local" clock although the guest's TSCs are unsynchronised, so
		# the nvme events of one vCPU and the fit made on the other
		# disagree by up to a tick, more than a join can bridge (Debian's
		# kernel switches to "global" itself). resets: 8 resets in a row
		# with memory pressure, the hazards lockdep and the workqueue
		# checks are here for. assert and freeze: the dumps taken from a
		# work item (fw_restart, fw_freeze). Not hang: a command timeout
		# makes 6.1's lockdep report nvme-core's own chain (timeout_work
		# -> shutdown_lock -> namespaces_rwsem, nvme_timeout() against
		# nvme_sync_queues(); no hmb_trace lock in it; upstream removed it
		# with SRCU, which 6.12 and 7.2 have), and lockdep is off for the
		# rest of the boot (mock/qemu/README.md).
		for s in record-global reset dump assert freeze ctrl resets; do
			ssd_rc=0
			HMBTRACE_KERNEL_DIR=$dk mock/qemu-nvme/run-ssd.sh "$s" || ssd_rc=$?
			case $ssd_rc in
			0) passed=$((passed + 1)) ;;
			77) skipped=$((skipped + 1)) ;;
			*) failed=$((failed + 1)) ;;
			esac
		done
		HMBTRACE_KERNEL_DIR=$dk count_runner "e2e on the debug kernel" \
			tests/e2e/run-all.sh build hostile
		unset HMBTRACE_QEMU_TIMEOUT_SCALE HMBTRACE_QEMU_BZIMAGE HMB_SSD_MIX_HZ
	fi
fi

echo
if ((skipped)); then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
((failed == 0 && passed > 0))
