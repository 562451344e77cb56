# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-lab run: the lab's scripts through droce-inject between two RoCE
endpoints, each script both ways, every trace judged, one report.

The endpoints and the injector's ports come from a configuration (INI,
--config; DEFAULT_CONFIG unless given): two soft-RoCE guests the lab
boots on two taps, the injector's ports af_packet on them. An endpoint
is "guest" (a soft-RoCE qemu guest: droce_lab.guest) or "shell" (a
command that runs a shell line where the endpoint is: "ssh root@host" for
a host with a RoCE NIC, "sh -c" for this one).
"""

import configparser
import html
import os
import shlex
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

from . import analyze, guest, inject, report, scripts
from . import trace as T

DEFAULT_CONFIG = """\
# droce-lab run's setup: two Linux soft-RoCE guests (qemu, this machine's
# Debian kernel and rdma-core), each on a tap of its own, droce-inject
# between the taps on net_af_packet. Port 0 of the injector faces the
# left end, port 1 the right: "dir=ab" is left to right.

[injector]
# droce-inject's EAL arguments: its two ports ({left_tap}, {right_tap}
# and {pid} are filled in)
eal = --no-huge -m 256 --no-pci --no-shconf --file-prefix droce-lab-{pid}
      --vdev net_af_packet0,iface={left_tap},framecnt=4096
      --vdev net_af_packet1,iface={right_tap},framecnt=4096
# the guests and the injector share the machine's cores: the injector
# sleeps this long when idle rather than hold a core (0: polls always)
idle_us = 20

[judge]
# the QPs' local ACK timeout, an exponent (perftest's -u): 1.07 s, not
# perftest's 14 (67.1 ms), for a guest under TCG holds a burst of frames
# for seconds before it answers, and a QP whose timer fires retry_cnt
# times in that fails
timeout = 18
# frames wait milliseconds on their way where guests share two cores:
# droce-lab analyze's --crossing-us and --cnp-window-us
crossing_us = 10000
cnp_window_us = 10000

[left]
kind = guest
tap = lab-left
ip = 10.0.10.1/24
mac = 52:54:00:0a:00:01

