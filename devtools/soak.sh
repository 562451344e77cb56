#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Run the soak for MINUTES minutes: mixed traffic of every QP type
# through net_fault, every byte checked, every frame accounted for at
# the end, memory flat (tests/soak/droce_soak.c, doc/guides/testing.rst).
#
#   devtools/soak.sh MINUTES [droce-soak options...]
#   e.g. devtools/soak.sh 60
#        devtools/soak.sh 10 --seed 7 --faults drop=0.02,dup=0.01
#
# It builds build/ first (configured as quickstart.sh configures it, if
# it is not yet), or the build directory SOAK_BUILD names. The run's
# configuration goes to BUILD/tests/soak-MINUTES.work. Exit status: the
# soak's (0 if everything held).

set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

usage() {
	echo "usage: $0 MINUTES [droce-soak options...]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
minutes=$1
shift
case "$minutes" in
'' | *[!0-9]* | 0) usage ;;
esac

build=${SOAK_BUILD:-build}
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dtests=true -Dwerror=true
fi
ninja -C "$build" tests/droce-soak

# a progress line every 30th of the run, every 10 s at least
progress=$((minutes * 2))
[ "$progress" -ge 10 ] || progress=10
exec "$build/tests/droce-soak" --seconds $((minutes * 60)) \
	--progress "$progress" --workdir "$build/tests/soak-$minutes.work" "$@"
