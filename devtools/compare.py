#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""One table, one run: droce between two processes beside what the same
two cores give a user who has no droce.

Every row is two processes, the server pinned to core 1 and the client
to core 0, each tool as it comes (droce with its shipped memif
configuration and the engine's defaults), and three figures: the rate of 64-byte messages, the
bandwidth of 64 KiB ones, and the latency of a 64-byte ping-pong (half
the round trip, as perftest and sockperf report it; p50 and p99 where
the tool gives them, qperf's average otherwise).

  droce, droce-perf    RDMA WRITEs over net_memif (write_bw, write_lat)
  droce, SEND          droce-perf's send_bw and send_lat, the same way:
                       what the middleware below is carried by
  droce-perf, -t 32    write_bw at 64 KiB with 32 WRITEs in flight, the
                       window ucp_put_bw keeps by default: the UCX row's
                       64 KiB yardstick at the same window
  droce, UCX           Debian's ucx_perftest (UCX 1.13) through
                       droce-run, over the same memif: tag_bw (64 B),
                       ucp_put_bw (64 KiB), tag_lat (its p50; UCX gives
                       no p99); UCX_NET_DEVICES=droce0:1 and, the two
                       processes sharing a machine, UCX_TLS=^sm
  droce, libfabric     Debian's fi_pingpong (libfabric 1.17's verbs
                       provider, MSG endpoints) over droce's drop-ins,
                       each side's device net_af_packet on one end of a
                       veth pair: a ping-pong, so its 64 KiB figure is a
                       ping-pong's bandwidth and it has no message rate;
                       its latency an average
  droce, qperf         Debian's qperf, unmodified, over droce's
                       libibverbs.so.1 and librdmacm.so.1 (-cm1;
                       rc_rdma_write_bw, rc_lat), each side's device
                       net_af_packet on one end of a veth pair
  raw DPDK frames      droce-perf raw over the same memif: frames as long
                       as the WRITEs' packets (a 64 KiB WRITE's are of
                       the path MTU), sent and received by the same
                       engine lcores, no transport; its ping-pong
                       droce-perf raw_lat, a frame and its echo, each
                       lcore polling for nothing else: the floor of any
                       latency over the pair
  kernel TCP, iperf3   over loopback, TCP_NODELAY (-N), 64 B and 64 KiB
                       writes; sockperf ping-pong --tcp
  kernel TCP, qperf    tcp_bw and tcp_lat (Nagle on, as qperf leaves it)
  kernel UDP           iperf3 -u -b 0 -l 64 (datagrams received);
                       sockperf ping-pong

A second table puts droce's aims beside their yardsticks of the same
run: droce-perf's 64-byte WRITEs and 64 KiB bandwidth at least half of
raw frames', the ping-pongs' p50 (droce-perf's write_lat, droce's SEND)
at most twice raw_lat's and below the kernel's UDP; each ratio, its
bound, met or not.

It runs in a network namespace of its own (root), so its addresses and
ports are its own. Packages it needs (iperf3, sockperf, qperf) are
installed with apt-get if missing.

Usage: devtools/compare.py [SECONDS] [--rst]   (after quickstart.sh demo)
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'tests', 'interop'))
import netns  # noqa: E402
import test_rdmacm_dropin as dropin  # noqa: E402

PERF = os.path.join(TOP, 'build', 'app', 'droce-perf')
LIBS = '%s:%s' % (os.path.join(TOP, 'build', 'lib', 'ibverbs'),
                  os.path.join(TOP, 'build', 'lib', 'rdmacm'))
SERVER_CORE, CLIENT_CORE = '1', '0'


def install_missing():
    want = [p for p, exe in (('iperf3', 'iperf3'), ('sockperf', 'sockperf'),
                             ('qperf', 'qperf')) if not shutil.which(exe)]
    if want:
        subprocess.run(['apt-get', 'install', '-y', '-q',
                        '--no-install-recommends'] + want, check=True,
                       stdout=subprocess.DEVNULL)