[right]
kind = guest
tap = lab-right
ip = 10.0.10.2/24
mac = 52:54:00:0a:00:02
"""

# how long one side of one run may take
RUN_TIMEOUT = 300
# how long a guest end of a run that timed out has to tell of a kernel
# fault (its check runs every second; its tools killed, rxe may warn)
FAULT_GRACE_S = 10
# at most this many lines of what differs, a run, on the console
SHOWN = 6
# the first TCP port of perftest's exchanges (one a run)
PORT = 18700


class GuestEnd:
    """A soft-RoCE guest: rxe0 on its eth0, GID 1 (IPv4-mapped)."""

    def __init__(self, name, sec, work):
        self.name = name
        self.tap, self.cidr, self.mac = sec['tap'], sec['ip'], sec['mac']
        # the host's own address on the tap, if a peer on this host talks
        # TCP to the guest through its kernel (droce's tools)
        self.host_ip = sec.get('host_ip')
        self.ip = self.cidr.split('/')[0]
        self.device = sec.get('device', 'rxe0')
        self.gid = sec.get('gid', '1')
        self.work = work
        self.vm = None
        self.boots = 0
        self.faults = []

    def what(self):
        return 'soft-RoCE (qemu guest, %s on tap %s)' % (self.ip, self.tap)

    def setup(self, base, kernel):
        self.base, self.kernel = base, kernel
        guest.tap_up(self.tap, ip=self.host_ip)
        # (the host itself stays off the taps but for host_ip: no IPv6)
        subprocess.run(['sysctl', '-q', '-w', 'net.ipv6.conf.%s.'
                        'disable_ipv6=1' % self.tap],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def boot(self):
        self.boots += 1
        initrd = os.path.join(self.work, '%s-initrd.gz' % self.name)
        guest.build_initrd(self.base, guest.serve(), initrd)
        self.vm = guest.Guest(
            os.path.join(self.work, '%s-guest%s.log' % (
                self.name, '' if self.boots == 1 else '-%d' % self.boots)),
            initrd, self.kernel, self.tap, self.cidr, self.mac,
            offload=False)

    def ready(self):
        m = self.vm.wait_for(r'^guest: serving$', 300)
        return m is not None and 'guest: rxe0 up' in self.vm.text()

    def ensure(self):
        """Up, booted again if its kernel faulted or it ended: False if
        it cannot be."""
        fault = self.vm.fault() if self.vm else None
        if self.vm and fault is None:
            return True
        if fault is not None:
            self.faults.append(fault)
            self.vm.stop()
        self.boot()
        return self.ready()

    def start(self, line):
        return self.vm.run(line)

    def wait(self, handle, timeout):
        rc, out = self.vm.result(handle, timeout)
        if rc is None and not self.vm.gone():
            # (stuck: its tools stopped, the guest kept)
            self.vm.result(self.vm.run('killall -q %s' % ' '.join(scripts.TOOLS)), 30)
        return rc, out

    def close(self):
        if self.vm:
            self.vm.quit()
        guest.tap_down(self.tap)


class ShellEnd:
    """An endpoint reached through a command that runs a shell line
    there ("ssh root@host", "sh -c")."""

    def __init__(self, name, sec, work):
        self.name = name
        self.shell = shlex.split(sec['shell'])
        self.ip = sec['ip'].split('/')[0]
        self.device = sec['device']
        self.gid = sec.get('gid', '0')
        self.faults = []

    def what(self):
        return '%s through "%s"' % (self.device, ' '.join(self.shell))

    def setup(self, base, kernel):
        pass

    def ready(self):
        return True

    def ensure(self):
        return True

    def start(self, line):
        # (a process group of its own: what the shell starts goes with
        # it when it is stopped)
        return subprocess.Popen(self.shell + [line], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)

    def wait(self, p, timeout):
        """(exit status, output) of @p p; (None, output) if it did not
        end within @p timeout s: then it and everything it started are
        killed (a tool the shell left behind, waiting for a peer that
        is gone, would hold the output pipe open for ever)."""
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, inject.kill_group(p)
        return p.returncode, out

    def close(self):
        pass


KINDS = {'guest': GuestEnd, 'shell': ShellEnd}


def load_config(path):
    cp = configparser.ConfigParser(interpolation=None)
    if path is None:
        cp.read_string(DEFAULT_CONFIG)
    else:
        with open(path) as f:
            cp.read_file(f)
    for sec in ('injector', 'left', 'right'):
        if sec not in cp:
            raise ValueError('no [%s] section' % sec)
    for end in ('left', 'right'):
        kind = cp[end].get('kind', 'shell')
        if kind not in KINDS:
            raise ValueError('[%s] kind = %s: guest or shell' % (end, kind))
        need = ('tap', 'ip', 'mac') if kind == 'guest' else \
            ('shell', 'ip', 'device')
        for key in need:
            if key not in cp[end]:
                raise ValueError('[%s] needs %s' % (end, key))
    return cp


def _server(end, tool, args, port):
    return ' '.join(shlex.quote(a) for a in
                    [tool, '-d', end.device, '-x', end.gid, '-p', str(port)]
                    + args)


def _client(end, tool, args, port, server_ip):
    """The client's line: run again while the server does not listen
    yet (60 s at most), its output and exit status the last run's."""
    cmd = _server(end, tool, args, port) + ' ' + server_ip
    return ('o=$(mktemp); n=0; while :; do %s >"$o" 2>&1; rc=$?; '
            'grep -q "Couldn.t connect\\|Unable to init" "$o" || break; '
            'n=$((n+1)); [ $n -ge 60 ] && break; sleep 1; done; '
            'cat "$o"; rm -f "$o"; exit $rc' % cmd)


def _tail(out, n=3):
    lines = [l for l in out.strip().splitlines() if l.strip()]
    return ' | '.join(lines[-n:])


