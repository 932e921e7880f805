"""The attack suite: every case asserts containment AND that the host stays healthy."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from gym_llm_sandbox import Limits, Sandbox

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["resident", "per-run"])
def sb(request, sb_limits) -> Sandbox:
    """Every attack runs against both execution paths: Python programs in jails cloned
    by a resident nsjail (the default) and one nsjail process per run (the fallback,
    and the path of bash/C/C++/JavaScript, files in/out and sessions)."""
    return Sandbox(limits=sb_limits, resident=request.param == "resident")


def py(sb: Sandbox, code: str, **kw):
    return sb.run_code("python", code, **kw)


# ----------------------------------------------------------------------------- network


def test_no_network_to_host_loopback_outside_or_dns(sb, host):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    accepted = []
    server.settimeout(0.5)

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    t = threading.Thread(target=accept)
    t.start()
    code = f"""
import socket
res = []
for addr in [("127.0.0.1", {port}), ("1.1.1.1", 53), ("10.0.0.1", 80)]:
    s = socket.socket(); s.settimeout(1)
    try:
        s.connect(addr); res.append("CONNECTED")
    except OSError as e:
        res.append(type(e).__name__)
try:
    socket.getaddrinfo("example.com", 80); res.append("RESOLVED")
except OSError as e:
    res.append("dnsfail")
print(res)
"""
    r = py(sb, code)
    t.join()
    assert r.exit_code == 0, r.stderr
    assert "CONNECTED" not in r.stdout and "RESOLVED" not in r.stdout
    assert "dnsfail" in r.stdout
    assert not accepted
    # Host health: the host's own loopback still works.
    c = socket.create_connection(("127.0.0.1", port), timeout=2)
    c.close()
    server.close()
    assert r.wall_time_s < 3  # failures are immediate, not timeouts


def test_only_a_down_loopback_interface(sb, host):
    r = py(sb, "import socket; print(sorted(n for _, n in socket.if_nameindex()))")
    assert r.stdout.strip() == "['lo']"


# ----------------------------------------------------------------------------- host files


def test_cannot_read_host_files(sb, host, tmp_path):
    secret = tmp_path / "hidden_tests.py"
    secret.write_text("SECRET_ANSWER = 42\n")
    os.chmod(tmp_path, 0o755)
    os.chmod(secret, 0o644)
    paths = ["/etc/shadow", "/etc/passwd", "/root", "/home", str(PROJECT / "setup.cfg"),
             str(PROJECT), str(secret), "/work/main", "/dev/shm", "/proc/1/root/etc/shadow",
             "/sys/kernel", "/usr/lib/python3/dist-packages"]
    code = f"""
import os
for p in {paths!r}:
    try:
        if os.path.isdir(p):
            print(p, "LISTED", os.listdir(p)[:3])
        else:
            print(p, "READ", open(p).read(20))
    except OSError as e:
        print(p, "denied", type(e).__name__)
"""
    r = py(sb, code)
    assert r.exit_code == 0, r.stderr
    assert "LISTED" not in r.stdout and "READ" not in r.stdout, r.stdout
    assert r.stdout.count("denied") == len(paths)
    assert secret.read_text() == "SECRET_ANSWER = 42\n"


def test_cannot_see_another_runs_or_sessions_dir(sb, host):
    with sb.session() as other:
        other.write_files({"private.txt": "other episode"})
        r = py(sb, f"""
import os
for p in [{other.path!r}, {os.path.dirname(other.path)!r}]:
    try: print(os.listdir(p))
    except OSError as e: print("denied", e.errno)
""")
        assert r.stdout.count("denied") == 2, r.stdout
        assert other.read_file("private.txt") == b"other episode"


def test_environment_does_not_leak(sb, host, monkeypatch):
    monkeypatch.setenv("GYM_LLM_TEST_SECRET", "hunter2")
    r = py(sb, "import os; print(sorted(os.environ.items()))")
    assert "hunter2" not in r.stdout and "GYM_LLM_TEST_SECRET" not in r.stdout
    env = dict(eval(r.stdout))  # noqa: S307 - our own repr
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONIOENCODING",
                        "PYTHONPATH", "LC_CTYPE"}


# ----------------------------------------------------------------------------- writes


def test_cannot_write_outside_work_dir(sb, host):
    targets = ["/usr/pwned", "/etc/pwned", "/pwned", "/proc/sys/kernel/hostname",
               "/dev/pwned", "/usr/lib/python3.11/os.py"]
    code = f"""
