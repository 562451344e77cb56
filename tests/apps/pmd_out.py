# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Reading what droce-pmd prints (from a script's output or from its
prompt on a pipe), and the counters it should print (the lists of
lib/engine/droce_counters.h): the apps tests share it."""

import collections
import os
import re
import select
import subprocess
import time

PROMPT = 'droce-pmd> '

RE_CREATE = re.compile(r'qp (\d+) on (\S+): gid (\S+) qpn 0x([0-9a-f]+) '
                       r'psn 0x([0-9a-f]+) rkey 0x([0-9a-f]+) '
                       r'addr 0x([0-9a-f]+) depth (\d+)')
RE_RUN = re.compile(r'^run qp (\d+) (\w+) (\d+) x (\d+): (\d+) bytes in '
                    r'([\d.]+) s, ([\d.]+) Gb/s, (\d+) msg/s, '
                    r'data checked \((\d+) bytes\)$')
RE_DEV = re.compile(r'^(\S+) \((started|stopped)\)$')
RE_MTU = re.compile(r'^  MAC (\S+)  link (\w+)  active MTU (\d+)$')
RE_QP = re.compile(r'^qp (\d+) on (\S+): qpn 0x([0-9a-f]+) state (\w+) '
                   r'psn 0x([0-9a-f]+) depth (\d+)$')
RE_PEER = re.compile(r'^  peer (\S+) qpn 0x([0-9a-f]+) psn 0x([0-9a-f]+)')
RE_CQ = re.compile(r'^cq of qp (\d+) on (\S+): depth (\d+) polled (\d+)$')
RE_COUNTER = re.compile(r'^  (\w+)\s+(\d+)$')
RE_RTS = re.compile(r'^qp (\d+): RTS to (\S+) qpn 0x([0-9a-f]+) '
                    r'psn 0x([0-9a-f]+)(?: \(qp (\d+) of this process\))?$')
# the CM's lines: a listener, a request accepted, a connection up, a QP
# of `show cm`
RE_CM_LISTEN = re.compile(r'^cm: (\S+) listening on (\S+) port (\d+)$')
RE_CM_ACCEPT = re.compile(r'^cm: qp (\d+) on (\S+) accepts (\S+) port '
                          r'(\d+) at (\S+) port (\d+)$')
RE_CM_EST = re.compile(r'^cm: qp (\d+) established with (\S+) port '
                       r'(\d+)$')
RE_CM_QP = re.compile(r'^cm: qp (\d+) on (\S+): (\S+) port (\d+) '
                      r'(to|from) (\S+) port (\d+), (\w+)$')

# An entry of droce_counters.h's lists: X(name, "description" ...)
RE_ENTRY = re.compile(r'\bX\(\s*(\w+)\s*,\s*"')

Counters = collections.namedtuple('Counters', 'dev qp')


def read_counters(header):
    """Counters(dev=[names], qp=[names]): the DROCE_DEV_COUNTERS and
    DROCE_QP_COUNTERS lists of droce_counters.h, in order."""
    with open(header) as f:
        text = f.read().replace('\\\n', ' ')
    lists = {}
    for line in text.splitlines():
        m = re.match(r'\s*#\s*define\s+(DROCE_(?:DEV|QP)_COUNTERS)\(X\)(.*)',
                     line)
        if m:
            lists[m.group(1)] = RE_ENTRY.findall(m.group(2))
    dev = lists.get('DROCE_DEV_COUNTERS')
    qp = lists.get('DROCE_QP_COUNTERS')
    if not dev or not qp:
        raise ValueError('%s: no counter lists found' % header)
    return Counters(dev, qp)


def read_resources(header):
    """[names] of the DROCE_DEV_RESOURCES list of droce_counters.h, in
    order."""
    with open(header) as f:
        text = f.read().replace('\\\n', ' ')
    for line in text.splitlines():
        m = re.match(r'\s*#\s*define\s+DROCE_DEV_RESOURCES\(X\)(.*)', line)
        if m:
            return RE_ENTRY.findall(m.group(1))
    raise ValueError('%s: no resource list found' % header)


def sections(out):
    """[(command, [lines it printed])] of a script's output."""
    result = [('', [])]
    for line in out.splitlines():
        if line.startswith(PROMPT):
            result.append((line[len(PROMPT):], []))
        else:
            result[-1][1].append(line)
    return result


def blocks(lines, header):
    """{key: (match, {counter: value})} for each header line and the
    counter lines under it."""
    result = {}
    cur = None
    for line in lines:
        m = header.match(line)
        if m:
            cur = {}
            result[m.group(1)] = (m, cur)
            continue
        c = RE_COUNTER.match(line)
        if c and cur is not None:
            cur[c.group(1)] = int(c.group(2))
    return result


def devices(lines):
    """{name: {counter: value, 'mtu': active MTU, 'link': state}}."""
    result = {}
    cur = None
    for line in lines:
        m = RE_DEV.match(line)
        if m:
            cur = result.setdefault(m.group(1), {})
            continue
        m = RE_MTU.match(line)
        if m and cur is not None:
            cur['mtu'] = int(m.group(3))
            cur['link'] = m.group(2)
            continue
        c = RE_COUNTER.match(line)
        if c and cur is not None:
            cur[c.group(1)] = int(c.group(2))
    return result


def qps(lines):
    """{id: (header match, {counter: value})}."""
    return {int(k): v for k, v in blocks(lines, RE_QP).items()}


def counters(lines):
    """{counter: value} of every counter line (`show cm`'s)."""
    return {m.group(1): int(m.group(2))
            for m in map(RE_COUNTER.match, lines) if m}


def read_until(p, regex, timeout=60):
    """Read the prompt's output (process p's stdout) until regex matches;
    the match (its string all that was read) or None."""
    buf = ''
    end = time.time() + timeout
    fd = p.stdout.fileno()
    while time.time() < end:
        m = re.search(regex, buf)
        if m:
            return m
        r, _, _ = select.select([fd], [], [], 1)
        if r:
            chunk = os.read(fd, 65536).decode()
            if not chunk:
                break
            buf += chunk
    return re.search(regex, buf)


# what the apps tests found wrong, each printed as it is checked
failures = []


def check(ok, what):
    print('%s: %s' % ('ok' if ok else 'FAILED', what))
    if not ok:
        failures.append(what)
    return ok


def run_script(pmd, workdir, name, text, timeout=300):
    """Run droce-pmd -f on text (its output kept in workdir);
    (exit status, stdout, stderr)."""
    path = os.path.join(workdir, name + '.txt')
    with open(path, 'w') as f:
        f.write(text)
    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)
    p = subprocess.run([pmd, '-f', path], env=env, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.stdout.decode(), p.stderr.decode()
    with open(os.path.join(workdir, name + '.out'), 'w') as f:
        f.write(out + '\n--- stderr\n' + err)
    return p.returncode, out, err


def start_prompt(pmd):
    """droce-pmd on its prompt through a pipe: (the process, cmd), where
    cmd(line, regex) types line and returns read_until's match."""
    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)
    p = subprocess.Popen([pmd], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def cmd(line, regex):
        p.stdin.write((line + '\n').encode())
        p.stdin.flush()
        return read_until(p, regex)

    return p, cmd


def quit_prompt(p):
    """Type quit at start_prompt()'s droce-pmd: its exit status (None
    if it did not exit within 60 s)."""
    p.stdin.write(b'quit\n')
    p.stdin.flush()
    try:
        return p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        return None


def stop_prompt(p):
    """start_prompt()'s droce-pmd gone, killed if it is still there."""
    if p.poll() is None:
        p.kill()
        p.wait()
