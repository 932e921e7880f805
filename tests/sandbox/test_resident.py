"""The resident path (``nsjail -Ml`` + our init) and session work-dir caps."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gym_llm_sandbox import Limits, Sandbox, SandboxError, _resident


def _daemons() -> list[_resident.Daemon]:
    return [d for d in _resident.DAEMONS.all() if d.alive()]


def test_python_runs_use_one_resident_daemon_group_and_fresh_jails(sb, host):
    rs = [sb.run_code("python", "import os; print(os.getpid(), os.listdir('/tmp'))\n"
                      "open('/tmp/x', 'w').write('x')") for _ in range(5)]
    # PID 2: our init is PID 1 of each fresh PID namespace; /tmp is a fresh tmpfs.
    assert [r.stdout for r in rs] == ["2 []\n"] * 5, rs[0].stderr
    # one configuration: its daemons, one per slot (at most 4), each run on the next
    ds = _daemons()
    assert len({d.key for d in ds}) == 1
    assert len(ds) == _resident.daemon_count(sb.pool.max_concurrency)


def test_program_cannot_reach_the_init_or_the_socket(sb, host):
    r = sb.run_code("python", """
import os
print(sorted(os.listdir('/proc/self/fd')), [os.readlink(f'/proc/self/fd/{i}')[:5] for i in (0, 1, 2)])
for p in ('/proc/1/fd', '/proc/1/mem', '/proc/1/environ', '/proc/1/fd/0'):
    try:
        open(p, 'rb').read(1) if not p.endswith('fd') else os.listdir(p)
        print('REACHED', p)
    except OSError as e:
        print('denied', e.errno)
