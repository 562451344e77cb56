# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Sourced by the scripts that run meson's tests (quickstart.sh, dpdk.sh):
# meson_counts FILE prints "PASSED FAILED" from the summary `meson test`
# wrote to FILE. Expected failures pass; failures, unexpected passes,
# timeouts and skips fail (a skipped test proves nothing); a FILE with
# no summary is one failure.

meson_counts() {
	awk '
	/^Ok:/ || /^Expected Fail:/ { p += $NF; seen = 1 }
	/^Fail:/ || /^Unexpected Pass:/ || /^Skipped:/ || /^Timeout:/ {
		f += $NF
	}
	END { if (!seen) print 0, 1; else print p + 0, f + 0 }' "$1"
}