import os
for p in {targets!r}:
    try:
        open(p, "a").write("x"); print(p, "WROTE")
    except OSError as e:
        print(p, "denied")
open("/work/ok.txt", "w").write("fine"); open("/tmp/ok.txt", "w").write("fine")
print("workdir ok")
"""
    r = py(sb, code)
    assert "WROTE" not in r.stdout and r.stdout.count("denied") == len(targets), r.stdout
    assert "workdir ok" in r.stdout
    assert not os.path.exists("/usr/pwned") and not os.path.exists("/pwned")
    assert "WROTE" not in Path("/usr/lib/python3.11/os.py").read_text()[-10:]


def test_disk_fill_is_capped_in_tmpfs(sb, host):
    before = shutil.disk_usage("/dev/shm").used
    code = """
import os
n = 0
try:
    while True:
        with open(f"/work/f{n}", "wb") as f:
            f.write(b"x" * (1 << 20))
        n += 1
except OSError as e:
    print("stopped", n, e.errno)
"""
    r = py(sb, code, limits=sb.limits.replace(tmpfs_mb=8))
    assert "stopped" in r.stdout, (r.stdout, r.stderr)
    assert int(r.stdout.split()[1]) <= 8
    assert shutil.disk_usage("/dev/shm").used - before < 4 << 20


def test_disk_fill_in_session_dir_is_bounded(sb, host):
    before = shutil.disk_usage("/dev/shm").used
    with sb.session() as s:
        r = s.run_code("python", """
n = 0
try:
    while n < 2000:
        with open(f"f{n}", "wb") as f:
            f.write(b"x" * (1 << 20))
        n += 1
except OSError as e:
    print("stopped", n, e.errno)
""", limits=sb.limits.replace(memory_mb=64))
        # Files in a session dir are charged to the jail's memory cgroup: the jail is
        # OOM-killed (or gets ENOSPC/EFBIG) long before 2 GB land on the host.
        used = sum(f.stat().st_size for f in Path(s.path).iterdir())
        assert used < 200 << 20, (used, r)
        assert r.memory_exceeded or "stopped" in r.stdout
    assert shutil.disk_usage("/dev/shm").used - before < 4 << 20


def test_single_file_size_is_capped(sb, host):
    r = py(sb, "open('big','wb').write(b'x' * (20 << 20))",
           limits=sb.limits.replace(max_file_mb=2, tmpfs_mb=64))
    assert r.exit_code != 0
    assert "File too large" in r.stderr or r.signal == signal.SIGXFSZ


# ----------------------------------------------------------------------------- resources


def test_fork_bomb_is_contained(sb, host):
    t0 = time.monotonic()
    # The init of the jail waits, so the bomb runs for the whole wall time.
    r = sb.run_code("bash", f"# {host.marker}\n:(){{ :|:& }};:\nsleep 30",
                    limits=sb.limits.replace(wall_time_s=2, max_processes=16))
    assert r.timed_out
    assert "retry" in r.stderr or "Resource temporarily unavailable" in r.stderr
    assert time.monotonic() - t0 < 4
    ok = py(sb, "print('after')")
    assert ok.stdout == "after\n"


def test_fork_bomb_python_hits_process_limit(sb, host):
    r = py(sb, """
import os
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            import time; time.sleep(30)
        n += 1
except OSError as e:
    print("limited at", n)
