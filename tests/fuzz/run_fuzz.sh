#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Run a libFuzzer target for a bounded time from a fresh corpus and the
# seeds a seeding script writes, and fail if it finds anything.
# Usage: run_fuzz.sh FUZZER SECONDS WORKDIR SEEDER [ARG...]
# SEEDER is a Python script: SEEDER DIR ARG... writes the seeds into DIR.
# libFuzzer exits 77 on a finding, which meson would call a skip: any
# non-zero status fails here, after printing the input that did it (as
# base64, so that a CI log alone is enough to replay it).
set -eu
fuzzer=$(realpath "$1") seconds=$2 work=$3 seeder=$4
shift 4
rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds"
/usr/bin/python3 "$seeder" "$work/seeds" "$@"
cd "$work"
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus seeds || status=$?
[ "$status" = 0 ] && exit 0
for f in crash-* leak-* timeout-* oom-*; do
	[ -f "$f" ] || continue
	echo "== $f (base64; replay: base64 -d >in && $fuzzer in)"
	base64 "$f"
done
exit 1
