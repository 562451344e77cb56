#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Debian's own rdma-core binaries, unmodified, over droce's libibverbs.so.1.

  - symbols: every symbol the system's libibverbs.so.1 exports at a
    version node is exported by droce's at the same node, and nothing
    else is;
  - ibv_devices and ibv_devinfo -v list droce0 and droce1 (the embedded
    default) with their GUIDs, an active Ethernet port and RoCEv2 GIDs;
  - ibv_rc_pingpong between two processes, one droce device each, joined
    by net_memif: plain, with completion events (-e), with completion
    timestamps through ibv_create_cq_ex (-t), with the extended post API
    (-N: ibv_create_qp_ex, ibv_wr_*), with messages of several packets,
    each with the received data checked (-c);
  - ibv_srq_pingpong the same way: 16 QPs (or 4 with messages of several
    packets) sharing one SRQ, polling and with completion events, data
    checked; ibv_uc_pingpong (UC QPs), polling and with events;
    ibv_ud_pingpong (UD QPs: address handles, GRH), polling and with
    events, data checked; ibv_xsrq_pingpong (XRC: an XRC domain, an XRC
    SRQ, initiator and target QPs), polling, with events, and with
    messages of several packets;
  - perftest's ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw,
    ib_write_lat and ib_send_lat the same way, RC with their defaults,
    messages below and above the path MTU, and the SEND and WRITE ones
    over UC (-c UC), the SEND ones over UD (-c UD): both sides finish
    and report;
  - rdma_check (tests/interop/rdma_check.c, built against rdma-core's
    libibverbs): RDMA WRITE and READ both ways at once, every byte
    checked on both sides, below and above the path MTU.

The binaries run with LD_LIBRARY_PATH pointing at droce's library and
nothing else changed.

