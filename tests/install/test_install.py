#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce as a user installs it and builds against it.

`meson install --destdir DIR` of the build, then, in DIR:

  - what is there: libdroce.so, its public headers alone (droce.h,
    droce_cm.h, droce_counters.h) in <includedir>/droce, libdroce.pc,
    the drop-in libibverbs.so.1 and librdmacm.so.1 in <libdir>/droce
    (nothing that would shadow rdma-core's in <libdir>), the tools,
    droce-run and the sample configurations; no static archive, none of
    droce's private headers;
  - libdroce.so exports its API alone: each symbol of `nm -D` is one of
    the version scripts' (rdma-core's verbs and rdma_cm calls, droce's
    own), each function the public headers declare is exported, and
    nothing else;
  - each public header compiles on its own with the -I of pkg-config
    and no DPDK;
  - tests/install/verbs_hello.c built with `pkg-config --cflags --libs
    libdroce` runs on the embedded default (a SEND and an RDMA WRITE
    between droce0 and droce1, checked);
  - the same program built as any rdma-core program is (-libverbs)
    finds no device alone and runs over droce through droce-run;
  - Debian's ibv_devinfo through droce-run lists droce0 and droce1,
    active;
  - through droce-run, /dev/infiniband/uverbs<N> looks like a device's
    node (libdroce_devnode.so, for UCX), and no other path is changed;
  - Debian's rping through droce-run, server and client over net_memif.

DIR is not a real install, so the loader is told where libdroce.so is
(LD_LIBRARY_PATH, as ldconfig would) and pkg-config where the tree is
(PKG_CONFIG_SYSROOT_DIR); droce-run finds the drop-ins from where it
is itself.

Usage: test_install.py --build DIR --source DIR --workdir DIR
(as root: rping's pair runs in a network namespace of its own)
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'interop'))

import netns                        # noqa: E402
import test_rdmacm_dropin as rd     # noqa: E402

PUBLIC_HEADERS = ['droce.h', 'droce_cm.h', 'droce_counters.h']
TOOLS = ['droce-demo', 'droce-dump', 'droce-framegen', 'droce-inject',
         'droce-lab', 'droce-perf', 'droce-pmd', 'droce-run']
CONFIGS = ['af_packet.ini', 'af_xdp.ini', 'droce-default.ini',
           'memif-client.ini', 'memif-server.ini', 'pci.ini']

check = rd.check