class Pair:
    """A server (core 1) in the background and a client (core 0) run to
    its end; the client's output."""

    def __init__(self, server, client, env=None, senv=None, cenv=None,
                 settle=1.0, timeout=120, serves_on=False):
        # serves_on: the server does not end with its client (it is
        # stopped once the client is done)
        self.args = (server, client, env, senv, cenv, settle, timeout,
                     serves_on)

    def run(self):
        server, client, env, senv, cenv, settle, timeout, serves_on = \
            self.args
        env = dict(os.environ, **(env or {}))
        s = subprocess.Popen(['taskset', '-c', SERVER_CORE] + server,
                             env=dict(env, **(senv or {})),
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            time.sleep(settle)
            c = subprocess.run(['taskset', '-c', CLIENT_CORE] + client,
                               env=dict(env, **(cenv or {})),
                               capture_output=True, text=True,
                               timeout=timeout)
            return c.stdout + c.stderr
        finally:
            try:
                s.wait(timeout=0 if serves_on else 10)
            except subprocess.TimeoutExpired:
                os.killpg(s.pid, signal.SIGKILL)
                s.wait()


def memif_configs(work, tag=''):
    """The server's and the client's configuration as droce ships them
    (config/memif-*.ini: each process on its engine's core, the engine's
    defaults), a socket and file prefix of this run's own (and of @tag:
    several pairs in one run)."""
    out = []
    for role in ('server', 'client'):
        with open(os.path.join(TOP, 'config', 'memif-%s.ini' % role)) as f:
            text = f.read()
        text = text.replace('/tmp/droce-memif.sock',
                            os.path.join(work, tag + 'memif.sock'))
        text = text.replace('--file-prefix=droce-memif-',
                            '--file-prefix=compare-%d-%s' %
                            (os.getpid(), tag))
        path = os.path.join(work, '%s%s.ini' % (tag, role))
        with open(path, 'w') as f:
            f.write(text)
        out.append(path)
    return out


def droce_perf(work, test, size, secs, extra=()):
    sini, cini = memif_configs(work)
    port = str(netns.free_port())
    base = [PERF, test, '-s', str(size), '-p', port, '--no-progress']
    run = ['-D', str(secs)] if test.endswith('_bw') or test == 'raw' \
        else ['-n', '5000']
    out = Pair(base + run + ['--server'], base + run + list(extra) +
               ['127.0.0.1'], senv={'DROCE_CONFIG': sini},
               cenv={'DROCE_CONFIG': cini}).run()
    for line in out.splitlines():
        f = line.split()
        if not line.startswith(' ') or not f or not f[0].isdigit():
            continue
        if test == 'raw':          # frame bytes, frames, Mpps, Gb/s
            return float(f[2]) * 1e6, float(f[3]) * 1e9
        if test.endswith('_lat'):  # typical (p50) and 99 %
            return float(f[4]), float(f[7])
        # bytes, iterations, peak MB/s, average MB/s, Mpps
        return float(f[4]) * 1e6, float(f[3]) * (1 << 20) * 8
    raise RuntimeError('droce-perf %s -s %d: no result:\n%s' %
                       (test, size, out[-2000:]))


RUN = os.path.join(TOP, 'build', 'app', 'run', 'droce-run')


def ucx_perftest(work, test, size, secs):
    """ucx_perftest over droce between the memif pair: the result line's
    (p50 us, msg/s, MB/s)."""
    sini, cini = memif_configs(work, 'ucx')
    port = str(netns.free_port())
    env = {'UCX_NET_DEVICES': 'droce0:1', 'UCX_TLS': '^sm'}
    # as many iterations as take about secs (a warm-up first)
    iters = {'tag_lat': 20000, 'tag_bw': 2000000, 'ucp_put_bw': 100000}
    n = str(max(1000, iters[test] * secs // 3))
    out = Pair([RUN, '-c', sini, 'ucx_perftest', '-p', port],
               [RUN, '-c', cini, 'ucx_perftest', '-p', port, '127.0.0.1',
                '-t', test, '-s', str(size), '-n', n], env=env,
               settle=0.5, timeout=120 + 10 * secs).run()
    m = re.search(r'^Final:\s+\d+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+'
                  r'[\d.]+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)', out, re.M)
    if m is None:
        raise RuntimeError('ucx_perftest -t %s: no result:\n%s' %
                           (test, out[-2000:]))
    return float(m.group(1)), float(m.group(3)), float(m.group(2))


def veth_ready():
    """The veth pair qperf's and fi_pingpong's devices are on, made once."""
    if subprocess.run(['ip', 'link', 'show', 'veth1'],
                      capture_output=True).returncode == 0:
        return
    err = dropin.veth_up()
    if err:
        raise RuntimeError('no veth pair: ' + err)


def veth_configs(work, tag):
    """The server's and the client's configuration of a pair of devices
    on the veth pair (made if it is not there), net_af_packet on each
    end, each on its process's core; file names and prefixes of @tag."""
    veth_ready()
    inis = []
    for role, iface, core, n in (('server', 'veth1', SERVER_CORE, 1),
                                 ('client', 'veth2', CLIENT_CORE, 2)):
        ini = os.path.join(work, '%s-%s.ini' % (tag, role))
        with open(ini, 'w') as f:
            f.write(dropin.AF_PACKET.format(pid=os.getpid(), role=tag + role,
                                            iface=iface, core=core, n=n))
        inis.append(ini)
    return inis


def fi_pingpong(work, secs):
    """fi_pingpong's MSG endpoints over droce on the veth pair: (None, the
    64 KiB ping-pong's bandwidth, the 64 B one's average latency)."""
    inis = veth_configs(work, 'fi')
    res = {}
    for size, iters in ((64, 20000 * secs), (65536, 2000 * secs)):
        port = str(netns.free_port())
        base = ['fi_pingpong', '-p', 'verbs', '-e', 'msg', '-S', str(size),
                '-I', str(iters)]
        out = Pair([RUN, '-c', inis[0]] + base + ['-B', port],
                   [RUN, '-c', inis[1]] + base + ['-P', port, '127.0.0.1'],
                   settle=2.0, timeout=120 + 10 * secs).run()
        # bytes, sent, =acked, total, time, MB/s, usec/xfer, Mxfers/s
        m = re.search(r'^\d\S*\s+\S+\s+=\S+\s+\S+\s+\S+s\s+([\d.]+)\s+'
                      r'([\d.]+)\s+[\d.]+$', out, re.M)
        if m is None:
            raise RuntimeError('fi_pingpong -S %d: no result:\n%s' %
                               (size, out[-2000:]))
        res[size] = float(m.group(1)), float(m.group(2))
    return None, res[65536][0] * 1e6 * 8, res[64][1]


def iperf3(secs, size, udp=False):
    port = str(netns.free_port())
    client = ['iperf3', '-c', '127.0.0.1', '-p', port, '-t', str(secs),
              '-l', str(size), '-J']
    client += ['-u', '-b', '0'] if udp else ['-N']
    out = Pair(['iperf3', '-s', '-1', '-p', port], client, settle=0.5).run()
    r = json.loads(out[out.index('{'):])
    if udp:
        s = r['end']['sum']
        got = s['packets'] - s['lost_packets']
        return got / s['seconds'], got * size * 8 / s['seconds']
    bps = r['end']['sum_received']['bits_per_second']
    return bps / 8 / size, bps


def sockperf(secs, tcp):
    port = str(netns.free_port())
    proto = ['--tcp'] if tcp else []
    out = Pair(['sockperf', 'server', '-i', '127.0.0.1', '-p', port] + proto,
               ['sockperf', 'ping-pong', '-i', '127.0.0.1', '-p', port,
                '-m', '64', '-t', str(secs)] + proto, settle=0.5,
               serves_on=True).run()
    p = {k: float(v) for k, v in re.findall(
        r'percentile (\d+)\.000 =\s+([\d.]+)', out)}
    return p['50'], p['99']


def qperf_result(out, test, what):
    m = re.search(r'^%s:\n(?:\s+\w+\s+=.*\n)*?\s+%s\s+=\s+([\d.]+) (\S+)' %
                  (re.escape(test), what), out, re.M)
    if not m:
        raise RuntimeError('qperf %s: no %s:\n%s' % (test, what, out[-2000:]))
    scale = {'K/sec': 1e3, 'M/sec': 1e6, 'KB/sec': 8e3, 'MB/sec': 8e6,
             'GB/sec': 8e9, 'us': 1, 'ms': 1e3, 'ns': 1e-3}
    return float(m.group(1)) * scale[m.group(2)]


def qperf_tcp(secs):
    port = str(netns.free_port())
    base = ['qperf', '-lp', port, '-v', '-t', str(secs), '127.0.0.1']
    out = {}
    for size, test in (('64', 'tcp_bw'), ('64K', 'tcp_bw'),
                       ('64', 'tcp_lat')):
        out[size, test] = Pair(['qperf', '-lp', port],
                               base + ['-m', size, test], settle=0.5,
                               serves_on=True).run()
    return (qperf_result(out['64', 'tcp_bw'], 'tcp_bw', 'msg_rate'),
            qperf_result(out['64K', 'tcp_bw'], 'tcp_bw', 'bw'),
            qperf_result(out['64', 'tcp_lat'], 'tcp_lat', 'latency'))


def qperf_droce(work, secs):
    """Debian's qperf over droce (-cm1), as test_rdmacm_dropin runs it."""
    env = dict(os.environ, LD_LIBRARY_PATH=LIBS)
    envs = [dict(env, DROCE_CONFIG=ini)
            for ini in veth_configs(work, 'qperf')]
    port = str(netns.free_port(dropin.QPERF_SERVER))
    server = subprocess.Popen(['taskset', '-c', SERVER_CORE, 'qperf', '-lp',
                               port], env=envs[0], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              start_new_session=True)
    res = {}
    try:
        for _ in range(100):
            if dropin.tcp_listening(int(port)):
                break
            time.sleep(0.1)
        for size, test, what in (('64', 'rc_rdma_write_bw', 'msg_rate'),
                                 ('64K', 'rc_rdma_write_bw', 'bw'),
                                 ('64', 'rc_lat', 'latency')):
            # a client whose REQ comes before the server's child listens
            # meets a REJ: started again (test_rdmacm_dropin.py says why)
            for _ in range(dropin.CLIENT_TRIES):
                c = subprocess.run(
                    ['taskset', '-c', CLIENT_CORE, 'qperf', '-lp', port,
                     dropin.QPERF_SERVER, '-cm1', '-v', '-t', str(secs),
                     '-m', size, test], env=envs[1], capture_output=True,
                    text=True, timeout=120)
                out = c.stdout + c.stderr
                if c.returncode == 0 or \
                        not dropin.REJECTED['qperf'].search(out):
                    break
                time.sleep(1)
            res[size, test] = qperf_result(out, test, what)
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    return (res['64', 'rc_rdma_write_bw'], res['64K', 'rc_rdma_write_bw'],
            res['64', 'rc_lat'])


def fmt_rate(v):
    return '%.2f M/s' % (v / 1e6) if v is not None else '-'


def fmt_bw(v):
    return '%.1f Gb/s' % (v / 1e9) if v is not None else '-'


def fmt_lat(v):
    if v is None:
        return '-'
    if isinstance(v, tuple):
        return '%.2f / %s us' % (v[0], '-' if v[1] is None else
                                  '%.1f' % v[1])
    return '%.2f us (avg)' % v


# The aims of droce between two processes, each a ratio to its
# yardstick in the same run: (the row, its column (1 messages, 2
# bandwidth, 3 ping-pong p50), the yardstick's row, the bound, whether
# the ratio must be at least (True) or at most (False) the bound).
AIMS = (
    ('droce, droce-perf', 1, 'raw DPDK frames', 0.5, True),
    ('droce, droce-perf', 2, 'raw DPDK frames', 0.5, True),
    ('droce, droce-perf', 3, 'raw DPDK frames', 2.0, False),
    ('droce, SEND', 3, 'raw DPDK frames', 2.0, False),
    ('droce, droce-perf', 3, 'kernel UDP', 1.0, False),
    ('droce, SEND', 3, 'kernel UDP', 1.0, False),
)
COLUMNS = {1: '64 B messages', 2: '64 KiB bandwidth', 3: 'ping-pong p50'}


def aims(rows):
    """Each aim against its yardstick in @rows (compare.py's rows:
    (name, rate, bandwidth, (p50, p99) or average)): (row, column,
    yardstick, ratio, bound, at_least, met), the ratio None where
    either figure is missing."""
    by = {r[0]: r for r in rows}
    out = []
    for name, col, base, bound, at_least in AIMS:
        a, b = (by.get(n, (n, None, None, None))[col] for n in (name, base))
        a, b = (x[0] if isinstance(x, tuple) else x for x in (a, b))
        ratio = a / b if a is not None and b else None
        met = ratio is not None and (ratio >= bound if at_least
                                     else ratio <= bound)
        out.append((name, COLUMNS[col], base, ratio, bound, at_least, met))
    return out


def print_table(head, cells, rst):
    widths = [max(len(c[i]) for c in cells + [head])
              for i in range(len(head))]
    line = '  '.join('=' * w for w in widths)
    if rst:
        print(line)
    print('  '.join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    print(line if rst else '')
    for c in cells:
        print('  '.join(x.ljust(w) for x, w in zip(c, widths)).rstrip())
    if rst:
        print(line)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    rst = '--rst' in sys.argv
    secs = int(args[0]) if args else 3
    if os.geteuid() != 0:
        sys.exit('compare.py: needs root (a network namespace, a veth pair)')
    if not os.access(PERF, os.X_OK):
        sys.exit('compare.py: no %s: run devtools/quickstart.sh demo' % PERF)
    install_missing()
    netns.enter()
    work = tempfile.mkdtemp(prefix='droce-compare-')
    rows = []
    try:
        def row(name, fn):
            t0 = time.monotonic()
            try:
                r = fn()
            except (RuntimeError, subprocess.SubprocessError, KeyError,
                    ValueError) as e:
                print('%s: failed: %s' % (name, e), file=sys.stderr)
                r = (None, None, None)
            rows.append((name,) + tuple(r))
            print('  %-22s done in %.0f s' % (name, time.monotonic() - t0),
                  file=sys.stderr, flush=True)

        def droce():
            rate = droce_perf(work, 'write_bw', 64, secs)[0]
            bw = droce_perf(work, 'write_bw', 65536, secs)[1]
            return rate, bw, droce_perf(work, 'write_lat', 64, secs)

        def send():
            return (droce_perf(work, 'send_bw', 64, secs)[0],
                    droce_perf(work, 'send_bw', 65536, secs)[1],
                    droce_perf(work, 'send_lat', 64, secs))

        def window32():
            return None, droce_perf(work, 'write_bw', 65536, secs,
                                    ('-t', '32'))[1], None

        def ucx():
            lat = ucx_perftest(work, 'tag_lat', 8, secs)[0]
            return (ucx_perftest(work, 'tag_bw', 64, secs)[1],
                    ucx_perftest(work, 'ucp_put_bw', 65536, secs)[2] *
                    (1 << 20) * 8, (lat, None))

        def raw():
            return (droce_perf(work, 'raw', 64, secs)[0],
                    droce_perf(work, 'raw', 65536, secs)[1],
                    droce_perf(work, 'raw_lat', 64, secs))

        def tcp():
            return (iperf3(secs, 64)[0], iperf3(secs, 65536)[1],
                    sockperf(secs, True))

        def udp():
            return iperf3(secs, 64, udp=True)[0], None, sockperf(secs, False)

        row('droce, droce-perf', droce)
        row('droce, SEND', send)
        row('droce-perf, -t 32', window32)
        row('droce, UCX', ucx)
        row('droce, libfabric', lambda: fi_pingpong(work, secs))
        row('droce, qperf', lambda: qperf_droce(work, secs))
        row('raw DPDK frames', raw)
        row('kernel TCP, iperf3', tcp)
        row('kernel TCP, qperf', lambda: qperf_tcp(secs))
        row('kernel UDP', udp)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    head = ('two processes, cores 0 and 1', '64 B messages',
            '64 KiB bandwidth', '64 B ping-pong p50 / p99')
    cells = [(r[0], fmt_rate(r[1]), fmt_bw(r[2]), fmt_lat(r[3]))
             for r in rows]
    print_table(head, cells, rst)
    print()
    print_table(('aim, this run', 'of', 'ratio', 'bound', 'result'),
                [('%s, %s' % (name, col), base,
                  '-' if ratio is None else '%.2f' % ratio,
                  '%s %.1f' % ('>=' if at_least else '<=', bound),
                  'met' if met else 'not met')
                 for name, col, base, ratio, bound, at_least, met
                 in aims(rows)], rst)
    return 0 if all(any(x is not None for x in r[1:]) for r in rows) else 1


if __name__ == '__main__':
    sys.exit(main())
