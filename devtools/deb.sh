#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# droce's Debian packages (debian/: libdroce0, libdroce-dev, droce-tools)
# built from this tree and proven on a clean Debian 12:
#
#   build      the tree as it is, committed or not (less .git, build*/
#              and devtools/dpdk's tarballs, which the package build
#              must not need), copied to DIR/droce-VERSION, and
#              dpkg-buildpackage -b -us -uc there: the .debs land in DIR
#   lintian    lintian on the result, its output printed: no error (E:)
#   install    a minimal bookworm (debootstrap, kept in DIR/cache: made
#              once) in DIR/chroot, /proc, /sys and /dev bound into it,
#              and apt-get install of the .debs there from Debian's
#              mirror (the one apt uses here)
#   demo       droce-demo 0.3 in the chroot
#   ibv_devinfo  Debian's ibv_devinfo through droce-run: droce0 and
#              droce1, active
#   lab        droce-lab analyze of a soft-RoCE capture with loss
#   pkg-config a program built with pkg-config --cflags --libs libdroce
#              in the chroot, and run
#
# Usage: devtools/deb.sh [-d DIR] [-n]
#   -d DIR   the work directory (default build-deb)
#   -n       build and lintian only: no chroot
#
# Each phase is timed; the last line is "N passed, N failed". The chroot
# needs root (debootstrap, chroot, mounts), and Debian's debootstrap; the
# build dpkg-dev, debhelper and lintian, and debian/control's
# Build-Depends. DEB_MIRROR overrides the mirror.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

SUITE=bookworm
VARIANT=minbase
# What the checks need in the chroot beyond the packages and theirs.
CHROOT_PKGS="ibverbs-utils gcc libc6-dev pkgconf"

usage() {
	sed -n '/^# Usage/,/^#   -n/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

log() {
	printf '==> %s\n' "$*"
}

now() {
	date +%s
}

dir=build-deb
chroot_too=1
while getopts d:nh opt; do
	case $opt in
	d) dir=$OPTARG ;;
	n) chroot_too=0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage

passed=0
failed=0
times=""
# check NAME START: passed; check_failed NAME START [WHY]: failed
check() {
	t=$(($(now) - $2))
	passed=$((passed + 1))
	times="$times$1 $t
"
	log "$1: ok ($t s)"
}
check_failed() {
	t=$(($(now) - $2))
	failed=$((failed + 1))
	times="$times$1 $t
"
	log "$1: FAILED ($t s)${3:+: $3}"
}
# phase NAME START: a step's time, not a check
phase() {
	t=$(($(now) - $2))
	times="$times$1 $t
"
	log "$1: done ($t s)"
}
finish() {
	log "times (s):"
	printf '%s' "$times" | while read -r name t; do
		printf '    %-14s %5s\n' "$name" "$t"
	done
	echo "$passed passed, $failed failed"
	[ "$failed" -ne 0 ] || exit 0
	exit 1
}
# not_run N WHY: N checks that could not run count as failed
not_run() {
	failed=$((failed + $1))
	log "$1 check(s) not run: $2"
}

need() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "deb.sh: missing:$missing (apt-get install$missing)" >&2
	return 1
}

nchecks=2
[ $chroot_too = 0 ] || nchecks=6
pkgs="dpkg-dev debhelper lintian"
[ $chroot_too = 0 ] || pkgs="$pkgs debootstrap"
# shellcheck disable=SC2086 # the list is split on purpose
if ! need $pkgs; then
	not_run $nchecks "packages missing"
	finish
fi
if [ $chroot_too = 1 ] && [ "$(id -u)" -ne 0 ]; then
	echo "deb.sh: the chroot needs root (or -n: build and lintian only)" >&2
	not_run $nchecks "not root"
	finish
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ "$dir" = "$top" ]; then
	echo "deb.sh: the work directory cannot be the tree itself" >&2
	exit 2
fi
case $dir in
*[[:space:]]*)
	echo "deb.sh: $dir: a work directory without blanks, please" >&2
	exit 2
	;;
esac

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
upstream=${version%-*}
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
src=$dir/droce-$upstream
log "droce $version ($arch) in $dir"