def run(argv, env=None, timeout=120):
    """(rc, stdout + stderr)"""
    p = subprocess.run(argv, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def tail(out, n=600):
    return out.strip()[-n:]


def map_symbols(path):
    """The global symbols and version node names of a version script."""
    text = re.sub(r'/\*.*?\*/', '', open(path).read(), flags=re.S)
    syms = set(re.findall(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*;', text, re.M))
    nodes = set(re.findall(r'^([A-Z][A-Z0-9_.]*)\s*\{', text, re.M))
    return syms - {'local'}, nodes


def header_functions(path):
    """Names of the functions a header declares (droce_*)."""
    text = re.sub(r'/\*.*?\*/', '', open(path).read(), flags=re.S)
    return set(re.findall(r'\b(droce_[a-z0-9_]+)\s*\(', text)) - {
        n for n in re.findall(r'#define\s+(droce_[a-z0-9_]+)', text)}


def test_layout(tree):
    inc = os.path.join(tree['includedir'], 'droce')
    headers = sorted(os.listdir(inc)) if os.path.isdir(inc) else []
    check(headers == PUBLIC_HEADERS,
          'include/droce holds the public headers alone (%s)' % headers)
    others = [f for f in glob.glob(os.path.join(tree['includedir'], '**'),
                                   recursive=True)
              if os.path.isfile(f) and os.path.dirname(f) != inc]
    check(not others, 'no other header installed (%s)' % others[:5])
    archives = glob.glob(os.path.join(tree['root'], '**', '*.a'),
                         recursive=True)
    check(not archives, 'no static archive installed (%s)' % archives[:5])
    libdir = tree['libdir']
    for f in ('libdroce.so', 'pkgconfig/libdroce.pc',
              'droce/libibverbs.so.1', 'droce/librdmacm.so.1',
              'droce/libdroce_devnode.so'):
        check(os.path.exists(os.path.join(libdir, f)), '%s installed' % f)
    shadow = glob.glob(os.path.join(libdir, 'libibverbs*')) + \
        glob.glob(os.path.join(libdir, 'librdmacm*'))
    check(not shadow, 'nothing in <libdir> shadows rdma-core (%s)' % shadow)
    for t in TOOLS:
        p = os.path.join(tree['bindir'], t)
        check(os.access(p, os.X_OK), 'bin/%s installed' % t)
    cfg = os.path.join(tree['datadir'], 'droce', 'config')
    have = sorted(os.listdir(cfg)) if os.path.isdir(cfg) else []
    check(have == CONFIGS, 'the sample configurations (%s)' % have)


def test_symbols(tree, source):
    lib = os.path.join(tree['libdir'], 'libdroce.so')
    rc, out = run(['nm', '-D', '--defined-only', lib])
    exported = set(l.split()[-1].split('@')[0] for l in out.splitlines()
                   if l.strip())
    allowed, nodes = set(), set()
    for m in ('lib/verbs/libibverbs.map', 'lib/rdmacm/librdmacm.map',
              'lib/libdroce.map'):
        s, n = map_symbols(os.path.join(source, m))
        allowed |= s
        nodes |= n
    extra = sorted(exported - allowed - nodes)
    check(rc == 0 and len(exported) > 200 and not extra,
          'nm -D libdroce.so: %d symbols, each of the version scripts '
          '(others: %s)' % (len(exported), extra[:8] or 'none'))
    declared = set()
    for h in PUBLIC_HEADERS:
        declared |= header_functions(
            os.path.join(tree['includedir'], 'droce', h))
    missing = sorted(declared - exported)
    check(declared and not missing,
          'every function of the public headers is exported (%d; '
          'missing: %s)' % (len(declared), missing or 'none'))
    ours = sorted(s for s in exported if s.startswith('droce_'))
    check(set(ours) == declared,
          'droce_* exported are the headers\' alone (others: %s)' %
          (sorted(set(ours) - declared) or 'none'))


def pkg_env(tree):
    return dict(os.environ,
                PKG_CONFIG_PATH=os.path.join(tree['libdir'], 'pkgconfig'),
                PKG_CONFIG_SYSROOT_DIR=tree['root'])


def test_headers(tree, work):
    rc, cflags = run(['pkg-config', '--cflags', 'libdroce'],
                     env=pkg_env(tree))
    check(rc == 0 and 'dpdk' not in cflags,
          'pkg-config --cflags libdroce: %s' % cflags.strip())
    for h in PUBLIC_HEADERS:
        src = os.path.join(work, 'only_%s.c' % h.replace('.', '_'))
        with open(src, 'w') as f:
            f.write('#include <%s>\n' % h)
        rc, out = run(['cc', '-Wall', '-Wextra', '-Werror', '-c', src,
                       '-o', src + '.o'] + cflags.split())
        check(rc == 0, '#include <%s> alone compiles%s' %
              (h, '' if rc == 0 else ': ' + tail(out)))


def test_pkg_config_build(tree, source, work):
    env = pkg_env(tree)
    rc, flags = run(['pkg-config', '--cflags', '--libs', 'libdroce'],
                    env=env)
    exe = os.path.join(work, 'verbs_hello_droce')
    rc, out = run(['cc', '-Wall', '-Wextra', '-Werror', '-DWITH_DROCE_H',
                   os.path.join(source, 'tests/install/verbs_hello.c'),
                   '-o', exe] + flags.split())
    check(rc == 0, 'verbs_hello builds with pkg-config libdroce (%s)%s' %
          (flags.strip(), '' if rc == 0 else ': ' + tail(out)))
    if rc != 0:
        return
    rc, out = run(['ldd', exe])
    check('libdroce.so.0' in out and 'libibverbs' not in out,
          'it links libdroce.so.0, not rdma-core\'s libibverbs')
    env = dict(os.environ, LD_LIBRARY_PATH=tree['libdir'])
    env.pop('DROCE_CONFIG', None)
    rc, out = run([exe], env=env)
    check(rc == 0 and 'verbs_hello: ok' in out,
          'and runs on the embedded default%s' %
          ('' if rc == 0 else ': ' + tail(out)))


def test_plain_build(tree, source, work):
    exe = os.path.join(work, 'verbs_hello_rdma_core')
    rc, out = run(['cc', '-Wall', '-Wextra', '-Werror',
                   os.path.join(source, 'tests/install/verbs_hello.c'),
                   '-o', exe, '-libverbs'])
    check(rc == 0, 'verbs_hello builds as any verbs program (-libverbs)%s' %
          ('' if rc == 0 else ': ' + tail(out)))
    if rc != 0:
        return
    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)
    env.pop('LD_LIBRARY_PATH', None)
    rc, out = run([exe], env=env)
    check(rc != 0 and '0 devices' in out,
          'alone it runs over rdma-core, which has no device here (%s)' %
          tail(out, 100))
    droce_run = os.path.join(tree['bindir'], 'droce-run')
    rc, out = run([droce_run, exe], env=env)
    check(rc == 0 and 'verbs_hello: ok' in out,
          'through droce-run it runs over droce%s' %
          ('' if rc == 0 else ': ' + tail(out)))
    rc, out = run([droce_run, '--config',
                   os.path.join(tree['datadir'], 'droce', 'config',
                                'droce-default.ini'), exe], env=env)
    check(rc == 0 and 'verbs_hello: ok' in out,
          'and so with --config, the installed droce-default.ini%s' %
          ('' if rc == 0 else ': ' + tail(out)))


def test_ibv_devinfo(tree):
    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)
    env.pop('LD_LIBRARY_PATH', None)
    rc, out = run([os.path.join(tree['bindir'], 'droce-run'),
                   'ibv_devinfo'], env=env)
    devs = re.findall(r'^hca_id:\s+(\S+)', out, re.M)
    active = len(re.findall(r'state:\s+PORT_ACTIVE', out))
    check(rc == 0 and devs == ['droce0', 'droce1'] and active == 2,
          'droce-run ibv_devinfo: %s, %d ports active' % (devs, active))


def test_devnode(tree):
    """droce-run answers a look at /dev/infiniband/uverbs<N> (UCX's) as
    for a device's node, and leaves every other path alone."""
    env = dict(os.environ)
    env.pop('LD_PRELOAD', None)
    probe = ('import os, stat; '
             'print(stat.S_ISCHR(os.stat("/dev/infiniband/uverbs1").st_mode),'
             ' os.access("/dev/infiniband/uverbs1", os.R_OK | os.W_OK),'
             ' os.path.exists("/dev/infiniband/uverbsX"))')
    rc, out = run([os.path.join(tree['bindir'], 'droce-run'),
                   '/usr/bin/python3', '-c', probe], env=env)
    check(rc == 0 and out.split() == ['True', 'True', 'False'],
          'droce-run: /dev/infiniband/uverbs1 a character device, '
          'read-write; uverbsX none (%s)' % tail(out, 200))


def test_rping(tree, work):
    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)
    env.pop('LD_LIBRARY_PATH', None)
    args = argparse.Namespace(workdir=os.path.join(work, 'rping'))
    os.makedirs(args.workdir, exist_ok=True)
    # (each side's DROCE_CONFIG, a memif server's or client's, is in its
    # environment: droce-run hands it on)
    rd.test_rping(args, env, 18730,
                  run=[os.path.join(tree['bindir'], 'droce-run')])


