#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# droce on a DPDK of another release than the system's: build that DPDK
# from source into a prefix, with only what droce needs (its libraries,
# the bus, mempool and net drivers its configurations and tests use, and
# the driver headers net_fault is written against), then droce against
# it through PKG_CONFIG_PATH, and run droce's tests there.
#
# Usage: devtools/dpdk.sh [-t TARBALL] [-d DIR] VERSION [build|test|env]
#        devtools/dpdk.sh pack TARBALL
#
#   VERSION  24.11 or 25.11: the source in devtools/dpdk/ (DPDK's own
#            release tarball, less what droce's build never reads), or
#            with -t, any DPDK release tarball of that version
#   build    DPDK into DIR/prefix (once: again only if its source
#            changed) and droce against it into DIR/droce
#   test     build, then droce's unit, drivers and integration suites;
#            the last line is "N passed, N failed"
#   env      the environment that builds and runs against DIR/prefix
#   DIR      default build-dpdk-VERSION
#   pack     write devtools/dpdk/<name>-min.tar.xz from DPDK's tarball
#
# e.g.   devtools/dpdk.sh 25.11 test
#        devtools/dpdk.sh -t ~/dpdk-24.11.6.tar.xz 24.11 test
#        eval "$(devtools/dpdk.sh 25.11 env)"; build-dpdk-25.11/droce/app/droce-demo
#
# It needs Debian's python3-pyelftools and libnuma-dev (quickstart.sh
# installs them); meson runs /usr/bin/python3, which has the former.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. devtools/test_counts.sh

# What DPDK builds for droce: the libraries besides the mandatory ones,
# and the drivers (the vdev and PCI buses, the ring mempool, and the
# net drivers of config/ and of the tests).
DPDK_LIBS=cfgfile,gso
DPDK_DRIVERS=bus/vdev,bus/pci,mempool/ring,net/ring,net/memif,net/af_packet,net/tap,net/af_xdp