# --- the chroot's mounts, undone on any exit ---------------------------

# mounts_under DIR: every mount point under DIR, deepest first
mounts_under() {
	awk -v p="$1/" 'index($2, p) == 1 { print $2 }' /proc/mounts |
		sort -r
}

unmount_under() {
	for m in $(mounts_under "$1"); do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
}

# rm_tree DIR: rm -rf, but never through a mount (a bound /dev...)
rm_tree() {
	unmount_under "$1"
	if [ -n "$(mounts_under "$1")" ]; then
		echo "deb.sh: still mounted under $1, not removing it" >&2
		return 1
	fi
	rm -rf "$1"
}

cleanup() {
	if [ -d "$dir" ]; then
		unmount_under "$dir/chroot"
		unmount_under "$dir/cache"
	fi
}
trap cleanup EXIT
trap 'exit 130' HUP INT TERM

# --- build --------------------------------------------------------------

start=$(now)
rm -rf "$src"
rm -f "$dir"/*.deb "$dir"/*.ddeb "$dir"/*.changes "$dir"/*.buildinfo
mkdir -p "$src"
# The work directory itself, if in the tree and not a build*/ one
ex=""
case $dir/ in
"$top"/*) ex="--exclude=./${dir#"$top"/}" ;;
esac
# shellcheck disable=SC2086 # $ex: no option or one
tar -C "$top" --anchored --exclude=./.git --exclude='./build*' \
	--exclude='./devtools/dpdk/*.tar.xz' $ex -cf - . |
	tar -C "$src" -xf -
phase copy "$start"

start=$(now)
log "dpkg-buildpackage -b -us -uc (log: $dir/build.log)"
if [ -z "${DEB_BUILD_OPTIONS:-}" ]; then
	DEB_BUILD_OPTIONS="parallel=$(nproc)"
	export DEB_BUILD_OPTIONS
fi
built=0
if (cd "$src" && dpkg-buildpackage -b -us -uc) >"$dir/build.log" 2>&1; then
	changes=$dir/droce_${version}_$arch.changes
	for f in "$dir"/*.deb; do
		log "  $(basename "$f") ($(du -k "$f" | cut -f1) KiB)"
	done
	check build "$start"
	built=1
else
	tail -n 40 "$dir/build.log"
	check_failed build "$start" "$dir/build.log"
fi

# --- lintian --------------------------------------------------------------

if [ $built = 1 ]; then
	start=$(now)
	log "lintian $(basename "$changes")"
	# lintian's own exit status follows its --fail-on (errors by
	# default); the count of E: is what this check is
	# (as root it says so first: not a finding)
	lintian --display-info "$changes" 2>&1 |
		grep -v '^running with root privileges is not recommended!$' \
		>"$dir/lintian.log" || :
	sed 's/^/    /' "$dir/lintian.log"
	errors=$(grep -c '^E: ' "$dir/lintian.log" || :)
	warnings=$(grep -c '^W: ' "$dir/lintian.log" || :)
	if [ "$errors" -eq 0 ] && grep -qv '^[EWIPNXOCM]: \|^$' "$dir/lintian.log"
	then
		# something else than tags: lintian itself failed
		check_failed lintian "$start" "lintian did not run through"
	elif [ "$errors" -eq 0 ]; then
		log "lintian: $warnings warning(s), no error"
		check lintian "$start"
	else
		check_failed lintian "$start" "$errors error(s)"
	fi
else
	not_run 1 "lintian: no packages"
fi

[ $chroot_too = 1 ] || finish
if [ $built = 0 ]; then
	not_run 4 "install, demo, ibv_devinfo, pkg-config: no packages"
	finish
fi

# --- a clean Debian 12 -----------------------------------------------------

# Debian's mirror as apt has it here (deb822 .sources or sources.list)
apt_uri() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v RS= -v s="$1" '
		{
			n = split($0, l, "\n"); uri = ""; hit = 0
			for (i = 1; i <= n; i++) {
				if (l[i] ~ /^URIs:/) { split(l[i], w, /[ \t]+/); uri = w[2] }
				if (l[i] ~ /^Suites:/) {
					m = split(l[i], w, /[ \t]+/)
					for (j = 2; j <= m; j++) if (w[j] == s) hit = 1
				}
			}
			if (hit && uri != "") { print uri; exit }
		}' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed 's/\[[^]]*\]//' "$f" |
			awk -v s="$1" '$1 == "deb" && $3 == s { print $2; exit }'
	done
}
mirror=${DEB_MIRROR:-$(apt_uri $SUITE | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
security=$(apt_uri $SUITE-security | head -n 1)

cache=$dir/cache
base=$cache/$SUITE-$VARIANT.tar
key="$SUITE $VARIANT $mirror"
start=$(now)
mkdir -p "$cache/archives/partial"
if [ -f "$base" ] && [ "$(cat "$base.key" 2>/dev/null)" = "$key" ]; then
	log "debootstrap: $SUITE ($VARIANT) from the cache: $base"
else
	log "debootstrap --variant=$VARIANT $SUITE $mirror" \
	    "(log: $dir/debootstrap.log)"
	rm_tree "$cache/root"
	rm -f "$base" "$base.key"
	if debootstrap --variant=$VARIANT $SUITE "$cache/root" "$mirror" \
		>"$dir/debootstrap.log" 2>&1; then
		tar -C "$cache/root" -cf "$base.new" .
		mv "$base.new" "$base"
		echo "$key" >"$base.key"
		rm_tree "$cache/root"
	else
		tail -n 20 "$dir/debootstrap.log"
		rm_tree "$cache/root"
		check_failed install "$start" "debootstrap"
		not_run 3 "demo, ibv_devinfo, pkg-config: no chroot"
		finish
	fi
fi
phase debootstrap "$start"

# A fresh chroot from the cached base, the packages (not their debug
# symbols) in its /tmp/debs. (Called in a condition, where set -e does
# not apply: each step says so itself.)
setup_chroot() {
	rm_tree "$root" || return 1
	mkdir -p "$root" && tar -C "$root" -xf "$base" || return 1
	{
		echo "deb $mirror $SUITE main"
		echo "deb $mirror $SUITE-updates main"
		[ -z "$security" ] || echo "deb $security $SUITE-security main"
	} >"$root/etc/apt/sources.list" || return 1
	cp /etc/resolv.conf "$root/etc/resolv.conf" || return 1
	for m in proc sys dev; do
		mount --rbind "/$m" "$root/$m" &&
			mount --make-rslave "$root/$m" || return 1
	done
	# apt's downloads kept between runs
	mount --bind "$cache/archives" "$root/var/cache/apt/archives" ||
		return 1
	mkdir -p "$root/tmp/debs" || return 1
	for f in "$dir"/*.deb; do
		case $f in
		*-dbgsym_*) ;;
		*) cp "$f" "$root/tmp/debs/" || return 1 ;;
		esac
	done
}

start=$(now)
root=$dir/chroot
if ! setup_chroot; then
	check_failed install "$start" "cannot set the chroot up in $root"
	not_run 3 "demo, ibv_devinfo, pkg-config: no chroot"
	finish
fi
phase chroot "$start"

# in_chroot COMMAND: sh -c COMMAND in the chroot, a clean environment
in_chroot() {
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
		PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin \
		DEBIAN_FRONTEND=noninteractive sh -c "$1"
}

start=$(now)
log "apt-get install ./*.deb (log: $dir/install.log)"
installed=0
if in_chroot 'apt-get update -q && cd /tmp/debs &&
	apt-get install -y -q ./*.deb' >"$dir/install.log" 2>&1 &&
	in_chroot 'dpkg-query -W libdroce0 libdroce-dev droce-tools' \
		>>"$dir/install.log" 2>&1; then
	# shellcheck disable=SC2016 # expanded in the chroot
	in_chroot 'dpkg-query -W -f="    \${Package} \${Version}\n" \
		libdroce0 libdroce-dev droce-tools'
	check install "$start"
	installed=1
else
	tail -n 30 "$dir/install.log"
	check_failed install "$start"
fi

if [ $installed = 1 ]; then
	start=$(now)
	log "droce-demo 0.3 (log: $dir/demo.log)"
	if in_chroot 'timeout 300 droce-demo 0.3' >"$dir/demo.log" 2>&1; then
		tr '\r' '\n' <"$dir/demo.log" | tail -n 12 | sed 's/^/    /'
		check demo "$start"
	else
		tail -n 30 "$dir/demo.log"
		check_failed demo "$start"
	fi

	start=$(now)
	log "apt-get install $CHROOT_PKGS (log: $dir/tools.log)"
	tools=1
	in_chroot "apt-get install -y -q --no-install-recommends \
		$CHROOT_PKGS" >"$dir/tools.log" 2>&1 || {
		tools=0
		tail -n 30 "$dir/tools.log"
	}
	phase tools "$start"

	start=$(now)
	log "droce-run ibv_devinfo (log: $dir/ibv_devinfo.log)"
	if [ $tools = 1 ] &&
		in_chroot 'timeout 120 droce-run ibv_devinfo' \
		>"$dir/ibv_devinfo.log" 2>&1 &&
		[ "$(grep -c 'PORT_ACTIVE' "$dir/ibv_devinfo.log")" -ge 2 ] &&
		grep -q 'hca_id:.*droce0' "$dir/ibv_devinfo.log" &&
		grep -q 'hca_id:.*droce1' "$dir/ibv_devinfo.log"; then
		grep 'hca_id\|transport\|state' "$dir/ibv_devinfo.log" |
			sed 's/^/    /'
		check ibv_devinfo "$start"
	else
		tail -n 30 "$dir/ibv_devinfo.log" 2>/dev/null || :
		check_failed ibv_devinfo "$start"
	fi

	start=$(now)
	log "droce-lab analyze (log: $dir/lab.log)"
	cp "$top/tests/data/pcaps/loss_write.pcap" "$root/tmp/"
	if in_chroot 'droce-lab analyze /tmp/loss_write.pcap' \
		>"$dir/lab.log" 2>&1 &&
		grep -q '^PASS requester.gbn-resend' "$dir/lab.log"; then
		grep 'gbn-resend\|nak-single' "$dir/lab.log" | cut -c1-72 |
			sed 's/^/    /'
		check lab "$start"
	else
		tail -n 30 "$dir/lab.log" 2>/dev/null || :
		check_failed lab "$start"
	fi

	start=$(now)
	log "a program built with pkg-config --cflags --libs libdroce" \
	    "(log: $dir/pkg-config.log)"
	cat >"$root/tmp/droce_hello.c" <<'EOF'
/* droce's headers, pkg-config's flags, the installed libdroce.so */
#include <stdio.h>
#include <infiniband/verbs.h>
#include <droce.h>
#include <droce_cm.h>