def test_lab(tree, source):
    """The installed droce-lab runs from the installed tree: beside the
    script there is no droce_lab package, so it found the one in
    <datadir>/droce/lab."""
    pcap = os.path.join(source, 'tests', 'data', 'pcaps', 'loss_write.pcap')
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    rc, out = run([os.path.join(tree['bindir'], 'droce-lab'), 'analyze',
                   pcap], env=env)
    check(rc == 0 and 'PASS requester.gbn-resend' in out and
          os.path.isfile(os.path.join(tree['datadir'], 'droce', 'lab',
                                      'droce_lab', 'analyze.py')),
          'bin/droce-lab analyze runs from the installed tree%s' %
          ('' if rc == 0 else ': ' + tail(out)))
    out_dir = os.path.join(tree['root'], '..', 'lab-report')
    rc, out = run([os.path.join(tree['bindir'], 'droce-lab'), 'report',
                   '-o', out_dir, pcap], env=env)
    check(rc == 0 and os.path.isfile(os.path.join(out_dir, 'index.html')),
          'bin/droce-lab report runs from the installed tree%s' %
          ('' if rc == 0 else ': ' + tail(out)))
    # droce-lab run: its setup, and the guest's maker beside its package
    maker = os.path.join(tree['datadir'], 'droce', 'lab', 'guest',
                         'mkinitramfs.sh')
    rc, out = run([os.path.join(tree['bindir'], 'droce-lab'), 'run',
                   '--print-config'], env=env)
    check(rc == 0 and '[injector]' in out and os.access(maker, os.X_OK) and
          os.path.isfile(os.path.join(os.path.dirname(maker), 'init')),
          'bin/droce-lab run --print-config, and the soft-RoCE guest\'s '
          'maker installed beside it%s' % ('' if rc == 0 else ': ' +
                                           tail(out)))


def installed_tree(build, root):
    """Where meson put each kind of file under root."""
    opts = json.loads(subprocess.run(
        ['meson', 'introspect', '--buildoptions', build], check=True,
        capture_output=True, text=True).stdout)
    o = {x['name']: x['value'] for x in opts}
    tree = {'root': root}
    for d in ('bindir', 'libdir', 'includedir', 'datadir'):
        tree[d] = os.path.join(root, o['prefix'].lstrip('/'), o[d])
    return tree


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    work = os.path.abspath(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    root = os.path.join(work, 'root')
    os.makedirs(root)
    rc, out = run(['meson', 'install', '-C', args.build, '--no-rebuild',
                   '--destdir', root])
    check(rc == 0, 'meson install --destdir%s' %
          ('' if rc == 0 else ': ' + tail(out)))
    if rc != 0:
        return 1
    tree = installed_tree(args.build, root)
    source = os.path.abspath(args.source)
    test_layout(tree)
    test_symbols(tree, source)
    test_headers(tree, work)
    test_pkg_config_build(tree, source, work)
    test_plain_build(tree, source, work)
    test_lab(tree, source)
    test_ibv_devinfo(tree)
    test_devnode(tree)
    netns.enter()
    test_rping(tree, work)
    print('%d passed, %d failed' % (rd.passed, len(rd.failures)))
    for f in rd.failures:
        print('failed: ' + f.splitlines()[0][:200])
    return 1 if rd.failures else 0


if __name__ == '__main__':
    sys.exit(main())