class Lab:
    def __init__(self, args, cfg):
        self.args = args
        self.cfg = cfg
        self.work = args.out
        self.ends = {e: KINDS[cfg[e].get('kind', 'shell')](e, cfg[e],
                                                          self.work)
                     for e in ('left', 'right')}
        j = cfg['judge'] if 'judge' in cfg else {}
        self.timeout_exp = int(j.get('timeout', scripts.TIMEOUT_EXP))
        self.opts = SimpleNamespace(
            timeout=4.096e-6 * (1 << self.timeout_exp),
            mtu=scripts.MTU,
            cnp_window=float(j.get('cnp_window_us', 1000)) / 1e6,
            crossing_us=float(j.get('crossing_us', 100)), at=None)
        self.runs = []
        self.faked = set()

    def injector_cmd(self, events, trace, n):
        inj = self.cfg['injector']
        fill = {'pid': '%d-%d' % (os.getpid(), n)}
        for e in ('left', 'right'):
            fill[e + '_tap'] = self.cfg[e].get('tap', '')
        eal = shlex.split(inj['eal'].format(**fill))
        cmd = [self.args.inject] + eal + ['--', '--script', events,
                                          '--trace', trace]
        if int(inj.get('idle_us', '0')):
            cmd += ['--idle-us', inj['idle_us']]
        return cmd

    def setup(self):
        base = kernel = None
        if any(isinstance(e, GuestEnd) for e in self.ends.values()):
            k = guest.kernel()
            if k is None:
                raise RuntimeError('no kernel with rdma_rxe in /boot and '
                                   '/lib/modules (linux-image-amd64)')
            kernel = k[1]
            base = os.path.join(self.work, 'base.cpio.gz')
            guest.build_base(k[0], base)
        for e in self.ends.values():
            e.setup(base, kernel)
            if isinstance(e, GuestEnd):
                e.boot()
        t0 = time.time()
        for name, e in self.ends.items():
            if not e.ready():
                raise RuntimeError('the %s end did not come up%s' % (
                    name, ' (console in %s)' % e.vm.log_path
                    if isinstance(e, GuestEnd) else ''))
        print('up: left %s, right %s (%.0f s)' % (
            self.ends['left'].what(), self.ends['right'].what(),
            time.time() - t0), flush=True)

    def run_one(self, n, script, qps, req_side):
        """Script @p script on @p qps QPs with the @p req_side end the
        requester (perftest's client)."""
        resp_side = 'right' if req_side == 'left' else 'left'
        req, resp = self.ends[req_side], self.ends[resp_side]
        name = '%02d-%s%s-%s-requester' % (
            n, script.name, '' if qps == 1 else '-%dqp' % qps, req_side)
        run = SimpleNamespace(
            name=name, script=script, qps=qps, req_side=req_side,
            resp_side=resp_side,
            trace=os.path.join(self.work, name + '.pcapng'),
            problems=[], exits=None, res=None, differs=[], fault=None)
        self.runs.append(run)
        for e in (req, resp):
            if not e.ensure():
                run.problems.append('the %s end could not be booted again'
                                    % e.name)
                return run
        fake = getattr(self.args, 'fake_fault', None)
        if fake and fake in name and isinstance(req, GuestEnd) and \
           fake not in self.faked:
            # (a test's: the guest's kernel log tells of a fault)
            self.faked.add(fake)
            req.wait(req.start('echo "BUG: a fault of --fake-fault" '
                               '>/dev/kmsg'), 30)
        events = os.path.join(self.work, name + '.events')
        with open(events, 'w') as f:
            f.write(scripts.events(script,
                                   'ab' if req_side == 'left' else 'ba',
                                   qps))
        inj, up = inject.start(self.injector_cmd(events, run.trace, n))
        if not up:
            run.problems.append('droce-inject did not start: %s' %
                                _tail(inject.stop(inj), 5))
            return run
        args = scripts.perftest_args(script, qps, self.timeout_exp)
        port = PORT + n
        try:
            hs = resp.start(_server(resp, script.tool, args, port))
            hc = req.start(_client(req, script.tool, args, port, resp.ip))
            rc_c, out_c = req.wait(hc, RUN_TIMEOUT)
            rc_s, out_s = resp.wait(hs, 60 if rc_c is not None else 5)
        except BaseException:
            # (a session of its own: no terminal's signal reaches it)
            inject.kill_group(inj)
            raise
        rep = inject.stop(inj)
        run.exits = (rc_c, rc_s)
        for side, out in ((req_side, out_c), (resp_side, out_s)):
            with open(os.path.join(self.work, '%s.%s.out' % (name, side)),
                      'w') as f:
                f.write(out or '')
        acted = inject.acted(rep)
        want = scripts.acts(script, qps)
        if inj.returncode != 0:
            run.problems.append('droce-inject exit %s: %s' % (
                inj.returncode, _tail(rep, 5)))
        elif (acted or 0) != want:
            run.problems.append('the event acted on %s frames, not %d' % (
                acted, want))
        if rc_c is None or rc_s is None:
            # (a guest whose network stalled tells of it late, often as
            # its tools are killed: its fault, then, not the run's)
            for e in (req, resp):
                if isinstance(e, GuestEnd):
                    e.vm.wait_for(r'^guest: kernel fault$', FAULT_GRACE_S)
        for e in (req, resp):
            fault = e.vm.fault() if isinstance(e, GuestEnd) else None
            if fault is not None:
                run.problems.append("the %s end's kernel faulted (console "
                                    "in %s)" % (e.name, e.vm.log_path))
                run.fault = '\n'.join(fault.splitlines()[:3])
        if not os.path.exists(run.trace):
            run.problems.append('no trace')
            return run
        frames, marked = T.read(run.trace)
        run.res = analyze.analyze(frames, marked, self.opts)
        self.judge(run)
        return run

    def judge(self, run):
        """What differs from the IBTA's answer: any FAIL, and each check
        the script's event must exercise that is not PASS on every
        connection."""
        res = run.res
        if not res.conns:
            run.differs.append('no RC connection in the trace')
            return
        for verdict, check, label, reason in res.lines:
            if verdict == 'FAIL':
                run.differs.append('FAIL %s %s: %s' % (check, label, reason))
        for check in run.script.expect:
            for c in res.conns:
                got = [(v, r) for v, ch, l, r in res.lines
                       if ch == check and l == c.label()]
                if got and got[0][0] == 'N/A':
                    run.differs.append('N/A %s %s: %s' % (
                        check, c.label(), got[0][1]))

    def side_of(self, run, check):
        return run.req_side if check.startswith('requester.') \
            else run.resp_side

    def row(self, run):
        """A run's row of the table: (run, verdict, detail lines)."""
        if run.problems:
            verdict = 'NOT RUN' if run.res is None else 'DIFFERS'
        else:
            verdict = 'DIFFERS' if run.differs else 'AS IBTA'
        detail = list(run.problems)
        for d in run.differs:
            check = d.split()[1]
            detail.append('%s end: %s' % (self.side_of(run, check), d))
        return run, verdict, detail

    def summary(self):
        """The table's rows, a run each."""
        return [self.row(run) for run in self.runs]

    def close(self):
        for e in self.ends.values():
            e.close()


