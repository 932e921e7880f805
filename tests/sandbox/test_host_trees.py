"""Attacks on the host's handling of the trees jails write (issue 20, class 1).

A jailed program leaves a tree built to break the host-side code that walks,
snapshots or removes it: thousands of levels deep, very many entries, huge files,
symlink loops, fifos and sockets, directories made unreadable, names of odd bytes
and paths longer than PATH_MAX. Every run is real nsjail; each test asserts the call
returns a normal result, the walk stays bounded, and nothing is left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator

import pytest
from gym_llm_sandbox import Limits, Sandbox, snapshot_dir
from gym_llm_sandbox._files import MAX_WALK_DEPTH, remove_tree, tree_usage

import gym_llm

DEPTH = 1600  # past Python's recursion limit (1000): the depth that broke os.walk/rmtree

DEEP_PY = f"""
import os
os.chdir('/work')
for _ in range({DEPTH}):
    os.mkdir('d'); os.chdir('d')
open('leaf', 'w').write('x')
print('built')
"""
# One mkdir: a fork per level is too slow for a test's wall time.
DEEP_BASH = f"cd /work && mkdir -p $(printf 'd/%.0s' $(seq {DEPTH})) && echo built"

NASTY_PY = r"""
import os, socket, stat
os.chdir('/work')
os.symlink('loop', 'loop')
os.symlink('/etc/shadow', 'shadow')
os.mkdir('ring'); os.symlink('..', 'ring/up')
os.mkfifo('fifo')
s = socket.socket(socket.AF_UNIX); s.bind('/work/sock')
try:
    os.mknod('dev', stat.S_IFCHR | 0o600, os.makedev(1, 3)); print('mknod ok')
except OSError:
    print('mknod refused')
os.mkdir('locked'); open('locked/f', 'w').write('x'); os.mkdir('locked/sub'); os.chmod('locked', 0)
os.mkdir('ro'); open('ro/f', 'w').write('x'); os.chmod('ro', 0o500)
os.mkdir(b'\xff\xfe bad\nname'); open(b'\xff\xfe bad\nname/\x01', 'w').write('y')
long = 'L' * 255
for _ in range(20):   # 20 * 256 bytes: a path longer than PATH_MAX (4096)
    os.mkdir(long); os.chdir(long)
