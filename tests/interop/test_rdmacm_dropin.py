#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Debian's own rdma_cm programs, unmodified, over droce's librdmacm.so.1.

  - symbols: every symbol the system's librdmacm.so.1 exports at an
    RDMACM_* version node is exported by droce's at the same node, and
    nothing else is;
  - rping -V (RDMA READ and WRITE of the ping data, checked by the
    client): every ping echoed, on both sides;
  - ucmatose (SENDs over rdma_cm's connected QPs): one connection, four
    connections (-c 4), and a hundred messages of 1000 bytes
    (-C 100 -S 1000): data transfers complete, status 0 on both sides;
  - udaddy (UD QPs through rdma_cm: the port space UDP, SIDR_REQ and
    SIDR_REP, the address handle from the event): one and four
    connections, ten messages of 64 bytes each way: data transfers
    complete, status 0 on both sides;
  - mckey (UD multicast through rdma_join_multicast): a receiver and a
    sender join 239.1.2.3, ten datagrams reach the receiver: data
    transfers complete, status 0 on both sides;
  - rdma_server / rdma_client (the synchronous rdma_cm API: rdma_getaddrinfo,
    rdma_create_ep, rdma_get_request, rdma_post_send/recv): end 0;
  - perftest with -R (the connection made by rdma_cm, no TCP at all):
    ib_write_bw, ib_read_bw, ib_send_bw (defaults and -s 64),
    ib_send_lat, ib_write_lat: both sides finish and report;
  - qperf -cm1 (RC connections made by rdma_cm): rc_bw, rc_lat and
    rc_rdma_write_bw, each in a client run of its own: the client
    reports the test's figure.

The test runs in a network namespace of its own (netns.py). Each pair
but qperf's is two processes, one droce device each, joined by net_memif
(a fresh socket in the workdir for every pair): the server at 10.0.2.1,
the client at 10.0.2.2. The binaries run with LD_LIBRARY_PATH pointing
at droce's libibverbs.so.1 and librdmacm.so.1 and nothing else changed.
DROCE_CM_DEBUG in the environment reaches both sides (the CM then logs
its MADs and events to stderr, which a failing check shows the end of).

mckey's receiver waits for every datagram and one sent before it joined
is lost, so its device does not wait for the link (link_wait_s = 0: it
joins at once, alone) and the sender starts once the receiver has
printed that it joined (its stdout is a pty, so that the line is not
held in a buffer).

qperf talks TCP to the server's host address and, with -cm1, resolves
that same address with rdma_cm; its server opens the RDMA device only
when a test starts, in a child of its own, so net_memif (whose client
waits for its server's socket) cannot join the two. So in the namespace
10.0.3.1/32 and 10.0.3.2/32 go on lo for the TCP connection, and each
side's droce device (10.0.3.1 for the server, 10.0.3.2 for the client)
is net_af_packet over one end of a veth pair. The server's child tells
the client its rdma_cm port over TCP before it calls rdma_listen (so
Debian's qperf 0.4.11 does), and a client whose device is already up,
as it is from a run's second test on, can send its REQ in between and
meet a REJ (no listener: INVALID_SERVICE_ID). So each test has a client
run of its own: the client's device starts after it has the port.
qperf's UD tests (ud_lat, ...) are not here: they do not use rdma_cm at
all (qperf says "-cm1 set but not used") and make their address handle
with a LID and no GRH, which no RoCE device takes (ibv_create_ah fails
with EINVAL).

A client whose connect request meets a REJ because the server's tool
does not listen yet (qperf's too) is started again, a few times; a
udaddy client whose SIDR_REQ meets a SIDR_REP saying that nothing
listens (udaddy prints RDMA_CM_EVENT_UNREACHABLE, error 1) is started
again with its server, as is a pair whose memif link never came up.
Nothing else is retried, and the line of each run says what was. Every
process has a timeout, so a hang fails its run instead of blocking the
test.

Usage: test_rdmacm_dropin.py --lib-verbs DIR --lib-rdmacm DIR
                             --workdir DIR [--only SUBSTR]
(as root: the network namespace, the veth pair)
"""

import argparse
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time

import netns
from test_dropin import perf_result

SYSTEM_LIB = '/usr/lib/x86_64-linux-gnu/librdmacm.so.1'
SERVER = '10.0.2.1'
CLIENT = '10.0.2.2'

MEMIF = """[eal]
args = --no-huge -m 512 --no-pci --no-shconf \
--file-prefix=rdmacm-{pid}-{name}-{attempt}-{role} \
--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,id=0
[engine]
cores = {core}
idle_sleep_us = 20
link_wait_s = {link_wait}
{pcap}[device droce0]
port = net_memif0
mac = 02:d7:0c:e0:02:0{n}
ipv4 = 10.0.2.{n}/24
"""

# qperf's two devices: net_af_packet over the two ends of a veth pair
QPERF_SERVER = '10.0.3.1'
QPERF_CLIENT = '10.0.3.2'
AF_PACKET = """[eal]
args = --no-huge -m 512 --no-pci --no-shconf \
--file-prefix=rdmacm-{pid}-qperf-{role} \
--vdev=net_af_packet0,iface={iface},qpairs=1
[engine]
cores = {core}
idle_sleep_us = 20
[device droce0]
port = net_af_packet0
mac = 02:d7:0c:e0:03:0{n}
ipv4 = 10.0.3.{n}/24
"""

# How a client tells that its connect request met a REJ: the server's
# engine comes up only when the client's memif joins it, and its tool
# listens a moment later, so a quick client can be early. Such a client
# is started again; nothing else is retried. (udaddy's are in
# REJECTED_LATE; mckey makes no connection to be rejected.)
REJECTED = {
    'rping': re.compile(r'RDMA_CM_EVENT_REJECTED'),
    'ucmatose': re.compile(r'RDMA_CM_EVENT_REJECTED'),
    'rdma_server': re.compile(r'rdma_connect: Connection refused'),
    # perftest prints the event's number: 8 is RDMA_CM_EVENT_REJECTED
    'perftest': re.compile(r'Unexpected CM event bl blka 8$', re.M),
    # (the server's child, left waiting for a request that will not
    # come, ends when the client's TCP connection does)
    'qperf': re.compile(r'^unexpected event from RDMA CM: Event rejected$',
                        re.M),
}
# perftest -R connects twice: once for its exchange of parameters, then
# the QPs of the test, which its server listens for only after the first
# connection is made. A client early for the second is rejected too, and
# leaves behind a server with half a test: the pair is started again.
REJECTED_LATE = {
    'perftest': (re.compile(r'^Event: RDMA_CM_EVENT_REJECTED;', re.M),
                 'client rejected after its first connection'),
    # udaddy's SIDR_REQ that finds nothing listening is answered by a
    # SIDR_REP of status 1 (the service ID is not supported), which
    # udaddy prints as RDMA_CM_EVENT_UNREACHABLE, error 1. Its server is
    # started again too: with -c 4 it may have taken some of the client's
    # connections already, and it waits for that many more.
    'udaddy': (re.compile(r'RDMA_CM_EVENT_UNREACHABLE, error: 1$', re.M),
               'client\'s SIDR_REQ found nothing listening'),
}
CLIENT_TRIES = 8
# what droce says when its port's link is not up after link_wait_s
LINK_DOWN = 'link still down after'
PAIR_TRIES = 3
# A hang fails its run, and once this much time is spent the remaining
# runs fail unstarted: the whole stays well inside meson's timeout.
BUDGET_S = 600

# how long mckey's receiver may take to join (its device does not wait
# for the link, so this is its start and a join)
JOIN_WAIT_S = 30

# ucmatose: (extra arguments for both sides)
UCMATOSE = [
    [],
    ['-c', '4'],
    ['-C', '100', '-S', '1000'],
]

# udaddy: (extra arguments for both sides)
UDADDY = [
    [],
    ['-c', '4'],
]

# qperf -cm1: one test per client run
QPERF_TESTS = ['rc_bw', 'rc_lat', 'rc_rdma_write_bw']

# perftest over rdma_cm: (tool, extra arguments for both sides)
PERFTESTS = [
    ('ib_write_bw', ['-n', '2000']),
    ('ib_read_bw', ['-n', '1000']),
    ('ib_send_bw', ['-n', '2000']),
    ('ib_send_bw', ['-s', '64', '-n', '2000']),
    ('ib_send_lat', ['-n', '500']),
    ('ib_write_lat', ['-n', '500']),
]

failures = []
passed = 0
started = time.monotonic()


def check(cond, what):
    global passed
    print(('ok    ' if cond else 'FAIL  ') + what, flush=True)
    if cond:
        passed += 1
    else:
        failures.append(what)


def versioned_symbols(lib):
    """{(version, symbol)} of the symbols lib defines at an RDMACM_*
    version node (hidden, non-default ones in parentheses)."""
    out = subprocess.run(['objdump', '-T', lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 7 or '*UND*' in line:
            continue
        if f[-2].lstrip('(').startswith('RDMACM_'):
            syms.add((f[-2], f[-1]))
    return syms


def test_symbols(lib):
    want = versioned_symbols(SYSTEM_LIB)
    have = versioned_symbols(lib)
    check(want and want - have == set(),
          'every RDMACM_* symbol of rdma-core is there at its node '
          '(%d; missing: %s)' % (len(want),
                                 sorted(want - have)[:5] or 'none'))
    check(have - want == set(),
          'nothing more is exported (extra: %s)' %
          (sorted(have - want)[:5] or 'none'))


def tail(o, e, n=400):
    return (o + e).strip()[-n:]


def communicate(p, timeout):
    """(rc, out, err) of p, killed after timeout seconds (rc None)."""
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err + '\n[killed after %d s]' % timeout


class Server:
    """A server process; with tty, its stdout is a pty, which the tool
    line-buffers, so that what it has printed can be looked at while it
    runs (ready())."""

    def __init__(self, argv, env, tty=False):
        self.tty = tty
        if not tty:
            self.p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            return
        self.master, slave = pty.openpty()
        try:
            self.p = subprocess.Popen(argv, env=env, stdout=slave,
                                      stderr=subprocess.PIPE, text=True)
        except BaseException:
            os.close(self.master)
            raise
        finally:
            os.close(slave)
        self.chunks = []
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        # until the pty's other side is closed: EIO, or an empty read
        while True:
            try:
                b = os.read(self.master, 4096)
            except OSError:
                break
            if not b:
                break
            self.chunks.append(b)

    def out(self):
        return (b''.join(self.chunks).decode(errors='replace')
                .replace('\r\n', '\n'))

    def poll(self):
        return self.p.poll()

    def ready(self, what, timeout):
        """Whether the server printed what (a regex) within timeout s."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(what, self.out(), re.M):
                return True
            if self.p.poll() is not None:
                self.reader.join(1)
                return re.search(what, self.out(), re.M) is not None
            time.sleep(0.05)
        return False

    def communicate(self, timeout):
        """(rc, out, err) of the server, killed after timeout s."""
        if not self.tty:
            return communicate(self.p, timeout)
        rc, _, err = communicate(self.p, timeout)
        self.reader.join(5)
        os.close(self.master)
        return rc, self.out(), err

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.communicate(1)


class Pair:
    def __init__(self, args, env, name, server_argv, client_argv, kind,
                 timeout, ready=None, pcap=False):
        self.args, self.env, self.name = args, env, name
        self.server_argv, self.client_argv = server_argv, client_argv
        self.rejected = REJECTED.get(kind)
        self.rejected_late = REJECTED_LATE.get(kind)
        self.timeout = timeout
        # the client starts once the server printed this; the server's
        # device then does not wait for the link (it comes up with the
        # client's)
        self.ready = ready
        # with pcap, each side's device mirrors every frame it sends and
        # receives to NAME-ROLE-droce0.pcap in the workdir (pcap_path())
        self.pcap = pcap
        self.notes = []

    def run(self):
        """(client, server), each (rc, out, err); rc None on a timeout."""
        for attempt in range(PAIR_TRIES):
            client, server, again = self.run_once(attempt)
            if not again:
                return client, server
            self.notes.append(again + ', pair started again')
        return client, server

    def run_once(self, attempt):
        sock = os.path.join(self.args.workdir,
                            '%s.%d.sock' % (self.name, attempt))
        if os.path.exists(sock):
            os.unlink(sock)
        envs = []
        for role, core, n in (('server', 1, 1), ('client', 0, 2)):
            ini = os.path.join(self.args.workdir,
                               '%s-%s.ini' % (self.name, role))
            link_wait = 0 if role == 'server' and self.ready else 30
            pcap = ('pcap = %s\n' % os.path.join(
                self.args.workdir, '%s-%s-%%s.pcap' % (self.name, role))
                if self.pcap else '')
            with open(ini, 'w') as f:
                f.write(MEMIF.format(pid=os.getpid(), name=self.name,
                                     attempt=attempt, role=role, sock=sock,
                                     core=core, n=n, link_wait=link_wait,
                                     pcap=pcap))
            envs.append(dict(self.env, DROCE_CONFIG=ini))
        server = Server(self.server_argv, envs[0], tty=bool(self.ready))
        try:
            # the client's memif connects to the server's socket
            for _ in range(300):
                if os.path.exists(sock) or server.poll() is not None:
                    break
                time.sleep(0.1)
            if not os.path.exists(sock):
                srv = server.communicate(1)
                return ((None, '', 'not started: no memif socket from the '
                         'server'), srv, None)
            if self.ready and not server.ready(self.ready, JOIN_WAIT_S):
                srv = server.communicate(1)
                return ((None, '', 'not started: the server did not print '
                         '"%s" within %d s' % (self.ready, JOIN_WAIT_S)),
                        srv, None)
            rejected = 0
            for _ in range(CLIENT_TRIES):
                client = subprocess.Popen(self.client_argv, env=envs[1],
                                          stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)
                rc, out, err = communicate(client, self.timeout)
                if rc == 0:
                    break
                last = attempt + 1 == PAIR_TRIES
                if LINK_DOWN in err:
                    # the two memif ends never met (seen only on a
                    # loaded machine): no test was run, start afresh
                    srv = server.communicate(1)
                    return ((rc, out, err), srv, not last and
                            'the memif link never came up')
                if (self.rejected_late is not None and
                        self.rejected_late[0].search(out + err)):
                    # (the note gives the client's exit status: what it
                    # does after that REJ is the tool's own error path)
                    srv = server.communicate(1)
                    return ((rc, out, err), srv, not last and
                            '%s (exit %s)' % (self.rejected_late[1], rc))
                if (self.rejected is None or
                        not self.rejected.search(out + err)):
                    break
                rejected += 1
                if server.poll() is not None:
                    # the server gave up on what the early client left
                    # behind (a connection half made): start afresh
                    return ((rc, out, err), server.communicate(1),
                            not last and 'the server failed after a client '
                            'was rejected')
                time.sleep(1)
            if rejected:
                self.notes.append('client rejected %d time%s (REJ: the '
                                  'server did not listen yet)' %
                                  (rejected, 's' if rejected > 1 else ''))
            # a server whose client failed may wait for it forever
            srv = server.communicate(30 if rc == 0 else 10)
        finally:
            server.kill()
        return (rc, out, err), srv, None


def budget_spent(name):
    """Whether the time budget is spent (the run's line then says so)."""
    if time.monotonic() - started <= BUDGET_S:
        return False
    print('run   %-36s not started: %d s spent' % (name, BUDGET_S),
          flush=True)
    return True


def pcap_path(args, name, role):
    """The capture of role's device (a Pair made with pcap)."""
    return os.path.join(args.workdir, '%s-%s-droce0.pcap' % (name, role))


def run_pair(args, env, name, server_argv, client_argv, kind, timeout=60,
             ready=None, pcap=False):
    t0 = time.monotonic()
    if budget_spent(name):
        skipped = (None, '', 'not started: time budget spent')
        return skipped, skipped
    pair = Pair(args, env, name, server_argv, client_argv, kind, timeout,
                ready, pcap)
    client, server = pair.run()
    print('run   %-36s %5.1f s%s' %
          (name, time.monotonic() - t0,
           ''.join('; ' + n for n in pair.notes)), flush=True)
    return client, server


def exit_ok(what, r):
    rc, o, e = r
    check(rc == 0, '%s exits 0%s' %
          (what, '' if rc == 0 else
           ' (%s: %s)' % ('no exit' if rc is None else 'exit %d' % rc,
                          tail(o, e))))


def test_rping(args, env, port, count=5, size=64, run=()):
    """rping's two sides, each started as run + rping's argv."""
    name = 'rping'
    opts = ['-C', str(count), '-S', str(size), '-v', '-V', '-p', str(port)]
    client, server = run_pair(
        args, env, name,
        list(run) + ['rping', '-s', '-a', SERVER] + opts,
        list(run) + ['rping', '-c', '-a', SERVER] + opts, 'rping')
    what = 'rping -C %d -S %d -V' % (count, size)
    for side, r, prefix in (('client', client, 'ping data'),
                            ('server', server, 'server ping data')):
        exit_ok('%s %s' % (what, side), r)
        rc, o, e = r
        seen = set(int(n) for n in re.findall(
            r'^%s: rdma-ping-(\d+): ' % prefix, o, re.M))
        missing = sorted(set(range(count)) - seen)
        check(not missing, '%s %s: %s' %
              (what, side, 'printed "%s: rdma-ping-N" for N = 0..%d' %
               (prefix, count - 1) if not missing else
               'no "%s" for rdma-ping-%s: %s' %
               (prefix, missing[:5], tail(o, e))))
        bad = [l for l in (o + e).splitlines()
               if 'data mismatch' in l or 'verif' in l.lower()]
        check(not bad, '%s %s: no data complaint%s' %
              (what, side, ' (%s)' % bad[:3] if bad else ''))
        # rping reports a failed librdmacm call with perror() and exits
        # with it from its CM thread, racing its main thread's exit(0)
        bad = re.findall(r'^rdma_\w+: .*$', e, re.M)
        check(not bad, '%s %s: no librdmacm call failed%s' %
              (what, side, ' (%s)' % bad[:3] if bad else ''))


def test_ucmatose(args, env, extra, port):
    name = 'ucmatose' + ''.join(extra).replace('-', '_')
    opts = extra + ['-p', str(port)]
    client, server = run_pair(
        args, env, name,
        ['ucmatose', '-b', SERVER] + opts,
        ['ucmatose', '-s', SERVER, '-b', CLIENT] + opts, 'ucmatose')
    check_complete(' '.join(['ucmatose'] + extra), client, server)


def check_complete(what, client, server, sides=('client', 'server')):
    """Both sides exit 0 and print that the transfers completed."""
    for side, r in zip(sides, (client, server)):
        exit_ok('%s %s' % (what, side), r)
        rc, o, e = r
        for s in ('data transfers complete', 'return status 0'):
            check(s in o, '%s %s: prints "%s"%s' %
                  (what, side, s, '' if s in o else ': ' + tail(o, e)))


def test_udaddy(args, env, extra):
    # (no -p: udaddy's is a port space; both sides use its default port)
    name = 'udaddy' + ''.join(extra).replace('-', '_')
    opts = extra + ['-C', '10', '-S', '64']
    client, server = run_pair(
        args, env, name,
        ['udaddy', '-b', SERVER] + opts,
        ['udaddy', '-s', SERVER, '-b', CLIENT] + opts, 'udaddy')
    check_complete(' '.join(['udaddy'] + opts), client, server)


def test_mckey(args, env, group='239.1.2.3', count=10):
    # the server is the receiver, the client the sender (-s); no -p:
    # mckey's is a port space
    opts = ['-m', group, '-C', str(count)]
    client, server = run_pair(
        args, env, 'mckey',
        ['mckey', '-b', SERVER] + opts,
        ['mckey', '-b', CLIENT, '-s'] + opts, 'mckey',
        ready=r'^mckey: joined ')
    check_complete(' '.join(['mckey'] + opts), client, server,
                   ('sender', 'receiver'))


def test_rdma_server(args, env, port):
    client, server = run_pair(
        args, env, 'rdma_server',
        ['rdma_server', '-s', SERVER, '-p', str(port)],
        ['rdma_client', '-s', SERVER, '-p', str(port)], 'rdma_server')
    for tool, r in (('rdma_client', client), ('rdma_server', server)):
        exit_ok(tool, r)
        rc, o, e = r
        ok = re.search(r'^%s: end 0$' % tool, o, re.M) is not None
        check(ok, '%s: prints "%s: end 0"%s' %
              (tool, tool, '' if ok else ': ' + tail(o, e)))


def test_perftest(args, env, tool, extra, port):
    lat = tool.endswith('_lat')
    name = tool + ''.join(extra).replace('-', '_')
    argv = [tool, '-R', '-d', 'droce0', '-p', str(port)] + extra
    client, server = run_pair(args, env, name, argv, argv + [SERVER],
                              'perftest', timeout=90)
    what = ' '.join([tool, '-R'] + extra)
    for side, (code, o, e) in (('client', client), ('server', server)):
        res = perf_result(o)
        # bw: iterations and average MB/s; lat: iterations and t_typical
        good = (code == 0 and res is not None and res[1] > 0 and
                (res[2] > 0 if lat else res[3] > 0))
        check(good, '%s %s: %s' %
              (what, side,
               ' '.join('%g' % x for x in res) if good
               else 'exit %s: %s' % (code, tail(o, e))))


def ip(*argv):
    subprocess.run(['ip'] + list(argv), check=True, capture_output=True,
                   text=True)


def veth_up():
    """qperf's addresses on lo and its veth pair, veth1 and veth2, up:
    None, or what failed."""
    # DPDK's af_packet puts its socket in the fanout group numbered
    # (pid ^ ifindex) & 0xffff, and the kernel refuses (EINVAL) a socket
    # joining a group of the namespace that is on another interface. With
    # the ifindexes 3 and 2 that a new namespace gives, a client and a
    # server child whose pids differ in the last bit only (adjacent ones,
    # as they often are) meet in one group: 3 client runs of 30 failed
    # so. With 16386 and 2 the pids would have to differ by 16384.
    try:
        for a in (QPERF_SERVER, QPERF_CLIENT):
            ip('addr', 'add', a + '/32', 'dev', 'lo')
        ip('link', 'add', 'veth1', 'index', '16386', 'type', 'veth',
           'peer', 'name', 'veth2', 'index', '2')
        for i in ('veth1', 'veth2'):
            ip('link', 'set', i, 'up')
    except subprocess.CalledProcessError as e:
        return '%s: %s' % (' '.join(e.cmd), e.stderr.strip())
    # (sysfs is the host's: ask ip)
    for _ in range(50):
        links = subprocess.run(['ip', '-o', 'link', 'show', 'type', 'veth'],
                               capture_output=True, text=True).stdout
        if len(re.findall(r' state UP ', links)) == 2:
            break
        time.sleep(0.1)
    # and a moment more, for the pair to settle
    time.sleep(1)
    return None


def tcp_listening(port):
    """Whether something listens on TCP port (in this namespace)."""
    for path in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            with open(path) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == '0A' and int(f[1].rsplit(':', 1)[1], 16) == port:
                return True
    return False


def qperf_result(test, out):
    """(quantity, figure, unit) of qperf's result for test, or None."""
    m = re.search(r'^%s:\n\s+(\w+)\s+=\s+([\d.]+) (\S+)$' %
                  re.escape(test), out, re.M)
    return (m.group(1), float(m.group(2)), m.group(3)) if m else None


def test_qperf(args, env, tests):
    """qperf -cm1: one server, a client run for each of tests."""
    whats = ['qperf -cm1 -t 2 %s' % t for t in tests]
    if budget_spent('qperf'):
        for what in whats:
            check(False, '%s: not started: time budget spent' % what)
        return
    err = veth_up()
    if err:
        for what in whats:
            check(False, '%s: no veth pair: %s' % (what, err))
        return
    envs = []
    for role, iface, core, n in (('server', 'veth1', 0, 1),
                                 ('client', 'veth2', 1, 2)):
        ini = os.path.join(args.workdir, 'qperf-%s.ini' % role)
        with open(ini, 'w') as f:
            f.write(AF_PACKET.format(pid=os.getpid(), role=role,
                                     iface=iface, core=core, n=n))
        envs.append(dict(env, DROCE_CONFIG=ini))
    # the control connection's port: one free now (the namespace is the
    # test's own, so nothing else takes it meanwhile)
    port = str(netns.free_port(QPERF_SERVER))
    # (a session of its own: the server forks a child for each test,
    # and the whole group goes at the end; its output goes to files, as
    # nothing reads it before then)
    logs = [open(os.path.join(args.workdir, 'qperf-server.' + x), 'w+')
            for x in ('out', 'err')]
    server = subprocess.Popen(['qperf', '-lp', port], env=envs[0],
                              stdout=logs[0], stderr=logs[1],
                              start_new_session=True)
    try:
        for _ in range(100):
            if tcp_listening(int(port)) or server.poll() is not None:
                break
            time.sleep(0.1)
        for test, what in zip(tests, whats):
            name = 'qperf_' + test
            if budget_spent(name):
                check(False, '%s: not started: time budget spent' % what)
                continue
            t0 = time.monotonic()
            rejected = 0
            for _ in range(CLIENT_TRIES):
                client = subprocess.Popen(
                    ['qperf', '-lp', port, QPERF_SERVER, '-cm1', '-t', '2',
                     test], env=envs[1], stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True)
                rc, o, e = communicate(client, 60)
                if rc == 0 or not REJECTED['qperf'].search(o + e):
                    break
                rejected += 1
                time.sleep(1)
            print('run   %-36s %5.1f s%s' %
                  (name, time.monotonic() - t0,
                   '; client rejected %d time%s (REJ: the server did not '
                   'listen yet)' % (rejected, 's' if rejected > 1 else '')
                   if rejected else ''), flush=True)
            res = qperf_result(test, o)
            good = rc == 0 and res is not None and res[1] > 0
            check(good, '%s: %s' %
                  (what, '%s = %g %s' % res if good else
                   'exit %s: %s' % (rc, tail(o, e))))
    finally:
        alive = server.poll() is None
        if alive:
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        for f in logs:
            f.seek(0)
        o, e = (f.read() for f in logs)
        for f in logs:
            f.close()
    check(alive, 'qperf -lp server still serving after the tests%s' %
          ('' if alive else ' (exit %s: %s)' % (server.returncode,
                                                tail(o, e))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib-verbs', required=True)
    ap.add_argument('--lib-rdmacm', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--only', default='',
                    help='run only the tests whose name has this in it')
    args = ap.parse_args()
    # the veth pair, lo's addresses and qperf's TCP port are the test's
    # own; memif's sockets are files, as before
    netns.enter()
    # the memif socket and the configuration files are named by it
    args.workdir = os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)
    lib = os.path.join(args.lib_rdmacm, 'librdmacm.so.1')
    env = dict(os.environ, LD_LIBRARY_PATH='%s:%s' % (
        os.path.abspath(args.lib_verbs), os.path.abspath(args.lib_rdmacm)))
    env.pop('DROCE_CONFIG', None)

    def want(name):
        return args.only in name

    if want('symbols'):
        test_symbols(lib)
    port = 18720
    if want('rping'):
        test_rping(args, env, port)
    port += 1
    for extra in UCMATOSE:
        if want('ucmatose' + ''.join(extra).replace('-', '_')):
            test_ucmatose(args, env, extra, port)
        port += 1
    for extra in UDADDY:
        if want('udaddy' + ''.join(extra).replace('-', '_')):
            test_udaddy(args, env, extra)
    if want('mckey'):
        test_mckey(args, env)
    if want('rdma_server'):
        test_rdma_server(args, env, port)
    port += 1
    for tool, extra in PERFTESTS:
        if want(tool + ''.join(extra).replace('-', '_')):
            test_perftest(args, env, tool, extra, port)
        port += 1
    tests = [t for t in QPERF_TESTS if want('qperf_' + t)]
    if tests:
        test_qperf(args, env, tests)

    print('%d passed, %d failed (%.0f s)' %
          (passed, len(failures), time.monotonic() - started))
    if failures:
        print('failed:')
        for f in failures:
            print('  ' + f.splitlines()[0][:200])
    return 1 if failures or not passed else 0


if __name__ == '__main__':
    sys.exit(main())