def _exits(run):
    if run.exits is None:
        return ''
    c, s = run.exits
    return 'perftest exit: client %s, server %s' % (
        'timed out' if c is None else c, 'timed out' if s is None else s)


def _report(lab, title):
    """The report page: the summary table on top, each run's trace
    below with its script and what differs."""
    runs = [r for r in lab.runs if os.path.exists(r.trace)]
    rows = lab.summary()
    top = ['<p>left: %s; right: %s</p>\n' % (
        html.escape(lab.ends['left'].what()),
        html.escape(lab.ends['right'].what())),
        '<table><tr><th>run</th><th>script</th><th>QPs</th>'
        '<th>requester</th><th>verdict</th><th>what differs from the '
        'IBTA\'s answer</th></tr>\n']
    for run, verdict, detail in rows:
        top.append('<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td>'
                   '<td class="%s">%s</td><td>%s</td></tr>\n' % (
                       html.escape(run.name), run.script.name, run.qps,
                       run.req_side, 'PASS' if verdict == 'AS IBTA' else
                       'FAIL', verdict,
                       '<br>'.join(html.escape(d) for d in detail) or
                       'nothing'))
    top.append('</table>\n')
    for e in lab.ends.values():
        if e.faults:
            top.append('<p>the %s end\'s kernel faulted %d times (booted '
                       'again; the runs again): consoles in %s</p>\n' % (
                           e.name, len(e.faults), html.escape(e.work)))
    notes = {}
    for run in runs:
        s = run.script
        notes[run.trace] = '<p>%s, %s on %d QP%s, the %s end the requester: '\
            '%s. Must PASS: %s. %s</p>\n' % (
                html.escape(s.name), s.tool, run.qps,
                '' if run.qps == 1 else 's', run.req_side,
                html.escape(s.about), ', '.join(s.expect),
                html.escape(_exits(run)))
    return report.write([r.trace for r in runs],
                        os.path.join(lab.work, 'report'), lab.opts, title,
                        top=''.join(top), notes=notes)