Usage: test_dropin.py --lib DIR --check RDMA_CHECK --workdir DIR
"""

import argparse
import os
import re
import subprocess
import sys
import time

import netns

SYSTEM_LIB = '/usr/lib/x86_64-linux-gnu/libibverbs.so.1'

MEMIF = """[eal]
args = --no-huge -m 512 --no-pci --no-shconf \
--file-prefix=dropin-{pid}-{name}-{role} \
--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,id=0
[engine]
cores = {core}
idle_sleep_us = 20
link_wait_s = 30
[device droce0]
port = net_memif0
mac = 02:d7:0c:e0:02:0{n}
ipv4 = 10.0.2.{n}/24
"""

# (name, extra ibv_rc_pingpong arguments)
PINGPONGS = [
    ('plain', ['-c']),
    ('events', ['-c', '-e']),
    ('timestamps', ['-c', '-t']),
    # (not -e with -t together: woken by the event of a completion it
    # has already polled, the tool takes ibv_start_poll's ENOENT for a
    # failure, whatever the device)
    ('new-send', ['-c', '-N']),
    ('new-send-events', ['-c', '-N', '-e', '-s', '5000', '-n', '300']),
    ('multi-packet', ['-c', '-s', '100000', '-n', '200']),
    ('small', ['-c', '-s', '1', '-n', '2000']),
]

# (name, extra ibv_srq_pingpong arguments): 16 QPs sharing one SRQ
SRQ_PINGPONGS = [
    ('srq', ['-c', '-n', '200']),
    ('srq-events', ['-c', '-e', '-n', '200']),
    ('srq-multi-packet', ['-c', '-q', '4', '-s', '10000', '-n', '100']),
]

# (name, extra ibv_uc_pingpong arguments): UC, no loss here
UC_PINGPONGS = [
    ('uc', ['-c', '-n', '500']),
    ('uc-events', ['-c', '-e', '-s', '3000', '-n', '300']),
]

# (name, extra ibv_ud_pingpong arguments): UD, no loss here; a datagram
# is at most the port's MTU (1024 bytes on this link)
UD_PINGPONGS = [
    ('ud', ['-c', '-s', '1024', '-n', '500']),
    ('ud-events', ['-c', '-e', '-s', '100', '-n', '300']),
]

# (name, extra ibv_xsrq_pingpong arguments): XRC, one client
XSRQ_PINGPONGS = [
    ('xsrq', ['-n', '200']),
    ('xsrq-events', ['-e', '-n', '100']),
    ('xsrq-multi-packet', ['-s', '10000', '-n', '100']),
]

# (tool, extra arguments): perftest's defaults (RC), messages below and
# above the path MTU
PERFTESTS = [
    ('ib_write_bw', ['-n', '2000']),
    ('ib_write_bw', ['-s', '64', '-n', '2000']),
    ('ib_write_bw', ['-s', '5000', '-n', '2000']),
    ('ib_read_bw', ['-n', '1000']),
    ('ib_read_bw', ['-s', '5000', '-n', '1000']),
    ('ib_send_bw', ['-n', '2000']),
    ('ib_send_bw', ['-s', '64', '-n', '2000']),
    ('ib_send_bw', ['-s', '5000', '-n', '2000']),
    ('ib_atomic_bw', ['-n', '1000']),
    ('ib_write_lat', ['-n', '500']),
    ('ib_write_lat', ['-s', '5000', '-n', '500']),
    ('ib_send_lat', ['-n', '500']),
    ('ib_send_lat', ['-s', '5000', '-n', '500']),
    # UC (-c UC): nothing lost on this link, so every message arrives
    ('ib_send_bw', ['-c', 'UC', '-n', '2000']),
    ('ib_send_bw', ['-c', 'UC', '-s', '64', '-n', '5000']),
    ('ib_write_bw', ['-c', 'UC', '-s', '5000', '-n', '2000']),
    ('ib_send_lat', ['-c', 'UC', '-n', '500']),
    ('ib_write_lat', ['-c', 'UC', '-s', '5000', '-n', '500']),
    # UD (-c UD): datagrams of the MTU and smaller
    ('ib_send_bw', ['-c', 'UD', '-n', '2000']),
    ('ib_send_bw', ['-c', 'UD', '-s', '64', '-n', '5000']),
    ('ib_send_lat', ['-c', 'UD', '-n', '500']),
]

failures = []


def check(cond, what):
    print(('ok    ' if cond else 'FAIL  ') + what)
    if not cond:
        failures.append(what)


def versioned_symbols(lib):
    """{(version, symbol)} of the symbols lib defines at a version node."""
    out = subprocess.run(['objdump', '-T', lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 7 or '*UND*' in line or f[-1].startswith('IBVERBS'):
            continue
        if f[-2].startswith('IBVERBS') or f[-2].startswith('(IBVERBS'):
            syms.add((f[-2], f[-1]))
    return syms


def test_symbols(lib):
    want = {s for s in versioned_symbols(SYSTEM_LIB)
            if not s[0].startswith('(')}
    have = versioned_symbols(lib)
    check(want - have == set(),
          'every default-version symbol of rdma-core is there '
          '(%d; missing: %s)' % (len(want),
                                 sorted(want - have)[:5] or 'none'))
    check(have - want == set(),
          'nothing more is exported (extra: %s)' %
          (sorted(have - want)[:5] or 'none'))


def run(cmd, env, timeout=60):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def test_devices(env):
    rc, out, err = run(['ibv_devices'], env)
    check(rc == 0, 'ibv_devices exits 0 (%s)' % err.strip()[-200:])
    for dev in ('droce0', 'droce1'):
        check(re.search(r'^\s+%s\s+[0-9a-f]{16}$' % dev, out, re.M)
              is not None, 'ibv_devices lists %s with its GUID' % dev)

    rc, out, err = run(['ibv_devinfo', '-v'], env)
    check(rc == 0, 'ibv_devinfo -v exits 0 (%s)' % err.strip()[-200:])
    blocks = re.split(r'^hca_id:\s*', out, flags=re.M)[1:]
    names = [b.split()[0] for b in blocks]
    check(names == ['droce0', 'droce1'],
          'ibv_devinfo shows droce0 and droce1 (%s)' % names)
    for b, ip in zip(blocks, ('10.0.0.1', '10.0.0.2')):
        name = b.split()[0]
        for pat, what in (
                (r'state:\s+PORT_ACTIVE', 'port active'),
                (r'link_layer:\s+Ethernet', 'Ethernet link layer'),
                (r'active_mtu:\s+1024', 'active MTU 1024'),
                (r'max_qp:\s+[1-9]', 'some QPs'),
                (r'GID\[\s*0\]:\s+::ffff:%s, RoCE v2' % re.escape(ip),
                 'GID 0 is the IPv4-mapped RoCEv2 GID'),
                (r'GID\[\s*1\]:\s+fe80::\S+, RoCE v2',
                 'GID 1 the link-local RoCEv2 GID')):
            check(re.search(pat, b) is not None, '%s: %s' % (name, what))


def run_pair(args, env, name, argv, port):
    """argv as memif server, then as its client: (rc, out, err) of both.

    The server's tool looks at its port once, after its device came up,
    and only then listens on TCP. A client started before that listening
    finds no one on TCP and leaves, taking the memif link down with it;
    if the server's tool looks at its port just then, it sees the port
    down and gives up (as it would on any device), and every later client
    is refused by a socket no one serves. On a loaded machine that
    happens now and then: the pair is then started again, at most three
    times, with a fresh socket, and the output says so.
    """
    for attempt in range(3):
        client, server, lost = run_pair_once(args, env, name, argv, port,
                                             attempt)
        if not lost:
            # DPDK's complaint of a bad rte_free(), seen at exit now and
            # then and not yet explained: reported, so that a run shows
            # which tool and side printed it
            for side, (_, o, e) in (('client', client), ('server', server)):
                seen = [l for l in (o + e).splitlines() if 'EAL: Error' in l]
                if seen:
                    print('note  %s %s: %s' % (name, side, seen[:2]),
                          flush=True)
            return client, server
        print('note  %s: the server gave up on a port the first client '
              'took down, pair started again' % name, flush=True)
    return client, server


def run_pair_once(args, env, name, argv, port, attempt):
    sock = os.path.join(args.workdir, '%s.%d.sock' % (name, attempt))
    if os.path.exists(sock):
        os.unlink(sock)
    envs = []
    for role, core, n in (('server', 1, 1), ('client', 0, 2)):
        ini = os.path.join(args.workdir, '%s-%s.ini' % (name, role))
        with open(ini, 'w') as f:
            f.write(MEMIF.format(pid=os.getpid(), role=role, sock=sock,
                                 core=core, n=n, name=name))
        envs.append(dict(env, DROCE_CONFIG=ini))
    argv = argv + ['-p', str(port)]
    server = subprocess.Popen(argv, env=envs[0], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    refused = 0
    try:
        # the client's memif connects to the server's socket: wait for it
        for _ in range(300):
            if os.path.exists(sock) or server.poll() is not None:
                break
            time.sleep(0.1)
        for _ in range(20):
            time.sleep(1)
            rc, out, err = run(argv + ['127.0.0.1'], envs[1], timeout=120)
            # until the server listens: on TCP, and on its memif socket
            # (which exists a moment before it accepts)
            down = 'Failed to connect socket' in out + err
            if down or "Couldn't connect" in out + err:
                refused += down
                if server.poll() is not None or refused >= 5:
                    server.kill()
                    sout, serr = server.communicate()
                    # only that case starts the pair again: any other
                    # end of the server is reported as it is
                    lost = refused >= 5 or 'state is Down' in sout + serr
                    return (rc, out, err), (server.returncode, sout,
                                            serr), lost
                continue
            break
        sout, serr = server.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        server.kill()
        sout, serr = server.communicate()
        rc, out, err = -1, '', 'timeout'
    return (rc, out, err), (server.returncode, sout, serr), False


def test_pingpong(args, env, name, extra, port, tool='ibv_rc_pingpong'):
    base = [tool, '-d', 'droce0', '-g', '0']
    client, server = run_pair(args, env, name, base + extra, port)
    iters = extra[extra.index('-n') + 1] if '-n' in extra else '1000'
    for side, (code, o, e) in (('client', client), ('server', server)):
        check(code == 0 and ('%s iters in' % iters) in o,
              '%s %s %s: %s' %
              (tool, ' '.join(extra), side,
               (o.strip().splitlines() or [''])[-1] if code == 0
               else 'exit %s: %s' % (code, e.strip()[-300:])))
    check('invalid data' not in client[1] + server[1],
          '%s %s: every page of data checked is right' %
          (tool, ' '.join(extra)))
    if '-t' in extra:
        check('Average receive completion clock cycles' in client[1],
              'ibv_rc_pingpong -t reads completion timestamps')


def test_xsrq(args, env, name, extra, port):
    """ibv_xsrq_pingpong says 'success' once every message of every
    client arrived through the SRQ and the termination handshake ran."""
    argv = ['ibv_xsrq_pingpong', '-d', 'droce0', '-g', '0'] + extra
    client, server = run_pair(args, env, name, argv, port)
    for side, (code, o, e) in (('client', client), ('server', server)):
        check(code == 0 and re.search(r'^success$', o, re.M) is not None,
              'ibv_xsrq_pingpong %s %s: %s' %
              (' '.join(extra), side, 'success' if code == 0
               else 'exit %s: %s' % (code, (o + e).strip()[-300:])))


def perf_result(out):
    """The figures of perftest's result line (all of them: a _lat
    tool's percentiles come after its fifth), or None."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith('#bytes') and i + 1 < len(lines):
            f = lines[i + 1].split()
            if len(f) >= 5 and f[0].isdigit():
                return [float(x) for x in f]
    return None


