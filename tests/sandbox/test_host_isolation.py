"""The sandbox against other uids of the same host (issue 20, class 2).

Jails run, outside, as an id of a dedicated range that no account and no other
process has (not ``nobody``); work and staging dirs are reachable by the jail and us
only; the resident daemons listen in a private network namespace only root can
enter, with a cap on live jails. Each attack runs as another uid in a real process
(``nobody``, whom the jails used to share, and an arbitrary one) against real jails.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

import pytest
from gym_llm_sandbox import Limits, Sandbox, _nsjail, _resident, diagnose
from gym_llm_sandbox._files import base_dir, new_stage, remove_tree

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="other uids and private jail ids need root")

OTHER_UIDS = [65534, 4242]  # nobody (the jails' old outside uid), and an unrelated one
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def as_uid(uid: int, code: str) -> dict:
    """Run ``code`` (which prints one JSON value) as ``uid`` in a plain host process."""
    r = subprocess.run([PY, "-S", "-c", code], user=uid, group=uid, extra_groups=[],
                       capture_output=True, text=True, timeout=30, cwd="/")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


PROBE_DIRS = """
import json, os
out = {}
for p in PATHS:
    try:
        try:
            os.listdir(p)
        except NotADirectoryError:
            open(p).read()
        out[p] = "READ"
    except OSError as e:
        out[p] = type(e).__name__
print(json.dumps(out))
"""


def test_jails_run_as_a_dedicated_id_no_one_else_has(host):
    caps = _nsjail.host_caps()
    lo, n = _nsjail.JAIL_HOST_ID_BASE, _nsjail.JAIL_HOST_ID_COUNT
    assert lo <= caps.jail_uid < lo + n and caps.jail_gid == caps.jail_uid
    sb = Sandbox(limits=Limits(wall_time_s=10))
    for kw in ({}, {"files": {"a": "x"}}):  # resident and per-run paths
        r = sb.run_code("python", "print(open('/proc/self/uid_map').read().split()[1])", **kw)
        assert r.stdout.strip() == str(caps.jail_uid), r
    with sb.session() as s:
        s.run_code("bash", "echo hi > f")
        st = os.stat(os.path.join(s.path, "f"))
        assert (st.st_uid, st.st_gid) == (caps.jail_uid, caps.jail_gid)
        assert _nsjail.foreign_holders(caps.jail_uid) == []  # only our jails, if any


def _orphan_as(uid: int, seconds: float) -> int:
    """A process holding ``uid`` that is not ours (re-parented to init: its parent has
    exited), alive for ``seconds``; its pid."""
    code = ("import os, time\n"
            "if os.fork():\n    os._exit(0)\n"
            "print(os.getpid(), flush=True)\nos.close(1)\n"
            f"time.sleep({seconds})\n")
    r = subprocess.run([PY, "-S", "-c", code], user=uid, group=uid, extra_groups=[], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=30, cwd="/", start_new_session=True)
    return int(r.stdout)


def test_foreign_holders_finds_another_process_but_not_a_passing_one(host):
    jail_uid = _nsjail.host_caps().jail_uid
    pid = _orphan_as(jail_uid, 30)
    try:
        assert str(pid) in _nsjail.foreign_holders(jail_uid)  # it stays: it is someone else's
    finally:
        os.kill(pid, 9)
    # gone before the last look (a jail of ours mid-teardown looks orphaned like this)
    brief = _orphan_as(jail_uid, 0.05)
    assert str(brief) not in _nsjail.foreign_holders(jail_uid, passes=3, gap_s=0.1)


@pytest.mark.parametrize("uid", OTHER_UIDS)
def test_another_uid_cannot_reach_work_or_staging_dirs(uid, host):
    sb = Sandbox(limits=Limits(wall_time_s=10))
    stage = new_stage()
    with sb.session() as s:
        s.write_files({"secret.txt": "s3cret"})
        s.run_code("bash", "mkdir -p d && echo x > d/f && chmod -R a+rwX .")  # the jail opens up
        os.mkdir(os.path.join(stage, "work"))
        with open(os.path.join(stage, "work", "f"), "w") as f:
            f.write("x")
        os.chmod(os.path.join(stage, "work"), 0o777)
        paths = [s.path, os.path.join(s.path, "secret.txt"), os.path.join(s.path, "d"),
                 stage, os.path.join(stage, "work"), os.path.join(stage, "work", "f"), base_dir()]
        got = as_uid(uid, PROBE_DIRS.replace("PATHS", repr(paths)))
    remove_tree(stage)
    assert all(v == "PermissionError" for v in got.values()), got


@pytest.mark.parametrize("uid", OTHER_UIDS)
def test_another_uid_cannot_connect_to_a_resident_daemon(uid, host):
    sb = Sandbox(limits=Limits(wall_time_s=10))
    assert sb.run_code("python", "print(1)").stdout == "1\n"
    daemons = _resident.DAEMONS.all()
    assert daemons
    tid = _resident.DAEMONS.netns.submit(__import__("threading").get_native_id).result()
    code = f"""
