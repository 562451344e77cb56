#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The soft-RoCE guest's initramfs, from this machine's own Debian packages:
# the kernel modules rdma_rxe needs (linux-image-amd64), busybox
# (busybox-static), rdma-core's tools and rxe provider (ibverbs-utils,
# rdma-core), the RDMA CM (rdma_ucm) and its tools (rdmacm-utils),
# perftest, qperf and iproute2's rdma, each with the libraries ldd names,
# and guest/init as /init.
#
# Usage: [MODULES="MOD..."] mkinitramfs.sh KERNEL_VERSION OUTPUT.cpio.gz
#        [PROGRAM...]
# (each PROGRAM goes to /usr/bin, with its libraries; MODULES are loaded
# at boot after the ones rdma_rxe needs)

set -eu
# the guest's libraries are the system's, whatever the caller runs with
unset LD_LIBRARY_PATH LD_PRELOAD
kver=$1
out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/bin" "$root/sbin" "$root/proc" "$root/sys" "$root/dev" \
	"$root/tmp" "$root/etc/libibverbs.d" "$root/lib/modules/$kver" \
	"$root/usr/lib/x86_64-linux-gnu/libibverbs" "$root/lib64" "$root/root"

# modules, with what they depend on, in an order insmod can take them
order=""
add_module() {
	case " $order " in *" $1 "*) return 0 ;; esac
	file=$(modinfo -k "$kver" -F filename "$1")
	case "$file" in
	/*) ;;
	*) return 0 ;;          # built in
	esac
	for dep in $(modinfo -k "$kver" -F depends "$1" | tr ',' ' '); do
		add_module "$dep"
	done
	# (sh has no locals: the recursion overwrote file)
	file=$(modinfo -k "$kver" -F filename "$1")
	rel=${file#/lib/modules/$kver/}
	mkdir -p "$root/lib/modules/$kver/$(dirname "$rel")"
	cp "$file" "$root/lib/modules/$kver/$rel"
	order="$order $1"
	echo "$rel" >>"$root/modules.order"
}
for m in virtio_pci virtio_net crc32_generic rdma_rxe ib_uverbs rdma_ucm \
	${MODULES:-}; do
	add_module "$m"
done

# binaries and every library they load
copy_with_libs() {
	for f in "$@"; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
		ldd "$f" | awk '/=> \// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			[ -e "$root$lib" ] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}
copy_with_libs /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong \
	/usr/bin/ibv_ud_pingpong /usr/bin/ibv_uc_pingpong \
	/usr/bin/ibv_srq_pingpong \
	/usr/bin/ib_write_bw /usr/bin/ib_read_bw /usr/bin/ib_send_bw \
	/usr/bin/ib_atomic_bw /usr/bin/ib_write_lat /usr/bin/ib_send_lat \
	/usr/bin/ib_read_lat /usr/bin/rdma \
	/usr/bin/rping /usr/bin/ucmatose /usr/bin/udaddy /usr/bin/mckey \
	/usr/bin/rdma_server /usr/bin/rdma_client /usr/bin/cmtime \
	/usr/bin/qperf \
	/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
for prog in "$@"; do
	copy_with_libs "$prog"
	mkdir -p "$root/usr/bin"
	mv "$root$prog" "$root/usr/bin/$(basename "$prog")"
done
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
# (glibc loads it for pthread_exit and thread cancellation: rping)
copy_with_libs /lib/x86_64-linux-gnu/libgcc_s.so.1
cp /bin/busybox "$root/bin/busybox"
cp "$here/init" "$root/init"
chmod 755 "$root/init"

(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