# what perftest prints when its clock calibration failed
NO_REPORT = "Can't produce a report"


def test_perftest(args, env, name, tool, extra, port):
    lat = tool.endswith('_lat')
    argv = [tool, '-d', 'droce0', '-x', '0'] + extra
    # perftest times its own clock before it reports (a regression of
    # TSC against gettimeofday); on a loaded machine that fit can fail,
    # and the tool then prints no figures whatever the transfer did. A
    # pair whose either side says so runs again, twice at most, with a
    # note (the same rule as test_softroce.py's)
    for attempt in range(3):
        client, server = run_pair(args, env, name, argv, port)
        if NO_REPORT not in ''.join(client[1:] + server[1:]) or attempt == 2:
            break
        print('note  %s %s: perftest could not time its clock, pair '
              'started again' % (tool, ' '.join(extra)), flush=True)
    for side, (code, o, e) in (('client', client), ('server', server)):
        res = perf_result(o)
        # bw: iterations and average MB/s; lat: iterations and t_typical
        good = (code == 0 and res is not None and res[1] > 0 and
                (res[2] > 0 if lat else res[3] > 0))
        check(good, '%s %s %s: %s' %
              (tool, ' '.join(extra), side,
               ' '.join('%g' % x for x in res) if good
               else 'exit %s: %s' % (code, (o + e).strip()[-300:])))


