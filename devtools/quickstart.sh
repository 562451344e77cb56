#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Set up, build and run droce on a Debian 12 machine.
#
#   devtools/quickstart.sh demo   install what is missing, build, run the demo
#   devtools/quickstart.sh test   install what is missing, build, run every
#                                 test, then again in an ASan+UBSan build
#                                 (clang), then the fuzz targets in a
#                                 build of their own, then the
#                                 unit, drivers and integration suites on
#                                 DPDK 25.11 built from source, then the
#                                 Debian packages built and installed
#   devtools/quickstart.sh lab    install what is missing, build, run
#                                 droce-lab run (two soft-RoCE guests,
#                                 droce-inject between them, every script
#                                 both ways) as root: the report is
#                                 build/lab-run/report/index.html
#
# Packages are installed with apt-get (as root, or through sudo) only when
# missing. The test entry ends with a line "N passed, N failed".

set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. devtools/test_counts.sh

# What building needs, and what the tests need on top.
BUILD_PKGS="gcc libc6-dev pkg-config meson ninja-build libdpdk-dev libbsd-dev
	libcmocka-dev libibverbs-dev librdmacm-dev"
TEST_PKGS="clang libclang-rt-14-dev python3 python3-scapy tshark ibverbs-utils
	perftest binutils ibverbs-providers iproute2 qemu-system-x86
	linux-image-amd64 busybox-static cpio kmod dpdk-dev rdmacm-utils qperf
	libfabric-bin ucx-utils openmpi-bin libopenmpi-dev python3-pyverbs
	python3-matplotlib"
# What droce-lab run's default setup takes on top of building: two
# soft-RoCE guests (qemu, a kernel with rdma_rxe, busybox, rdma-core's
# and perftest's tools) and the report's plots.
LAB_PKGS="python3 python3-matplotlib qemu-system-x86 linux-image-amd64
	busybox-static cpio kmod iproute2 perftest ibverbs-utils
	ibverbs-providers util-linux"
# What building DPDK from source takes (devtools/dpdk.sh), and building
# and proving the Debian packages (devtools/deb.sh).
DPDK_PKGS="python3-pyelftools libnuma-dev xz-utils"
DEB_PKGS="dpkg-dev debhelper lintian debootstrap"

# The DPDK release the suites run on besides the system's (Debian 12's
# 22.11): the newest LTS, built from devtools/dpdk/.
DPDK_NEWEST=25.11

# Fuzz time per fuzz target, in seconds (the test suite's bound).
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
# The fuzz targets (the fuzz suite's programs, tests/meson.build).
FUZZ_TARGETS="tests/fuzz_parse tests/fuzz_responder tests/fuzz_requester
	tests/fuzz_cm"

log() {
	printf '==> %s\n' "$*"
}

have_pkg() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null |
		grep -q 'install ok installed'
}

install_missing() {
	missing=""
	for p in "$@"; do
		have_pkg "$p" || missing="$missing $p"
	done
	if [ -z "$missing" ]; then
		log "packages: all present"
		return 0
	fi
	log "installing:$missing"
	if [ "$(id -u)" -eq 0 ]; then
		sudo=""
	elif command -v sudo >/dev/null 2>&1; then
		sudo="sudo"
	else
		echo "quickstart: need root (or sudo) to install:$missing" >&2
		return 1
	fi
	$sudo apt-get update -q
	# shellcheck disable=SC2086 # word splitting of the list is wanted
	$sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends $missing
}

# setup DIR [meson options...]: configure DIR once, reconfigure afterwards.
setup() {
	dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@"
	fi
}

demo() {
	# shellcheck disable=SC2086
	install_missing $BUILD_PKGS
	setup build
	ninja -C build
	log "RDMA between droce0 and droce1 (the embedded default: two devices"
	log "wired back to back in one process, no NIC, no hugepages)"
	build/app/droce-demo 2
}