usage() {
	sed -n '/^# Usage/,/^# e.g./p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

log() {
	printf '==> %s\n' "$*"
}

# pack TARBALL: DPDK's release tarball less what a build with the
# options above never reads (docs, apps, examples, tests, the sources
# of other drivers: their directories and meson.build files stay, as
# meson walks them), packed reproducibly.
pack() {
	src=$1
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	tar -C "$work" -xf "$src"
	name=$(ls "$work")
	d=$work/$name
	[ -f "$d/VERSION" ] || { echo "$src: no DPDK source" >&2; exit 1; }
	keep=$(echo "$DPDK_DRIVERS" | tr , ' ')
	find "$d/drivers" -mindepth 3 -type f ! -name meson.build |
	while read -r f; do
		rel=${f#"$d"/drivers/}
		k=0
		for drv in $keep; do
			case $rel in "$drv"/*) k=1 ;; esac
		done
		[ $k = 1 ] || rm -f "$f"
	done
	find "$d/doc" "$d/examples" -type f ! -name meson.build -delete
	find "$d/examples" -mindepth 1 -type d -empty -delete
	for a in "$d"/app/*/; do rm -rf "$a"; done
	rm -rf "$d/dts" "$d/.ci" "$d/devtools" "$d/.github"
	out=$top/devtools/dpdk/$name-min.tar.xz
	tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime=@0 -cf - "$name" | xz -9 -T1 >"$out"
	log "$out: $(du -h "$out" | cut -f1), from $(basename "$src")" \
	    "($(sha256sum "$src" | cut -c1-16)...)"
}

# The environment of a DPDK in prefix $1: pkg-config finds it, and the
# loader its libraries (what ldconfig would do for an install in /usr).
dpdk_env() {
	libdir=$(ls -d "$1"/lib/*/pkgconfig "$1"/lib/pkgconfig 2>/dev/null |
		head -n 1)
	libdir=${libdir%/pkgconfig}
	echo "PKG_CONFIG_PATH=$libdir/pkgconfig; export PKG_CONFIG_PATH"
	echo "LD_LIBRARY_PATH=$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH};" \
	     "export LD_LIBRARY_PATH"
}

# build_dpdk TARBALL PREFIX: unless PREFIX holds a build of this source
build_dpdk() {
	sum=$(sha256sum "$1" | cut -d' ' -f1)
	stamp=$2/.droce-source
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
		log "DPDK in $2: built from $(basename "$1") already"
		return 0
	fi
	rm -rf "$2" "$dir/src"
	mkdir -p "$dir/src"
	tar -C "$dir/src" -xf "$1"
	srcdir=$(ls -d "$dir"/src/*/)
	log "DPDK from $(basename "$1") into $2"
	start=$(date +%s)
	# (Debian's python3 has the pyelftools DPDK's build needs)
	PATH=/usr/bin:$PATH meson setup "$dir/src/build" "$srcdir" \
		--prefix="$2" -Dtests=false -Ddisable_apps='*' \
		-Denable_libs="$DPDK_LIBS" -Denable_drivers="$DPDK_DRIVERS" \
		-Denable_driver_sdk=true >"$dir/dpdk-setup.log" 2>&1 ||
		{ tail -n 20 "$dir/dpdk-setup.log"; return 1; }
	ninja -C "$dir/src/build" >"$dir/dpdk-build.log" 2>&1 ||
		{ tail -n 20 "$dir/dpdk-build.log"; return 1; }
	meson install -C "$dir/src/build" --quiet >"$dir/dpdk-install.log" \
		2>&1 || { tail -n 20 "$dir/dpdk-install.log"; return 1; }
	echo "$sum" >"$stamp"
	log "DPDK built and installed in $(($(date +%s) - start)) s" \
	    "($(grep -c '^\[' "$dir/dpdk-build.log") build steps)"
	rm -rf "$dir/src"
}

build_droce() {
	eval "$(dpdk_env "$prefix")"
	if [ -f "$dir/droce/build.ninja" ]; then
		meson configure "$dir/droce" -Dtests=true -Dwerror=true >/dev/null
	else
		meson setup "$dir/droce" -Dtests=true -Dwerror=true
	fi
	start=$(date +%s)
	ninja -C "$dir/droce"
	log "droce built against DPDK $(pkg-config --modversion libdpdk) in" \
	    "$(($(date +%s) - start)) s"
}

# The suites, counted as quickstart.sh counts them (test_counts.sh).
test_droce() {
	eval "$(dpdk_env "$prefix")"
	out=$dir/droce/meson-logs/dpdk-test.out
	if meson test -C "$dir/droce" --print-errorlogs --suite unit \
		--suite drivers --suite integration >"$out" 2>&1; then :; fi
	cat "$out"
	# shellcheck disable=SC2046 # two numbers
	set -- $(meson_counts "$out")
	echo "$1 passed, $2 failed"
	[ "$2" -eq 0 ]
}

tarball=""
dir=""
while getopts t:d:h opt; do
	case $opt in
	t) tarball=$OPTARG ;;
	d) dir=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
if [ "$1" = pack ]; then
	[ $# -eq 2 ] || usage
	pack "$2"
	exit 0
fi
version=$1
what=${2:-test}
if [ -z "$tarball" ]; then
	tarball=$(ls devtools/dpdk/dpdk-"$version".*-min.tar.xz 2>/dev/null |
		tail -n 1)
	[ -n "$tarball" ] || { echo "no DPDK $version in devtools/dpdk/" \
		"(there: $(ls devtools/dpdk | grep -o '[0-9]*\.[0-9]*' |
		sort -u | tr '\n' ' ')); -t TARBALL gives one" >&2; exit 1; }
fi
[ -f "$tarball" ] || { echo "no $tarball" >&2; exit 1; }
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
dir=${dir:-build-dpdk-$version}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
prefix=$dir/prefix

case $what in
build)
	build_dpdk "$tarball" "$prefix"
	build_droce
	;;
test)
	build_dpdk "$tarball" "$prefix"
	build_droce
	test_droce
	;;
env)
	dpdk_env "$prefix"
	;;
*)
	usage
	;;
esac