""")
    lines = r.stdout.splitlines()
    assert lines[0] == "['0', '1', '2', '3'] ['pipe:', 'pipe:', 'pipe:']", r.stdout + r.stderr
    assert "REACHED" not in r.stdout and r.stdout.count("denied") == 4


def test_large_output_of_a_quick_program_arrives_whole(sb, host):
    # nsjail relays the init's output 4 KiB per poll round and dropped what was still
    # buffered when the init exited: such runs came back killed (-9) a few % of times.
    for size in (30_000, 150_000):
        rs = [sb.run_code("python", f"print('x' * {size})") for _ in range(25)]
        assert [(r.exit_code, len(r.stdout)) for r in rs] == [(0, size + 1)] * 25


def test_dead_daemons_are_restarted(sb, host):
    n = _resident.daemon_count(sb.pool.max_concurrency)
    assert [sb.run_code("python", "print(1)").stdout for _ in range(n)] == ["1\n"] * n
    dead = _daemons()
    assert len(dead) == n
    for d in dead:
        os.kill(d.proc.pid, signal.SIGKILL)
        d.proc.wait()
    time.sleep(0.2)  # their jails die with them (PDEATHSIG); nothing is left to reap
    rs = [sb.run_code("python", "print(2)") for _ in range(n)]
    assert [r.stdout for r in rs] == ["2\n"] * n, rs[0].stderr
    assert len(_daemons()) == n
    assert not {x.proc.pid for x in _daemons()} & {d.proc.pid for d in dead}


def test_daemon_logs_are_memfds_that_no_killed_host_leaves_behind(sb, host, tmp_path):
    sb.run_code("python", "pass")
    for d in _daemons():
        assert os.readlink(f"/proc/{d.proc.pid}/fd/{d.log_fd}").startswith(
            "/memfd:gym_llm-nsjaild-")
    # A host killed outright runs no clean-up: its daemons (PDEATHSIG) must leave no file.
    script = tmp_path / "host.py"
    script.write_text(
        "import os, signal\n"
        "from gym_llm_sandbox import Sandbox\n"
        "from gym_llm_sandbox._files import base_dir\n"
        "assert Sandbox().run_code('python', 'print(1)').stdout == '1\\n'\n"
        "print(base_dir(), os.getpid(), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stderr
    base, pid = r.stdout.split()
    time.sleep(0.5)  # the daemons get SIGTERM when their parent dies
    left = [n for n in os.listdir(base) if pid in n]
    assert not left, left


def test_one_daemon_and_its_fresh_spare_jails_per_slot(sb_limits, host):
    import asyncio

    from gym_llm_sandbox.aio import background_loop

    assert [_resident.spare_count(c) for c in (1, 2, 3, 64)] == [1, 2, 3, _resident.MAX_SPARES]
    assert [_resident.daemon_count(c) for c in (1, 2, 64)] == [
        1, 2, _resident.MAX_DAEMONS_PER_CONFIGURATION]
    assert _resident.max_conns(2) == 2 * 2 + 2 + 1
    sb = Sandbox(limits=sb_limits, max_concurrency=2)
    code = "import os\nprint(os.getpid(), os.listdir('/tmp'))\nopen('/tmp/x', 'w').write('x')"
    # runs take the group's daemons in turn: two runs start both
    assert [sb.run_code("python", code).stdout for _ in range(2)] == ["2 []\n"] * 2
    cap = str(_resident.max_conns(2))
    group = [d for d in _daemons() if d.key[d.key.index("--max_conns") + 1] == cap
             and sb_limits.memory_mb << 20 == int(d.key[d.key.index("--cgroup_mem_max") + 1])]
    assert len(group) == 2 and len({d.key for d in group}) == 1

    def full_spares() -> list[socket.socket]:
        """Every spare of the group, once each daemon holds two (and no more)."""
        deadline = time.monotonic() + 10
        while any(len(d.spares) < 2 for d in group) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [len(d.spares) for d in group] == [2, 2]
        socks = []
        for d in group:
            with d.lock:
                socks += [s for s, _ in d.spares]
        return socks

    async def two() -> list[str]:
        return [r.stdout for r in await asyncio.gather(*(sb.arun_code("python", code)
                                                         for _ in range(2)))]

    # Two runs use two spares (fresh jails: PID 2, empty /tmp), each once; both refill.
    before = full_spares()
    assert background_loop().run(two()) == ["2 []\n"] * 2
    assert sum(s.fileno() == -1 for s in before) == 2
    # A spare idle past MAX_IDLE_S is closed, not used (its jail's time limit runs): the
    # daemon that serves the next run closes both of its own.
    stale = full_spares()
    for d in group:
        with d.lock:
            d.spares = type(d.spares)((s, born - _resident.MAX_IDLE_S - 1) for s, born in d.spares)
    assert sb.run_code("python", code).stdout == "2 []\n"
    assert sum(s.fileno() == -1 for s in stale) == 2


def test_daemon_connections_send_small_frames_at_once(sb_limits, host):
    # TCP_NODELAY on every daemon socket (the listener and the jails' connections, which
    # inherit it): with Nagle's algorithm the exit frame after a program's output waited
    # for the host's delayed ACK (+11 ms median, +45 ms p90 per printing run).
    sb = Sandbox(limits=sb_limits, max_concurrency=1)
    assert sb.run_code("python", "print(1)").stdout == "1\n"
    (daemon,) = [d for d in _daemons() if d.key[d.key.index("--max_conns") + 1]
                 == str(_resident.max_conns(1)) and d.key[d.key.index("--cgroup_mem_max") + 1]
                 == str(sb_limits.memory_mb << 20)]

    def nodelay_of_sockets() -> list[int]:
        return [s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                for s in _resident.tcp_sockets(daemon.proc.pid)]

    deadline = time.monotonic() + 10  # until nsjail has accepted the spare's connection
    while len(nodelay := nodelay_of_sockets()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(nodelay) >= 2 and all(nodelay), nodelay  # the listener and the spare


def _fake_daemon(reply: bytes) -> tuple[_resident.Daemon, threading.Thread]:
    """A loopback listener speaking bytes of our choosing in place of a jail (in the
    daemons' private network namespace, where the host connects)."""
    srv = _resident.DAEMONS.netns.submit(socket.socket).result()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        conn.sendall(reply)
        time.sleep(0.2)
        conn.close()
        srv.close()

    t = threading.Thread(target=serve)
    t.start()
    # log fd -1: no log to read, as when nsjail left nothing behind
    return (_resident.Daemon(None, srv.getsockname()[1], -1,  # type: ignore[arg-type]
                             _resident.DAEMONS.netns), t)


_HELLO = b"\x00\x00\x00\x00\x00"
# The exit frame: the wait status (u32), then the program's CPU time in ns (u64).
_EXIT0 = b"\x03\x00\x00\x00\x0c" + struct.pack(">IQ", 0, 1_500_000_000)


@pytest.mark.parametrize("reply", [
    _HELLO + b"\x07\x00\x00\x00\x02hi",                # unknown stream
    _HELLO + b"\x03\x00\x00\x00\x09123456789",         # exit frame of the wrong size
    _HELLO + _EXIT0 + b"\x01\x00\x00\x00\x01x",         # data after exit
    _HELLO + b"\x01\x00\x00\x00\x05ab",                # cut short, no exit frame
    _HELLO + b"\x01\x00\x01\x00\x01",                  # a frame longer than the init sends
    _HELLO + b"\x04\x00\x00\x00\x01x" + _EXIT0,         # an output file not asked for
    _HELLO + b"\x04\x00\x00\x00\x01o" * 2 + _EXIT0,     # the same output file twice
    _HELLO + b"\x05\x00\x00\x00\x01x" + _EXIT0,         # file content before any file
    _HELLO + b"\x04\x00\x00\x00\x01o\x05\x00\x00\x00\x03abc" + _EXIT0,  # over its cap
    _HELLO + b"\x04\x00\x00\x00\x01o\x01\x00\x00\x00\x01x" + _EXIT0,   # stdout after files
    _HELLO + b"\x03\x00\x00\x00\x04\x00\x00\x00\x00",  # an exit frame without the CPU time
])
def test_malformed_frames_are_a_failed_run(reply):
    import asyncio

    d, t = _fake_daemon(reply)
    out = asyncio.run(_resident.run(d, b"", wall_time_s=5, max_output_bytes=100,
                                    output_files=["o"], max_file_bytes=2))
    t.join()
    d.stop_spare()
    assert out.status is None and not out.timed_out and out.files == {}


def test_well_formed_output_file_frames_are_read():
    import asyncio

    d, t = _fake_daemon(_HELLO + b"\x04\x00\x00\x00\x01o\x05\x00\x00\x00\x02ab" + _EXIT0)
    out = asyncio.run(_resident.run(d, b"", wall_time_s=5, max_output_bytes=100,
                                    output_files=["o"], max_file_bytes=2))
    t.join()
    d.stop_spare()
    assert (out.status, out.files, out.cpu_time_s) == (0, {"o": b"ab"}, 1.5)


def _request_mode_daemons() -> list[_resident.Daemon]:
    """Daemons whose jails run no program of their own: the argv comes in the request."""
    return [d for d in _daemons() if list(d.proc.args[-2:]) == ["--", _resident.INIT_PATH]]


@pytest.mark.parametrize(("run", "want"), [
    (lambda sb: sb.run_code("bash", "echo $$; ls -A /tmp /work; echo x > /tmp/left"),
     "2\n/tmp:\n\n/work:\n"),
    (lambda sb: sb.run(["sh", "-c", "echo $$; ls -A /tmp"], stdin="x"), "2\n"),
])
def test_argv_runs_use_fresh_resident_jails(sb, host, run, want):
    n = max(3, _resident.daemon_count(sb.pool.max_concurrency))  # starts the whole group
    rs = [run(sb) for _ in range(n)]
    assert [r.stdout for r in rs] == [want] * n, rs[0].stderr
    ds = _request_mode_daemons()  # one configuration's group, whatever the argv
    assert len({d.key for d in ds}) == 1
    assert len(ds) == _resident.daemon_count(sb.pool.max_concurrency)


def test_javascript_runs_in_resident_jails(sb, host):
    # PID 2: our init is PID 1 (the per-run path runs node as PID 1)
    rs = [sb.run_code("javascript", "console.log(process.pid, require('fs').readdirSync('/tmp'));"
                      "require('fs').writeFileSync('/tmp/x', 'x')") for _ in range(3)]
    assert [r.stdout for r in rs] == ["2 []\n"] * 3, rs[0].stderr


COMPILED = {
    "c": ('#include <math.h>\n#include <stdio.h>\n#include <unistd.h>\n'
          'int main(int c, char **v) { char b[16] = {0}; FILE *f = fopen("in.txt", "r");'
          ' fgets(b, 16, f); FILE *o = fopen("out.txt", "w"); fprintf(o, "%s!", b); fclose(o);'
          ' printf("%d %s %.3f\\n", getpid(), v[1], sqrt(2.0 * (c - 1))); return 0; }'),
    "cpp": ('#include <cmath>\n#include <fstream>\n#include <iostream>\n#include <string>\n'
            '#include <unistd.h>\nint main(int c, char **v) { std::string b;'
            ' std::ifstream("in.txt") >> b; std::ofstream("out.txt") << b << "!";'
            ' std::cout << getpid() << " " << v[1] << " " << std::sqrt(2.0 * (c - 1)) << std::endl; }'),
}


@pytest.mark.parametrize("lang", sorted(COMPILED))
def test_compiled_code_runs_in_resident_jails(sb, host, lang):
    # The binary comes back from a resident compile jail and goes into a resident run
    # jail as an input file: PID 2 under our init; the per-run path (under the same
    # init) gives the same result.
    want = "1.414" if lang == "c" else "1.41421"
    for runner in (sb, Sandbox(limits=sb.limits, resident=False)):
        r = runner.run_code(lang, COMPILED[lang], args=["a1"], files={"in.txt": "hi"},
                            output_files=["out.txt"])
        assert (r.ok, r.stdout) == (True, f"2 a1 {want}\n"), r.stderr
        assert r.files == {"out.txt": b"hi!"}
        assert r.compile_result is not None and r.compile_result.ok
        assert r.compile_result.files == {}  # the binary is not handed to the caller


def test_compiled_programs_get_the_library_dirs_of_their_compiler(tmp_path):
    from gym_llm_sandbox.languages import library_dirs, resolve, runtime_library_dirs

    libc = os.path.dirname(os.path.realpath(next(
        p for p in Path("/proc/self/maps").read_text().split() if "/libc.so" in p)))
    for lang in ("c", "cpp"):
        dirs = runtime_library_dirs(lang, resolve(lang))
        assert libc in dirs and all(os.path.isdir(d) for d in dirs), dirs
        assert set(library_dirs("/bin/true")) <= set(dirs)
    # a compiler that cannot build the probe: the usual dirs, and its jailed compile of
    # the program says what is wrong as a result
    assert set(runtime_library_dirs("c", "/bin/false")) >= set(library_dirs("/bin/true"))


def test_files_in_and_out_travel_over_the_connection(sb, host):
    r = sb.run(["bash", "-c", "echo $$; cat a/b.txt > out.txt; ln -s /usr/lib/os-release link; "
                "mkfifo fifo; mkdir -p d/e; printf 123 > d/e/f; ln -s d dlink; "
                "head -c 9000 /dev/zero > big; stat -c %a a/b.txt a"],
               files={"a/b.txt": "hello", "bin": b"\x00\xff"},
               output_files=["out.txt", "link", "fifo", "d/e/f", "dlink/e/f", "missing",
                             "a/b.txt", "bin", "big"])
    assert r.stdout == "2\n644\n755\n", r.stderr  # a resident jail (PID 2); modes as per-run
    # Regular files only, never through a symlink (file or directory), nothing for a fifo.
    assert r.files == {"out.txt": b"hello", "d/e/f": b"123", "a/b.txt": b"hello",
                       "bin": b"\x00\xff", "big": bytes(9000)}
    assert _request_mode_daemons()


#: Prints the root of /work's mount: "/" for a jail's own tmpfs (a resident jail), the
#: host work dir's path for the per-run path's bind mount (files in or out).
_PRINT_WORK_ROOT = "print(*[ln.split()[3] for ln in open('/proc/self/mountinfo') if ln.split()[4] == '/work'])"


def test_output_files_up_to_the_cap_and_input_files_too_big_for_the_init_still_run(host):
    sb = Sandbox(limits=Limits(max_file_mb=1, tmpfs_mb=8, wall_time_s=10))
    # RLIMIT_FSIZE stops the program at max_file_mb; a file of exactly that comes back.
    r = sb.run_code("python", "open('o', 'wb').write(b'x' * (1 << 20))\n" + _PRINT_WORK_ROOT,
                    output_files=["o"])
    assert r.stdout == "/\n" and r.files["o"] == b"x" * (1 << 20), r.stderr
    # RLIMIT_FSIZE binds the init too: a bigger input file takes the per-run path.
    r = sb.run_code("python", "import os; print(os.path.getsize('i'))\n" + _PRINT_WORK_ROOT,
                    files={"i": b"y" * (2 << 20)})
    assert r.stdout.startswith(f"{2 << 20}\n/gym_llm_sandbox-"), r.stderr


def test_conflicting_file_names_raise_as_on_the_per_run_path(sb, host):
    with pytest.raises(ValueError, match="not a directory"):
        sb.run_code("python", "pass", files={"a": "x", "a/b": "y"})


def test_no_hello_is_a_sandbox_error():
    import asyncio

    d, t = _fake_daemon(b"")
    with pytest.raises(SandboxError, match="could not run"):
        asyncio.run(_resident.run(d, b"", wall_time_s=5, max_output_bytes=100))
    t.join()
    d.stop_spare()


def test_session_dir_is_capped_across_commands(host):
    sb = Sandbox(limits=Limits(tmpfs_mb=16, memory_mb=256, wall_time_s=10))
    fill = """
n = 0
try:
    for n in range(15):
        with open(f"{PREFIX}{n}", "wb") as f:
            f.write(b"x" * (1 << 20))
    print("wrote 15")
except OSError as e:
    print("stopped", e.errno)
"""
    with sb.session() as s:
        first = s.run_code("python", fill.replace("{PREFIX}", "a"))
        second = s.run_code("python", fill.replace("{PREFIX}", "b"))
        used = sum(f.stat().st_size for f in Path(s.path).iterdir())
        assert first.stdout == "wrote 15\n", first.stderr
        # 30 MiB asked for in two commands; the dir keeps at most its 16 MiB cap.
        assert used <= 16 << 20, used
        assert second.stdout == "stopped 28\n" or not second.ok, second
        assert not s.run_code("bash", "head -c 2M /dev/zero > more").ok
        path = s.path
    assert not os.path.exists(path)
    assert path not in Path("/proc/mounts").read_text()


def test_frame_header_layout_matches_init_source():
    # The host parser and the C init agree on [stream u8][length u32 BE].
    src = Path(_resident.__file__).with_name("_init.c").read_text()
    assert "hdr[0] = (char)stream;\n    put32(hdr + 1, n);" in src
    assert struct.calcsize(">BI") == 5


_TWO_SPINNING_THREADS = r"""
#include <pthread.h>
static void *spin(void *arg) { for (volatile unsigned long i = 0;; i++) {} return arg; }
int main(void) { pthread_t t; pthread_create(&t, 0, spin, 0); spin(0); }
"""


def test_sigkill_is_timed_out_exactly_when_the_cpu_limit_was_reached(sb, host):
    # The kernel's RLIMIT_CPU kill and an OOM kill are both SIGKILL. The verdict used
    # to follow the elapsed time, so a run that spent its CPU faster than the wall
    # clock (threads in parallel; an interpreter started before the clock; the
    # kernel's tick-sampled count ahead of real time on a busy machine) was reported
    # as out of memory, and one killed otherwise after cpu_time_s as timed out.
    lim = sb.limits.replace(cpu_time_s=1, wall_time_s=20)
    spin = sb.run_code("c", _TWO_SPINNING_THREADS, limits=lim)
    assert spin.signal == signal.SIGKILL and spin.timed_out and not spin.memory_exceeded, spin
    # Killed after more than cpu_time_s of wall time, with almost no CPU used: by
    # itself, then by the memory cgroup.
    slept = "import os, time\ntime.sleep(1.5)\n"
    shot = sb.run_code("python", slept + "os.kill(os.getpid(), 9)", limits=lim)
    assert shot.signal == signal.SIGKILL and shot.wall_time_s > 1.5 and not shot.timed_out
    oom = sb.run_code("python", slept + "import mmap\nn = 150 << 20\nm = mmap.mmap(-1, n)\n"
                      "for i in range(0, n, 4096): m[i] = 1", limits=lim.replace(memory_mb=128))
    assert oom.signal == signal.SIGKILL and oom.memory_exceeded and not oom.timed_out, oom


def test_stopping_all_daemons_includes_those_being_started(sb_limits, host):
    # stop_all (release_spares) used to stop only the daemons registered at that
    # instant; one it met while being started was registered afterwards into a group
    # stop_all had already dropped, and no later stop_all found it (seen in a full
    # serial run: a run cancelled during its daemon's start, then release_spares).
    from gym_llm_sandbox.core import release_spares

    from tests.sandbox.conftest import descendants

    def one_run(sb: Sandbox) -> None:
        # Its daemons are stopped under it, at most twice per run: then it raises.
        with contextlib.suppress(SandboxError):
            sb.run_code("python", "print(1)")

    for i in range(5):  # each with a configuration of its own: a daemon to start
        sb = Sandbox(limits=sb_limits.replace(wall_time_s=6 + i / 10))
        run = threading.Thread(target=one_run, args=(sb,))
        run.start()
        while run.is_alive():
            release_spares()
        run.join()
    release_spares()
    assert not [p for p in descendants(os.getpid()) if "nsjail" in _cmdline(p)]
    assert not _daemons()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:  # gone meanwhile
        return ""