""", limits=sb.limits.replace(max_processes=10, wall_time_s=3))
    assert "limited at" in r.stdout, (r.stdout, r.stderr)
    assert int(r.stdout.split()[-1]) < 10


def test_memory_bomb(sb, host):
    r = py(sb, "x = []\nwhile True: x.append(bytearray(16 << 20))",
           limits=sb.limits.replace(memory_mb=128))
    assert r.memory_exceeded and r.exit_code != 0 and not r.timed_out


def test_memory_bomb_touching_pages(sb, host):
    # Pages really touched: the cgroup (not only RLIMIT_AS) must stop it.
    # 150 MB fits under RLIMIT_AS (memory_mb + 64) but not under the 128 MB cgroup.
    r = py(sb, "import mmap\nn = 150 << 20\nm = mmap.mmap(-1, n)\n"
           "for i in range(0, n, 4096): m[i] = 1\nprint('SURVIVED')",
           limits=sb.limits.replace(memory_mb=128))
    assert r.memory_exceeded and r.signal == signal.SIGKILL and "SURVIVED" not in r.stdout


def test_cpu_loop_killed_at_wall_time(sb, host):
    r = py(sb, "while True: pass", limits=sb.limits.replace(wall_time_s=1.0))
    assert r.timed_out and r.exit_code == -9
    assert 0.95 <= r.wall_time_s < 1.5


def test_cpu_time_limit(sb, host):
    r = py(sb, "while True: pass", limits=sb.limits.replace(wall_time_s=60, cpu_time_s=1))
    assert r.timed_out and r.signal in (signal.SIGXCPU, signal.SIGKILL)
    assert r.wall_time_s < 50  # the kernel's kill, not ours (1 s of CPU took 10-15 s under a load of 33)


def test_sleep_forever_subsecond_wall_time(sb, host):
    r = py(sb, f"import time  # {host.marker}\ntime.sleep(10**6)",
           limits=sb.limits.replace(wall_time_s=0.3))
    assert r.timed_out
    assert 0.3 <= r.wall_time_s < 0.8


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_output_flood_is_truncated_and_stopped(sb, host, stream):
    r = py(sb, f"import sys\nwhile True: sys.{stream}.write('A' * 65536)",
           limits=sb.limits.replace(max_output_bytes=100_000))
    assert r.output_truncated
    assert len(getattr(r, stream)) == 100_000
    assert not r.timed_out and r.wall_time_s < 2


def test_orphans_and_daemons_are_killed(sb, host):
    t0 = time.monotonic()
    r = sb.run_code("bash", f"""
(setsid sleep 1000 {host.marker} &) ; (nohup sleep 1001 {host.marker} >/dev/null 2>&1 &)
python3 -c 'import os,time
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
time.sleep(1000)  # {host.marker}' &
echo started
""", limits=sb.limits.replace(wall_time_s=3))
    assert r.stdout == "started\n"
    assert not r.timed_out and time.monotonic() - t0 < 2.5  # never waits for daemons
    # `host` asserts no process carrying the marker survives.


def test_cannot_signal_or_see_host_processes(sb, host):
    victim = subprocess.Popen(["sleep", "60"])
    try:
        r = py(sb, f"""
import os, signal
try:
    os.kill({victim.pid}, signal.SIGKILL); print("KILLED")
except OSError as e:
    print("denied", e.errno)
