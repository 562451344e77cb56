# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""UCX (Debian 12's ucx-utils, 1.13) over droce, as it comes.

- `droce-run ucx_info -d` (the embedded default) lists droce0 and
  droce1, each with rc_verbs and ud_verbs, in a few seconds: UCX lists a
  verbs device only if /dev/infiniband/<dev_name> is a character device
  (droce-run's libdroce_devnode.so answers that), and probes each GID
  with an address handle to the device's own address (loopback).
- ucx_perftest's tag_lat, tag_bw, ucp_put_bw, ucp_get and ucp_am_bw
  between two processes over net_memif, each test a server and a client
  process, with no UCX variable but UCX_NET_DEVICES=droce0:1. Each
  process runs on a host of its own, as UCX is used across a network: a
  network, a UTS and a mount namespace each (another hostname and boot
  ID, which UCX tells hosts apart by), a veth pair between them for
  ucx_perftest's own TCP exchange. On one host UCX
  would take shared memory between the two, and droce would carry
  nothing; here the only transports UCX may take are droce's (shared
  memory and cma reach the same host only, and UCX_NET_DEVICES leaves
  out TCP's devices), so a run that ends with its "Final:" line ran
  over droce.

Usage: test_ucx.py --run DROCE_RUN --workdir DIR [--tests a,b,...]
Prints one line per check, then "N passed, N failed".
"""

import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

PASSED = []
FAILED = []

PERF_TESTS = {
    # test: (ucx_perftest arguments, what its result says)
    'tag_lat': (['-t', 'tag_lat', '-n', '2000'], 'latency'),
    'tag_bw': (['-t', 'tag_bw', '-s', '65536', '-n', '2000'], 'bandwidth'),
    'ucp_put_bw': (['-t', 'ucp_put_bw', '-s', '65536', '-n', '2000'],
                   'bandwidth'),
    'ucp_get': (['-t', 'ucp_get', '-s', '65536', '-n', '1000'],
                'bandwidth'),
    'ucp_am_bw': (['-t', 'ucp_am_bw', '-s', '4096', '-n', '2000'],
                  'bandwidth'),
}


def check(cond, what):
    (PASSED if cond else FAILED).append(what)
    print(('PASS ' if cond else 'FAIL ') + what, flush=True)
    return cond


def tail(text, n=1500):
    return text[-n:] if text else ''


def ucx_info(run):
    """ucx_info -d over the embedded default."""
    t0 = time.monotonic()
    r = subprocess.run([run, 'ucx_info', '-d'], capture_output=True,
                       text=True, timeout=120)
    took = time.monotonic() - t0
    out = r.stdout
    for dev in ('droce0', 'droce1'):
        m = re.search(r'# Memory domain: %s\n(.*?)(?=# Memory domain:|\Z)'
                      % dev, out, re.S)
        section = m.group(1) if m else ''
        for tl in ('rc_verbs', 'ud_verbs'):
            check(re.search(r'Transport: %s\n#\s+Device: %s:1' % (tl, dev),
                            section) is not None,
                  'ucx_info -d lists %s on %s:1' % (tl, dev))
    # two devices, each interface opened for its listing: in seconds,
    # not the 3 s an unanswered ARP for the own address takes each
    check(r.returncode == 0 and took < 20,
          'ucx_info -d exits 0 in %.1f s' % took)
    if r.returncode != 0 or not m:
        print(tail(out + r.stderr))


class Hosts:
    """Two hosts on one machine: a network and UTS namespace each."""

    def __init__(self, workdir):
        tag = str(os.getpid())
        self.ns = ['droce-ucx-a' + tag, 'droce-ucx-b' + tag]
        self.ip = ['10.88.0.1', '10.88.0.2']
        self.workdir = workdir

    def __enter__(self):
        for ns in self.ns:
            subprocess.run(['ip', 'netns', 'add', ns], check=True)
        veth = ['vua' + str(os.getpid() % 100000),
                'vub' + str(os.getpid() % 100000)]
        subprocess.run(['ip', 'link', 'add', veth[0], 'type', 'veth',
                        'peer', 'name', veth[1]], check=True)
        for i in range(2):
            subprocess.run(['ip', 'link', 'set', veth[i], 'netns',
                            self.ns[i]], check=True)
            for cmd in (['ip', 'addr', 'add', self.ip[i] + '/24', 'dev',
                         veth[i]],
                        ['ip', 'link', 'set', veth[i], 'up'],
                        ['ip', 'link', 'set', 'lo', 'up']):
                subprocess.run(['ip', 'netns', 'exec', self.ns[i]] + cmd,
                               check=True)
        return self

    def __exit__(self, *exc):
        for ns in self.ns:
            subprocess.run(['ip', 'netns', 'del', ns], check=False)

    def argv(self, i, argv):
        """@p argv run on host @p i: its network, a hostname and a boot
        ID of its own (UCX takes two processes with one boot ID for two
        of one host, which shared memory joins)."""
        boot_id = os.path.join(self.workdir, 'boot_id.%d' % i)
        with open(boot_id, 'w') as f:
            f.write(str(uuid.uuid4()) + '\n')
        return ['ip', 'netns', 'exec', self.ns[i], 'unshare', '--uts',
                '--mount', 'sh', '-c',
                'hostname droce-host-%d && mount --bind %s '
                '/proc/sys/kernel/random/boot_id && exec "$@"'
                % (i, boot_id), 'sh'] + argv


def memif_configs(workdir):
    """The server's and the client's configuration, a socket in workdir."""
    sock = os.path.join(workdir, 'memif.sock')
    names = []
    for role, ip, cpu in (('server', '10.0.1.1', 1), ('client', '10.0.1.2',
                                                       0)):
        path = os.path.join(workdir, role + '.ini')
        with open(path, 'w') as f:
            # (a socket in the file system: an abstract one is the
            # network namespace's)
            f.write('[eal]\nargs = --no-huge -m 512 --no-pci --no-shconf '
                    '--file-prefix=droce-ucx-%d-%s --vdev=net_memif0,'
                    'role=%s,socket=%s,socket-abstract=no,id=0\n'
                    % (os.getpid(), role, role, sock))
            f.write('[engine]\ncores = %d\nidle_sleep_us = 20\n'
                    'link_wait_s = 30\n' % cpu)
            f.write('[device droce0]\nport = net_memif0\nipv4 = %s/24\n'
                    % ip)
        names.append(path)
    return names


def listening(hosts, i, port, p, timeout):
    """Does @p p listen on TCP @p port of host @p i within @p timeout?"""
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        r = subprocess.run(['ip', 'netns', 'exec', hosts.ns[i], 'ss', '-Hltn',
                            'sport = :' + port], capture_output=True,
                           text=True)
        if r.stdout.strip():
            return True
        time.sleep(0.1)
    return False


def read_until(p, pattern, timeout):
    """Read @p p's output until @p pattern or @p timeout; the text."""
    out = ''
    end = time.monotonic() + timeout
    fd = p.stdout.fileno()
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            if p.poll() is not None:
                break
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        out += chunk.decode(errors='replace')
        if re.search(pattern, out):
            return out, True
    return out, False


def perftest(run, hosts, cfg, name, timeout=120):
    """One ucx_perftest test, server on host 0 and client on host 1."""
    args, kind = PERF_TESTS[name]
    port = str(20000 + os.getpid() % 20000)
    env = dict(os.environ, UCX_NET_DEVICES='droce0:1')
    server = subprocess.Popen(
        hosts.argv(0, [run, '-c', cfg[0], 'ucx_perftest', '-p', port]),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        # (it listens first, and starts UCX, and so droce, once its
        # client has connected: the two start together)
        ready = listening(hosts, 0, port, server, 60)
        if not check(ready, '%s: the server waits for its client' % name):
            print(tail(server.communicate()[0].decode(errors='replace')))
            return None
        sout = ''
        client = subprocess.run(
            hosts.argv(1, [run, '-c', cfg[1], 'ucx_perftest', '-p', port,
                           hosts.ip[0]] + args),
            env=env, capture_output=True, text=True, timeout=timeout)
        cout = client.stdout + client.stderr
        final = re.search(r'^Final:\s+(\d+)\s+(.*)$', cout, re.M)
        ok = check(client.returncode == 0 and final is not None and
                   int(final.group(1)) > 0,
                   '%s: ucx_perftest ends with its results' % name)
        if not ok:
            print(tail(cout))
        try:
            rest = server.communicate(timeout=30)[0].decode(errors='replace')
        except subprocess.TimeoutExpired:
            rest = ''
        check(server.returncode == 0,
              '%s: the server exits 0' % name)
        if server.returncode != 0:
            print(tail(sout + (rest or '')))
        return final.group(2).split() if final else None
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True, help="droce-run")
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--tests', default=','.join(['info'] + list(PERF_TESTS)))
    a = ap.parse_args()
    want = a.tests.split(',')
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    netns.enter()
    if 'info' in want:
        ucx_info(a.run)
    perf = [t for t in want if t in PERF_TESTS]
    if perf:
        cfg = memif_configs(a.workdir)
        with Hosts(a.workdir) as hosts:
            for name in perf:
                res = perftest(a.run, hosts, cfg, name)
                if res:
                    print('%s: %s' % (name, ' '.join(res)), flush=True)
    print('%d passed, %d failed' % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == '__main__':
    sys.exit(main())