import ctypes, json, os, socket
out = {{}}
for port in {[d.port for d in daemons]}:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port)); out[port] = "CONNECTED"
    except OSError as e:
        out[port] = type(e).__name__
try:
    fd = os.open("/proc/{os.getpid()}/task/{tid}/ns/net", os.O_RDONLY)
    out["setns"] = ctypes.CDLL(None, use_errno=True).setns(fd, 0x40000000) == 0
except OSError as e:
    out["setns"] = type(e).__name__
print(json.dumps(out))
"""
    got = as_uid(uid, code)
    assert got.pop("setns") in ("PermissionError", False), got
    assert all(v == "ConnectionRefusedError" for v in got.values()), got


def test_a_networked_jail_cannot_reach_a_daemon(host):
    sb = Sandbox(limits=Limits(wall_time_s=10))
    sb.run_code("python", "pass")
    ports = [d.port for d in _resident.DAEMONS.all()]
    net = sb.run_code("python", f"""
import socket
for port in {ports}:
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port)); print("CONNECTED")
    except OSError as e:
        print(type(e).__name__)
""", limits=Limits(wall_time_s=10, network=True))
    assert "CONNECTED" not in net.stdout and net.stdout.strip(), net


def test_a_daemon_caps_its_live_jails(host):
    from gym_llm_sandbox.aio import background_loop

    sb = Sandbox(limits=Limits(wall_time_s=10, cpu_time_s=10), max_concurrency=2)

    async def many() -> list[str]:
        rs = await asyncio.gather(*(sb.arun_code("python", f"print({i})") for i in range(12)))
        return [r.stdout for r in rs]

    assert sb.run_code("python", "print(1)").stdout == "1\n"
    cap = _resident.max_conns(2)
    daemon = next(d for d in _resident.DAEMONS.all()
                  if "--max_conns" in d.key and d.key[d.key.index("--max_conns") + 1] == str(cap))
    socks = [daemon.netns.submit(daemon._connect).result() for _ in range(cap + 10)]
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with open(f"/proc/{daemon.proc.pid}/task/{daemon.proc.pid}/children") as f:
                jails = f.read().split()
            time.sleep(0.2)
        assert 0 < len(jails) <= cap, (len(jails), cap)
        # Our own runs, up to the sandbox's concurrency at a time, still all work while
        # the daemon is full (it refuses them; they run in per-run jails instead) ...
        assert background_loop().run(many()) == [f"{i}\n" for i in range(12)]
    finally:
        for s in socks:
            s.close()
    # ... and after the hogs are gone, while their jails are torn down.
    assert background_loop().run(many()) == [f"{i}\n" for i in range(12)]


def test_doctor_names_the_uid_range_and_the_daemon_socket():
    rows = {r["name"]: r for r in diagnose()}
    uid = rows["sandbox: outside uid"]
    assert uid["ok"] and str(_nsjail.host_caps().jail_uid) in uid["detail"]
    assert f"{_nsjail.JAIL_HOST_ID_BASE}-" in uid["detail"]
    res = rows["sandbox: resident nsjail"]
    assert res["ok"] and "private network namespace" in res["detail"] and "max_conns" in res["detail"]


def test_no_daemon_port_on_the_host_loopback(host):
    Sandbox(limits=Limits(wall_time_s=10)).run_code("python", "pass")
    ports = {d.port for d in _resident.DAEMONS.all()}
    for port in ports:
        s = socket.socket()
        with pytest.raises(ConnectionRefusedError):
            s.connect(("127.0.0.1", port))
        s.close()


def _run_in_child(q) -> None:  # a forked child: the parent's daemons and spawner are not its
    sb = Sandbox(limits=Limits(wall_time_s=10))
    q.put(asyncio.run(sb.arun_code("python", "print(2)")).stdout)


def test_a_forked_child_gets_daemons_of_its_own(host):
    import multiprocessing

    sb = Sandbox(limits=Limits(wall_time_s=10))
    assert sb.run_code("python", "print(1)").stdout == "1\n"  # the parent has a daemon
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_run_in_child, args=(q,))
    p.start()
    try:
        assert q.get(timeout=60) == "2\n"
    finally:
        p.join(timeout=30)
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0
    assert sb.run_code("python", "print(3)").stdout == "3\n"  # the parent's still serve