try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass
print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
""")
        assert "KILLED" not in r.stdout
        pids = eval(r.stdout.split("pids", 1)[1])  # noqa: S307 - our own repr
        assert victim.pid not in pids or len(pids) <= 3
        assert max(pids) < 10, pids  # a PID namespace of its own: small pids only
        assert victim.poll() is None, "host process was killed from the jail"
    finally:
        victim.kill()
        victim.wait()


def test_dangerous_syscalls_are_killed_by_seccomp(sb, host):
    for call in ["ptrace(0, 0, 0, 0)", "unshare(0x10000000)", "mount(b'none', b'/work', b'tmpfs', 0, 0)",
                 "syscall(321, 0, 0, 0)"]:  # 321 = bpf
        r = py(sb, f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.{call}\nprint('SURVIVED')")
        assert "SURVIVED" not in r.stdout, call
        assert r.signal == signal.SIGSYS, (call, r)


def test_uid_is_unprivileged_inside_and_outside(sb, host):
    r = py(sb, "import os; print(os.getuid(), os.getgid()); print(open('/proc/self/uid_map').read())")
    first, mapping = r.stdout.split("\n", 1)
    assert first == "65534 65534"
    inside, outside, count = mapping.split()
    assert inside == "65534" and count == "1"
    assert int(outside) != 0


def test_symlink_escape_is_not_followed_on_host(sb, host):
    r = py(sb, "import os\nos.symlink('/etc/hostname', 'out.txt')\nos.symlink('/etc', 'd')",
           output_files=["out.txt", "d/hostname"])
    assert r.exit_code == 0, r.stderr
    assert r.files == {}
    with sb.session() as s:
        s.run_code("bash", "ln -s /etc/shadow leak; ln -s / root")
        snap = s.snapshot()
        assert snap["leak"].kind == "symlink" and snap["leak"].content is None
        assert snap["leak"].target == "/etc/shadow"
        assert s.read_file("leak") is None
        with pytest.raises(ValueError):
            s.write_files({"root/etc/pwned": "x"})  # writes never traverse a symlink
    assert not os.path.exists("/etc/pwned")


def test_huge_stdin(sb, host):
    data = b"y" * (50 << 20)
    r = py(sb, "import sys; print(len(sys.stdin.buffer.read()))", stdin=data)
    assert r.stdout.strip() == str(len(data))
    r = py(sb, "print('ignored stdin')", stdin=data)  # never reads it: must not hang
    assert r.stdout == "ignored stdin\n" and not r.timed_out


def test_concurrent_runs_do_not_mix(sb, host):
    async def one(i: int):
        return await sb.arun_code(
            "python", f"import os,time\nopen('mine','w').write('{i}')\ntime.sleep(0.05)\n"
            f"print({i}, sorted(os.listdir('.')), open('mine').read(), open('in.txt').read())",
            files={"in.txt": str(i)}, output_files=["mine"])

    async def main():
        return await asyncio.gather(*(one(i) for i in range(12)))

    for i, r in enumerate(asyncio.run(main())):
        assert r.stdout == f"{i} ['in.txt', 'mine'] {i} {i}\n", r.stdout
        assert r.files == {"mine": str(i).encode()}


def test_no_state_between_runs(sb, host):
    r1 = sb.run_code("bash", "echo x > /work/left; echo y > /tmp/left2; ls /work /tmp")
    assert "left" in r1.stdout
    r2 = sb.run_code("bash", "ls -A /work /tmp; test -e /work/left || test -e /tmp/left2 || echo clean")
    assert "left" not in r2.stdout and "clean" in r2.stdout


def test_no_python_state_between_runs_and_no_mixing(sb, host):
    code = ("import os, sys\nprint(sorted(os.listdir('/tmp')), sys.stdin.read())\n"
            "open('/tmp/left', 'w').write('x')")

    async def main():
        return await asyncio.gather(*(sb.arun_code("python", code, stdin=str(i))
                                      for i in range(16)))

    for i, r in enumerate(asyncio.run(main())):
        assert r.stdout == f"[] {i}\n", (r.stdout, r.stderr)


XATTR_FLOOD = """
import errno, os
stored = 0
try:
    for i in range(100):
        open('x%d' % i, 'w').close()
        for j in range(64):
            os.setxattr('x%d' % i, 'user.a%d' % j, b'A' * 65536)
            stored += 65536
except OSError as e:
    print(errno.errorcode[e.errno], stored >> 20)
"""


def test_extended_attributes_are_bounded_by_the_work_dir_size():
    """tmpfs charges xattrs to an inode space of half the host's RAM unless
    nr_inodes is set: one Shell-v0 turn stored 4 GB in a 16 MiB session dir, and
    each command's charge outlived it."""
    sb = Sandbox(limits=Limits(tmpfs_mb=16, memory_mb=512))
    r = sb.run_code("python", XATTR_FLOOD)
    code, mib = r.stdout.split()
    assert code == "ENOSPC" and int(mib) <= 16, r.stdout + r.stderr
    with sb.session() as s:
        total = 0
        for _ in range(3):
            code, mib = s.run_code("python", XATTR_FLOOD).stdout.split()
            assert code == "ENOSPC"
            total += int(mib)
        assert total <= 16
        # files still work, up to an inode per KiB of the size
        r = s.run_code("bash", "rm -f x*; for i in $(seq 2000); do : > f$i; done; ls | wc -l")
        assert r.stdout.strip() == "2000", r.stderr