lab() {
	# shellcheck disable=SC2086
	install_missing $BUILD_PKGS $LAB_PKGS
	setup build
	ninja -C build
	log "droce-lab run: two soft-RoCE guests, droce-inject between them,"
	log "every script both ways (in a network namespace of its own)"
	unshare -n sh -c 'ip link set lo up && exec app/lab/droce-lab run \
		-o build/lab-run --inject build/app/droce-inject "$@"' sh "$@"
}

# run_suite DIR [ARGS...]: meson test in DIR (with ARGS); adds its counts
# to passed/failed.
run_suite() {
	dir=$1
	shift
	out="$dir/meson-logs/quickstart-test.out"
	if meson test -C "$dir" --print-errorlogs "$@" >"$out" 2>&1; then :; fi
	cat "$out"
	grep -q '^Ok:' "$out" || echo "quickstart: no test summary from $dir" >&2
	# shellcheck disable=SC2046 # two numbers
	set -- $(meson_counts "$out")
	passed=$((passed + $1))
	failed=$((failed + $2))
}

# run_counted CMD...: a runner of droce's whose last line is "N passed,
# N failed"; adds its counts to passed/failed (none: one failure).
run_counted() {
	out=$(mktemp)
	"$@" 2>&1 | tee "$out"
	last=$(tail -n 1 "$out")
	rm -f "$out"
	case "$last" in
	*" passed, "*" failed")
		passed=$((passed + ${last%% *}))
		n=${last#* passed, }
		failed=$((failed + ${n% failed}))
		;;
	*)
		echo "quickstart: $* ended without its counts" >&2
		failed=$((failed + 1))
		;;
	esac
}

test_all() {
	passed=0
	failed=0
	# shellcheck disable=SC2086
	if ! install_missing $BUILD_PKGS $TEST_PKGS $DPDK_PKGS $DEB_PKGS; then
		echo "0 passed, 1 failed"
		exit 1
	fi

	log "build (gcc, warnings are errors)"
	if setup build -Dtests=true -Dwerror=true && ninja -C build; then
		log "test suite"
		run_suite build
	else
		echo "quickstart: build failed" >&2
		failed=$((failed + 1))
	fi

	log "ASan+UBSan build (clang)"
	export CC=clang
	if setup build-asan -Dtests=true -Dwerror=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=false &&
		ninja -C build-asan; then
		log "test suite under ASan+UBSan"
		run_suite build-asan
	else
		echo "quickstart: sanitizer build failed" >&2
		failed=$((failed + 1))
	fi

	# (a build of their own: libFuzzer's coverage, on all of droce, slows
	# the engine so that on two cores its QPs can no longer be held to
	# DCQCN's rates at incast's 2.5 Gb/s, and the suite's timed tests are
	# of the engine)
	log "fuzz build (clang, ASan+UBSan, libFuzzer), the fuzz targets" \
	    "${FUZZ_SECONDS} s each"
	# shellcheck disable=SC2086 # word splitting of the list is wanted
	if setup build-fuzz -Dtests=true -Dwerror=true \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dfuzz=true -Dfuzz_seconds="$FUZZ_SECONDS" &&
		ninja -C build-fuzz $FUZZ_TARGETS; then
		run_suite build-fuzz --no-rebuild --suite fuzz
	else
		echo "quickstart: fuzz build failed" >&2
		failed=$((failed + 1))
	fi
	unset CC

	log "DPDK $DPDK_NEWEST: built from source, droce's unit, drivers and" \
	    "integration suites on it (devtools/dpdk.sh)"
	run_counted devtools/dpdk.sh "$DPDK_NEWEST" test

	log "Debian packages: built, lintian, installed in a clean Debian 12" \
	    "(devtools/deb.sh)"
	run_counted devtools/deb.sh

	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

case "${1:-}" in
demo)
	demo
	;;
test)
	test_all
	;;
lab)
	shift
	lab "$@"
	;;
*)
	echo "usage: $0 demo|test|lab [SCRIPT...]" >&2
	exit 2
	;;
esac