int
main(void)
{
	struct ibv_device **list;
	int i, n, active = 0;

	list = ibv_get_device_list(&n);
	if (list == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_port_attr port;
		unsigned char mac[6];

		if (ctx == NULL || ibv_query_port(ctx, 1, &port) != 0 ||
		    droce_query_mac(ctx, mac) != 0)
			return 1;
		printf("%s: %s, MAC %02x:%02x:%02x:%02x:%02x:%02x\n",
		       ibv_get_device_name(list[i]),
		       ibv_port_state_str(port.state), mac[0], mac[1],
		       mac[2], mac[3], mac[4], mac[5]);
		active += port.state == IBV_PORT_ACTIVE;
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	if (n < 2 || active != n)
		return 1;
	printf("droce_hello: ok\n");
	return 0;
}
EOF
	# shellcheck disable=SC2016 # expanded in the chroot
	if [ $tools = 1 ] &&
		in_chroot 'cd /tmp && cc -Wall -Werror -o droce_hello droce_hello.c \
		$(pkg-config --cflags --libs libdroce) && ./droce_hello' \
		>"$dir/pkg-config.log" 2>&1 &&
		grep -q '^droce_hello: ok$' "$dir/pkg-config.log"; then
		sed 's/^/    /' "$dir/pkg-config.log"
		check pkg-config "$start"
	else
		tail -n 30 "$dir/pkg-config.log"
		check_failed pkg-config "$start"
	fi
else
	not_run 3 "demo, ibv_devinfo, pkg-config: not installed"
fi

cleanup
finish