def find_inject():
    here = os.path.dirname(os.path.realpath(sys.argv[0]))
    for p in (os.path.join(here, 'droce-inject'),
              shutil.which('droce-inject')):
        if p and os.access(p, os.X_OK):
            return p
    return None


def main(args):
    if args.print_config:
        sys.stdout.write(DEFAULT_CONFIG)
        return 0
    try:
        cfg = load_config(args.config)
        todo = [scripts.parse(s) for s in args.scripts] or scripts.DEFAULT
    except (OSError, ValueError, KeyError, configparser.Error) as e:
        print('droce-lab run: %s' % e, file=sys.stderr)
        return 2
    args.inject = args.inject or find_inject()
    if not args.inject:
        print('droce-lab run: no droce-inject beside droce-lab or on PATH: '
              'give --inject', file=sys.stderr)
        return 2
    if report._pyplot() is None:
        print('droce-lab run: the report needs matplotlib: apt-get install '
              'python3-matplotlib', file=sys.stderr)
        return 2
    args.out = os.path.abspath(args.out)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    lab = Lab(args, cfg)
    try:
        lab.setup()
        n = 0
        for name, qps in todo:
            for side in ('left', 'right'):
                n += 1
                t0 = time.time()
                run = lab.run_one(n, scripts.BY_NAME[name], qps, side)
                if run.fault is not None:
                    # soft-RoCE's kernel has warned at a QP's end: the
                    # peer's fault, not the run's; once more on a guest
                    # booted anew (Lab.run_one), and a second counts
                    print('(the run %s again: %s; a soft-RoCE kernel '
                          'fault:\n  %s)' % (run.name, run.problems[-1],
                                             run.fault.replace('\n', '\n  ')),
                          flush=True)
                    lab.runs.remove(run)
                    t0 = time.time()
                    run = lab.run_one(n, scripts.BY_NAME[name], qps, side)
                verdict = lab.row(run)
                detail = verdict[2]
                if len(detail) > SHOWN:
                    detail = detail[:SHOWN] + [
                        '(%d more: in the report)' % (len(detail) - SHOWN)]
                print('%-8s %s (%.0f s)%s' % (
                    verdict[1], run.name, time.time() - t0,
                    ''.join('\n         ' + d for d in detail)),
                    flush=True)
    except RuntimeError as e:
        print('droce-lab run: %s' % e, file=sys.stderr)
        return 2
    finally:
        lab.close()
    index, _ = _report(lab, args.title)
    rows = lab.summary()
    count = {v: sum(1 for _, w, _ in rows if w == v)
             for v in ('AS IBTA', 'DIFFERS', 'NOT RUN')}
    print('%d runs: %d as the IBTA asks, %d differ, %d not run' % (
        len(rows), count['AS IBTA'], count['DIFFERS'], count['NOT RUN']))
    print('report: %s' % index)
    if count['NOT RUN'] or any(r.problems for r in lab.runs):
        return 2
    return 1 if count['DIFFERS'] else 0
