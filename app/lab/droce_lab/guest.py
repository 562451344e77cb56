# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Linux soft-RoCE in a qemu guest: this machine's Debian kernel with
rdma_rxe, rdma-core's and perftest's binaries in an initramfs
(guest/mkinitramfs.sh, guest/init), joined to the host by a tap.

The guest's console is a file the host follows: lines that start with
"guest: " are the guest's word. A guest booted with serve() as its
script also takes commands on its console (Guest.run), so that the host
can drive it step by step.
"""

import os
import re
import shlex
import subprocess
import time

# guest/ beside the package, in the source tree and installed alike
GUEST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                         'guest')
RXE_MODULE = 'kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko'


def kernel():
    """(version, vmlinuz) of the newest kernel here with rdma_rxe, or
    None."""
    vers = sorted(v for v in os.listdir('/lib/modules')
                  if os.path.exists('/boot/vmlinuz-' + v) and
                  os.path.exists(os.path.join('/lib/modules', v,
                                              RXE_MODULE)))
    return (vers[-1], '/boot/vmlinuz-' + vers[-1]) if vers else None


def build_base(kver, out, programs=(), modules=()):
    """The initramfs without its /test.sh, as @p out (programs go to its
    /usr/bin, modules are loaded at boot)."""
    subprocess.run([os.path.join(GUEST_DIR, 'mkinitramfs.sh'), kver, out] +
                   [os.path.abspath(p) for p in programs], check=True,
                   env=dict(os.environ, MODULES=' '.join(modules)))


def build_initrd(base, script, out):
    """@p base with @p script as its /test.sh, as @p out."""
    tmp = out + '.d'
    os.makedirs(tmp, exist_ok=True)
    path = os.path.join(tmp, 'test.sh')
    with open(path, 'w') as f:
        f.write(script)
    os.chmod(path, 0o755)
    extra = subprocess.run('echo test.sh | cpio -o -H newc --quiet | '
                           'gzip -1', shell=True, cwd=tmp, check=True,
                           capture_output=True).stdout
    with open(out, 'wb') as o, open(base, 'rb') as b:
        o.write(b.read())
        o.write(extra)


def serve():
    """A /test.sh that runs each line "ID COMMAND" the console gives it
    in the background, prints its output as "guest[ID]> ..." and then
    "guest: end ID rc=N", until a line "quit"."""
    return '\n'.join([
        '#!/bin/sh',
        'cd /tmp',
        'stty -echo 2>/dev/null',
        'echo "guest: serving"',
        'while read -r id cmd; do',
        '	[ "$id" = quit ] && break',
        '	[ -n "$cmd" ] || continue',
        '	( (eval "$cmd") >"out.$id" 2>&1; rc=$?',
        '	  sed "s/^/guest[$id]> /" "out.$id"; kfault-check',
        '	  echo "guest: end $id rc=$rc" ) &',
        'done',
        'wait', ''])


def accel():
    """TCG, or KVM with DROCE_GUEST_ACCEL=kvm. (Not KVM by default where
    /dev/kvm exists: on a machine that nests it the guest's kernel can
    hang at boot with no word.)"""
    if os.environ.get('DROCE_GUEST_ACCEL', '') == 'kvm':
        return ['-accel', 'kvm']
    return ['-accel', 'tcg']


def tap_up(name, mac=None, ip=None):
    """A tap @p name (made again if it was there), up; with @p mac and
    the host's @p ip (CIDR) if given."""
    tap_down(name)
    subprocess.run(['ip', 'tuntap', 'add', name, 'mode', 'tap'], check=True)
    if mac:
        subprocess.run(['ip', 'link', 'set', name, 'address', mac],
                       check=True)
    if ip:
        subprocess.run(['ip', 'addr', 'add', ip, 'dev', name], check=True)
    subprocess.run(['ip', 'link', 'set', name, 'up'], check=True)


def tap_down(name):
    subprocess.run(['ip', 'link', 'del', name], stderr=subprocess.DEVNULL)


class Guest:
    """The qemu guest on tap @p tap, eth0 with address @p ip (CIDR) and
    MAC @p mac, its console written to @p log_path. With @p offload
    False, eth0 computes its own checksums and segments its own TCP, so
    that its frames can cross from tap to tap as they are (through
    droce-inject on af_packet, which forwards frames, not the kernel's
    half-made ones)."""

    def __init__(self, log_path, initrd, kernel_path, tap, ip, mac,
                 offload=True):
        self.log_path = log_path
        self.log = open(self.log_path, 'wb')
        self.proc = subprocess.Popen(
            ['qemu-system-x86_64', '-m', '1024', '-smp', '1'] + accel() +
            ['-nographic', '-no-reboot', '-kernel', kernel_path,
             '-initrd', initrd,
             '-append', 'console=ttyS0 quiet panic=-1 droce.ip=%s' % ip,
             '-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no' % tap,
             '-device', 'virtio-net-pci,netdev=n0,mac=%s%s' % (
                 mac, '' if offload else ',csum=off,guest_csum=off')],
            stdin=subprocess.PIPE, stdout=self.log,
            stderr=subprocess.STDOUT)
        self.sent = 0

    def text(self):
        with open(self.log_path, 'rb') as f:
            return f.read().decode('utf-8', 'replace').replace('\r', '')

    def fault(self):
        """The kernel's lines if it told of a fault (guest/init), or the
        console's last if the guest ended before its steps did, else
        None."""
        text = self.text()
        if '\nguest: kernel fault\n' in text:
            return '\n'.join(l[len('guest! '):] for l in text.splitlines()
                             if l.startswith('guest! '))
        if self.proc.poll() is not None and \
           '\nguest: done\n' not in text:
            return 'the guest ended:\n' + '\n'.join(
                text.strip().splitlines()[-20:])
        return None

    def gone(self):
        """Has the guest ended, or its kernel faulted?"""
        return self.proc.poll() is not None or self.fault() is not None

    def wait_for(self, pattern, timeout):
        """The first match of pattern in the console, or None (at once
        if the guest is gone)."""
        end = time.time() + timeout
        while time.time() < end:
            m = re.search(pattern, self.text(), re.M)
            if m or self.gone():
                return m
            time.sleep(0.2)
        return None

    def run(self, cmd):
        """Start @p cmd (argv, or a shell line) in a guest booted with
        serve(). @return its id, for result()."""
        self.sent += 1
        line = cmd if isinstance(cmd, str) else \
            ' '.join(shlex.quote(a) for a in cmd)
        self.proc.stdin.write(('%d %s\n' % (self.sent, line)).encode())
        self.proc.stdin.flush()
        return self.sent

    def result(self, cid, timeout):
        """(exit status, output) of command @p cid once it ended; (None,
        what it printed so far) if it did not within @p timeout s or the
        guest is gone."""
        m = self.wait_for(r'^guest: end %d rc=(\d+)$' % cid, timeout)
        prefix = 'guest[%d]> ' % cid
        out = '\n'.join(l[len(prefix):] for l in self.text().splitlines()
                        if l.startswith(prefix))
        return (int(m.group(1)) if m else None), out

    def quit(self, timeout=30):
        """Ask a serving guest to end, and wait until it did."""
        try:
            self.proc.stdin.write(b'quit\n')
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass
        self.wait_for(r'^guest: done$', timeout)
        self.stop()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdin:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        self.log.close()