open('deepfile', 'w').write('z')
print('built')
"""


@pytest.fixture(scope="module")
def stage_root() -> Iterator[str]:
    """A private staging root for this module, so leaks are ours to see (other
    processes of this uid share the default one)."""
    root = tempfile.mkdtemp(prefix="gymllm-trees-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    mp = pytest.MonkeyPatch()
    mp.setenv("GYM_LLM_SANDBOX_DIR", root)
    yield root
    mp.undo()
    remove_tree(root)


@pytest.fixture
def no_leak(stage_root: str, host) -> Iterator[str]:
    """Asserts that no staging or session dir is left after the test (spares released)."""
    yield stage_root
    from gym_llm_sandbox.core import release_spares

    release_spares()
    left = [n for n in os.listdir(stage_root) if n.startswith(("run-", "session-"))]
    assert not left, f"staging dirs leaked: {left}"


@pytest.fixture(scope="module")
def tsb(stage_root: str) -> Sandbox:
    return Sandbox(limits=Limits(wall_time_s=20, cpu_time_s=20, memory_mb=256, tmpfs_mb=64,
                                 max_file_mb=8))


@pytest.mark.parametrize("lang,code", [("python", DEEP_PY), ("bash", DEEP_BASH)])
def test_deep_tree_in_a_per_run_host_work_dir(tsb, no_leak, lang, code):
    # output_files makes /work a host dir: the host must remove the tree afterwards.
    r = tsb.run_code(lang, code, output_files=["leaf"], files={"in.txt": "x"})
    assert r.exit_code == 0 and "built" in r.stdout, r.stderr[-500:]


def test_deep_tree_in_a_session_is_snapshotted_counted_and_removed(tsb, no_leak):
    with tsb.session() as s:
        r = s.run_code("python", DEEP_PY)
        assert r.exit_code == 0, r.stderr[-500:]
        snap = s.snapshot()
        assert not snap.complete
        assert max(p.count("/") for p in snap) == MAX_WALK_DEPTH - 1
        use = s.usage()
        assert not use.complete and use.entries == MAX_WALK_DEPTH
        # A later run in the same session still works and sees its tree.
        r = s.run_code("bash", "ls -d d/d && echo ok")
        assert r.stdout.strip().endswith("ok")
        path = s.path
    assert not os.path.exists(path)


def test_very_many_entries_are_bounded(tsb, no_leak):
    with tsb.session() as s:
        r = s.run_code("python", "import os\nfor i in range(30000): open(f'/work/f{i}', 'w').close()\n"
                       "print('built')", limits=tsb.limits.replace(tmpfs_mb=256, memory_mb=512))
        assert "built" in r.stdout, r.stderr[-500:]
        snap = s.snapshot()
        assert len(snap) == 10_000 and not snap.complete
        use = s.usage(max_entries=5_000)
        assert use.entries == 5_000 and not use.complete
        assert s.usage().entries == 30_000 and s.usage().complete


def test_huge_files_are_read_within_a_total_budget(tsb, no_leak):
    with tsb.session() as s:
        r = s.run_code("python", "for i in range(40): open(f'/work/f{i}', 'wb').write(b'a' * (1 << 20))\n"
                       "open('/work/big', 'wb').write(b'b' * (7 << 20))")
        assert r.exit_code == 0, r.stderr[-500:]
        snap = s.snapshot()
        read = sum(len(f.content or b"") for f in snap.values())
        assert read <= 16 << 20 and not snap.complete
        assert snap["big"].content is None and snap["big"].size == 7 << 20
        small = snapshot_dir(s.path, max_total_bytes=3 << 20)
        assert sum(len(f.content or b"") for f in small.values()) == 3 << 20


def test_links_fifos_sockets_unreadable_dirs_and_odd_names(tsb, no_leak):
    with tsb.session() as s:
        r = s.run_code("python", NASTY_PY)
        assert "built" in r.stdout and "mknod refused" in r.stdout, r.stdout + r.stderr[-800:]
        snap = s.snapshot()  # must not block on the fifo nor follow any link
        assert snap["loop"].kind == "symlink" and snap["loop"].target == "loop"
        assert snap["shadow"].kind == "symlink" and snap["shadow"].content is None
        assert snap["ring/up"].kind == "symlink"
        assert snap["fifo"].kind == "other" and snap["sock"].kind == "other"
        odd = os.fsdecode(b"\xff\xfe bad\nname")
        assert snap[odd].kind == "dir" and snap[f"{odd}/\x01"].content == b"y"
        json.dumps({k: v.kind for k, v in snap.items()})  # the keys serialize
        long = "/".join(["L" * 255] * 20)
        assert snap[f"{long}/deepfile"].content == b"z"
        assert s.usage().complete
        path = s.path
    assert not os.path.exists(path)


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "per-run"])
def test_an_output_file_that_is_a_directory_is_left_out(tsb, no_leak, resident):
    """os.fdopen refused the directory with IsADirectoryError out of run_code (a
    dropped run, not a score) and left its fd open, on the per-run path and in
    sessions (the resident path already read it as no file)."""
    sb = Sandbox(limits=tsb.limits, resident=resident)

    def attempts():
        for _ in range(3):
            r = sb.run_code("bash", "mkdir out.txt && echo done", output_files=["out.txt"], files={"in": "x"})
            assert r.exit_code == 0 and r.stdout == "done\n" and r.files == {}, r
        with sb.session() as s:
            r = s.run_code("bash", "mkdir -p out.txt/x && echo done", output_files=["out.txt"])
            assert r.stdout == "done\n" and r.files == {}, r
            for _ in range(3):
                assert s.read_file("out.txt") is None and s.read_file("out.txt/x") is None

    attempts()  # daemons and their spare connections are up from here on
    before = _fds()
    attempts()
    assert _fds() <= before + 1  # a spare being topped up; each failed read leaked one


def test_a_per_run_host_work_dir_is_removed_off_the_event_loop(tsb, no_leak, monkeypatch):
    """A jail can leave 1.5 M hard links in 8 s (no tmpfs blocks: only kernel memory
    bounds them); unlinking them took 6 s of host CPU, which stalled every other run
    of the process while it ran on the shared event loop."""
    import threading

    from gym_llm_sandbox._jail import Jail

    where, remove = [], Jail.remove_stage

    def recording(self):
        where.append(threading.current_thread())
        remove(self)

    monkeypatch.setattr(Jail, "remove_stage", recording)
    sb = Sandbox(limits=tsb.limits, resident=False)
    r = sb.run_code("bash", "for i in $(seq 300); do ln in.txt l$i; done; echo done", files={"in.txt": "x"})
    assert r.stdout == "done\n", r
    assert where and all(t.name != "gym_llm-loop" for t in where), where  # the loop run_code drives


def test_remove_tree_as_a_plain_function():
    """The host helper itself, on a tree we build: deep (no recursion), long paths,
    unreadable dirs; it never raises and reports what it did."""
    # Not pytest's tmp_path: a tree left by a failing run would break pytest's own
    # (recursive) cleanup of it in every later session; GNU rm removes it if we fail.
    base = tempfile.mkdtemp(prefix="gymllm-rmtree-")
    try:
        root = os.path.join(base, "t")
        os.mkdir(root)
        cur = os.open(root, os.O_RDONLY)
        for i in range(3000):
            os.mkdir("x" * 200, dir_fd=cur)
            nxt = os.open("x" * 200, os.O_RDONLY, dir_fd=cur)
            if i % 500 == 0:
                os.mkfifo("fifo", dir_fd=cur)
                os.chmod(cur, 0)
            os.close(cur)
            cur = nxt
        os.close(cur)
        assert not tree_usage(root).complete
        assert remove_tree(root) and not os.path.exists(root)
        assert remove_tree(root)  # already gone: fine
        f = os.path.join(base, "file")
        open(f, "w").close()
        assert remove_tree(f) and not os.path.exists(f)
    finally:
        subprocess.run(["rm", "-rf", base], check=False)


def test_shell_env_scores_a_deep_tree_instead_of_a_reward_error(stage_root, host):
    env = gym_llm.make("tool/Shell-v0", difficulty=0.0, max_turns=3)
    env.reset(options={"task_index": 0})
    path = env.unwrapped.shell.session.path
    cmd = DEEP_BASH
    call = f'<tool_call>{json.dumps({"name": "bash", "arguments": {"command": cmd}})}</tool_call>'
    obs, *_ = env.step(call)
    assert "built" in obs[0]["content"] and "quota" in obs[0]["content"]
    _, r, term, _, info = env.step("Done.")
    assert term and r == 0.0 and "reward_error" not in info and info["reason"]
    assert not os.path.exists(path)
    env.close()


def test_shell_env_scores_odd_names_and_links(stage_root, host):
    env = gym_llm.make("tool/Shell-v0", difficulty=0.0, max_turns=3)
    env.reset(options={"task_index": 0})
    cmd = "mkdir $'\\xff\\x01'; ln -s / root; ln -s loop loop; mkfifo p; chmod 000 $'\\xff\\x01'"
    call = f'<tool_call>{json.dumps({"name": "bash", "arguments": {"command": cmd}})}</tool_call>'
    env.step(call)
    _, r, term, _, info = env.step("Done.")
    assert term and r == 0.0 and "reward_error" not in info
    json.dumps(info)
    env.close()