def test_rdma_check(args, env, name, extra, port):
    argv = [os.path.abspath(args.check), '-d', 'droce0', '-x', '0'] + extra
    client, server = run_pair(args, env, name, argv, port)
    for side, (code, o, e) in (('client', client), ('server', server)):
        check(code == 0 and 'rdma_check: ok' in o,
              'rdma_check %s %s: %s' %
              (' '.join(extra), side,
               (o.strip().splitlines() or [''])[0] if code == 0
               else 'exit %s: %s' % (code, (o + e).strip()[-300:])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib', required=True)
    ap.add_argument('--check', required=True)
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    # TCP ports from 18620 on, in a network namespace of this run's own
    netns.enter()
    os.makedirs(args.workdir, exist_ok=True)
    lib = os.path.join(args.lib, 'libibverbs.so.1')
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.abspath(args.lib))
    env.pop('DROCE_CONFIG', None)

    test_symbols(lib)
    test_devices(env)
    port = 18620
    for name, extra in PINGPONGS:
        test_pingpong(args, env, name, extra, port)
        port += 1
    for name, extra in SRQ_PINGPONGS:
        test_pingpong(args, env, name, extra, port, tool='ibv_srq_pingpong')
        port += 1
    for name, extra in UC_PINGPONGS:
        test_pingpong(args, env, name, extra, port, tool='ibv_uc_pingpong')
        port += 1
    for name, extra in UD_PINGPONGS:
        test_pingpong(args, env, name, extra, port, tool='ibv_ud_pingpong')
        port += 1
    for name, extra in XSRQ_PINGPONGS:
        test_xsrq(args, env, name, extra, port)
        port += 1
    for tool, extra in PERFTESTS:
        name = tool + ''.join(extra).replace('-', '_')
        test_perftest(args, env, name, tool, extra, port)
        port += 1
    for extra in (['-s', '100', '-n', '500'], ['-s', '5000', '-n', '200']):
        name = 'rdma_check' + ''.join(extra).replace('-', '_')
        test_rdma_check(args, env, name, extra, port)
        port += 1

    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
