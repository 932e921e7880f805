"""Functional tests: languages, exit codes, limits, API shapes, pool, sessions, config."""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
import threading
import time
import warnings

import pytest
from gym_llm_sandbox import (
    LANGUAGES,
    ExecResult,
    Limits,
    Sandbox,
    SandboxError,
    SandboxPolicy,
    available_languages,
    core,
    diagnose,
)
from gym_llm_sandbox import _nsjail as nsj

HELLO = {
    "python": ("import sys\nprint('out', input())\nprint('err', file=sys.stderr)\nsys.exit(3)"),
    "bash": "read x; echo out $x; echo err >&2; exit 3",
    "javascript": ("const l = require('fs').readFileSync(0, 'utf8').trim();"
                   "console.log('out', l); console.error('err'); process.exit(3)"),
    "c": ('#include <stdio.h>\nint main(void){char b[64]; scanf("%63s", b);'
          'printf("out %s\\n", b); fprintf(stderr, "err\\n"); return 3;}'),
    "cpp": ('#include <iostream>\n#include <string>\nint main(){std::string s; std::cin >> s;'
            'std::cout << "out " << s << "\\n"; std::cerr << "err\\n"; return 3;}'),
}
LOOP = {
    "python": "while True: pass",
    "bash": "while :; do :; done",
    "javascript": "for(;;){}",
    "c": "int main(void){volatile int x = 0; for(;;) x++;}",
    "cpp": "int main(){volatile int x = 0; for(;;) x++;}",
}
MEMORY = {
    "python": "x = bytearray(1 << 30)\nprint('SURVIVED')",
    "javascript": "const a = []; for (;;) a.push(new Array(1e6).fill(1.5));",
    "c": ('#include <stdlib.h>\n#include <string.h>\n#include <stdio.h>\nint main(void){'
          'for(int i=0;i<64;i++){char*p=malloc(32<<20); if(!p) return 12; memset(p,1,32<<20);}'
          'puts("SURVIVED");}'),
    "cpp": ('#include <vector>\n#include <iostream>\nint main(){std::vector<std::vector<char>> v;'
            'for(int i=0;i<64;i++) v.emplace_back(32<<20, 1); std::cout << "SURVIVED";}'),
    "bash": "x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo SURVIVED ${#x}",
}


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_language_stdin_stdout_stderr_exit_code(sb, lang):
    r = sb.run_code(lang, HELLO[lang], stdin="abc\n")
    assert r.stdout == "out abc\n", (r.stdout, r.stderr)
    assert r.stderr.strip() == "err"
    assert r.exit_code == 3 and not r.ok and r.isolation == "nsjail"
    assert isinstance(r, ExecResult)


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_language_wall_time_limit(sb, lang):
    r = sb.run_code(lang, LOOP[lang], limits=sb.limits.replace(wall_time_s=0.5))
    assert r.timed_out and r.stage == "run"
    assert r.wall_time_s < 1.2


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_language_memory_limit(sb, lang):
    r = sb.run_code(lang, MEMORY[lang], limits=sb.limits.replace(memory_mb=128, wall_time_s=8))
    assert "SURVIVED" not in r.stdout, (r.stdout, r.stderr[-300:])
    assert r.exit_code != 0
    if lang != "bash":  # bash reports an allocation failure in many ways
        assert r.memory_exceeded or r.exit_code == 12, r


def test_compile_error_is_a_result_not_an_exception(sb):
    r = sb.run_code("c", "int main(void) { return undefined_symbol; }")
    assert r.stage == "compile" and r.exit_code != 0
    assert "undefined_symbol" in r.stderr
    r = sb.run_code("cpp", "int main(){}")
    assert r.stage == "run" and r.ok and r.compile_result is not None and r.compile_result.ok


def test_c_program_segfault_reports_signal(sb):
    r = sb.run_code("c", "int main(void){ volatile int *p = 0; return *p; }")
    assert r.signal == 11 and r.exit_code == -11 and not r.memory_exceeded


def test_program_args_and_big_source(sb):
    r = sb.run_code("python", "import sys; print(sys.argv[1:])", args=["a", "b c"])
    assert r.stdout == "['a', 'b c']\n"
    big = "x = 1\n" * 100_000 + "print('big', x)"  # > 128 KiB: more than one argv string
    r = sb.run_code("python", big)
    assert r.stdout == "big 1\n", r.stderr


# The jailed Python runs with -S and a bootstrap (gym_llm_sandbox._pyboot) that adds
# exit/quit and reads the program from stdin: it must behave exactly like `python3 -c`.
PLAIN_PYTHON = [
    "exit()", "quit()", "exit(4)", "quit('bye')", "import sys; sys.exit(3)",
    "raise SystemExit(300)", "print(exit, quit, sep='|')",
    "def f():\n    return 1 / 0\nprint('before')\nf()",  # traceback, exit 1
    "x = (",  # syntax error: no traceback header, exit 1
    "import sys\nif __name__ == '__main__':\n    print(sys.argv, sys.path[0] == '')",
    "print(sorted(dir()))",  # the same globals as `python -c`: nothing of the bootstrap
    "print(input()); print(input())",
    "import sys\nsys.excepthook = lambda *a: print('hook', a[0].__name__)\nraise KeyError(1)",
    # syntax errors raised while the program runs keep their traceback; its own do not
    "print('ran')\nraise SyntaxError('made', ('f.py', 2, 3, 'x y', 2, 4))",
    "compile('x = (', 'f', 'exec')",
    "exec('1 / 0')",
    "  indented = 1",
    "def f(:\n    pass",
]


@pytest.mark.parametrize("code", PLAIN_PYTHON)
def test_python_behaves_like_plain_python_c(sb, code):
    import subprocess

    from gym_llm_sandbox._nsjail import python_executable

    bare = subprocess.run([python_executable(), "-c", code, "arg1"], input="l1\nl2\n",
                          capture_output=True, text=True, env={}, timeout=30)
    r = sb.run_code("python", code, args=["arg1"], stdin="l1\nl2\n")
    assert (r.exit_code, r.stdout, r.stderr) == (bare.returncode, bare.stdout, bare.stderr)


@pytest.mark.parametrize("code", PLAIN_PYTHON)
def test_both_bootstrap_forms_behave_like_plain_python_c(code):
    # The bootstrap as the interpreter's own bytecode (the default) and as source (the
    # fallback), run unjailed: each must be `python3 -c` exactly.
    import subprocess

    from gym_llm_sandbox import _pyboot
    from gym_llm_sandbox._nsjail import python_executable

    exe = python_executable()
    bare = subprocess.run([exe, "-c", code, "arg1"], input=b"l1\nl2\n", capture_output=True,
                          env={}, timeout=30)
    forms = [_pyboot.argv(exe), [exe, "-S", "-s", "-B", "-c", _pyboot.BOOTSTRAP]]
    assert "marshal" in forms[0][-1] and forms[0] != forms[1]
    for argv in forms:
        r = subprocess.run(argv, input=_pyboot.frame(code, ["arg1"]) + b"l1\nl2\n",
                           capture_output=True, env={}, timeout=30)
        assert (r.returncode, r.stdout, r.stderr) == (bare.returncode, bare.stdout, bare.stderr)


def test_bootstrap_falls_back_to_source_where_the_interpreter_cannot_compile_it(tmp_path):
    from gym_llm_sandbox import _pyboot

    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 'not hex'\n")
    fake.chmod(0o755)
    for exe in (str(fake), "/bin/false", str(tmp_path / "absent")):
        assert _pyboot.argv(exe)[-1] == _pyboot.BOOTSTRAP


def test_python_exit_paths_give_the_right_status(sb):
    assert sb.run_code("python", "exit()").exit_code == 0
    assert sb.run_code("python", "quit(7)").exit_code == 7
    r = sb.run_code("python", "import sys; sys.exit(3)")
    assert r.exit_code == 3 and r.stderr == ""
    r = sb.run_code("python", "def g():\n    raise ValueError('boom')\ng()")
    assert r.exit_code == 1 and r.stderr.startswith("Traceback (most recent call last):")
    assert 'File "<string>", line 3, in <module>' in r.stderr and "_gym_llm_boot" not in r.stderr
    assert r.stderr.endswith("ValueError: boom\n")
    r = sb.run_code("python", "help(len)")  # site's help() exists too (pydoc, lazily)
    assert r.ok and "len(obj, /)" in r.stdout, r.stderr


def test_run_argv_with_files_in_and_out(sb):
    r = sb.run(["bash", "-c", "cat data.txt sub/more.txt; printf res > out.txt; mkdir -p d;"
                " printf deep > d/x; chmod 600 out.txt"],
               files={"data.txt": "hello ", "sub/more.txt": b"world"},
               output_files=["out.txt", "d/x", "absent"])
    assert r.stdout == "hello world"
    assert r.files == {"out.txt": b"res", "d/x": b"deep"}


def test_output_file_size_is_capped(sb):
    r = sb.run_code("python", "open('o','wb').write(b'z' * (3 << 20))", output_files=["o"],
                    limits=sb.limits.replace(max_file_mb=1))
    assert r.exit_code != 0 or len(r.files.get("o", b"")) <= 1 << 20


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "a/../../x", "", "a\0b"])
def test_bad_file_names_rejected(sb, name):
    with pytest.raises(ValueError):
        sb.run_code("python", "pass", files={name: "x"})


def test_unknown_or_disabled_language(sb):
    with pytest.raises(ValueError, match="unknown language"):
        sb.run_code("cobol", "")
    only_py = Sandbox(languages=["py"])
    assert only_py.run_code("python3", "print(1)").stdout == "1\n"
    with pytest.raises(ValueError, match="not enabled"):
        only_py.run_code("bash", "echo 1")


def test_sync_api_inside_running_event_loop(sb):
    async def main():
        # A sync call from a coroutine must not deadlock or complain.
        return sb.run_code("python", "print('sync-in-loop')")

    assert asyncio.run(main()).stdout == "sync-in-loop\n"


def test_sync_api_from_many_threads(sb):
    out: list[str] = []

    def work(i: int) -> None:
        out.append(sb.run_code("python", f"print({i})").stdout)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == [f"{i}\n" for i in range(6)]


def test_hundreds_of_pending_runs_use_no_thread_each():
    sb = Sandbox(max_concurrency=2)
    peak = {"threads": 0, "running": 0, "max_running": 0}

    async def one(i: int) -> str:
        r = await sb.arun(["/bin/echo", str(i)])
        peak["threads"] = max(peak["threads"], threading.active_count())
        return r.stdout

    async def main():
        tasks = [asyncio.ensure_future(one(i)) for i in range(300)]
        await asyncio.sleep(0.05)
        pending_threads = threading.active_count()
        res = await asyncio.gather(*tasks)
        return res, pending_threads

    base = threading.active_count()
    res, pending_threads = asyncio.run(main())
    assert res == [f"{i}\n" for i in range(300)]
    # 2 running children => at most a couple of waiter threads, not 300.
    assert pending_threads - base <= 4
    assert peak["threads"] - base <= 4


def test_pool_bounds_concurrency():
    sb = Sandbox(max_concurrency=2)

    async def main():
        t0 = asyncio.get_running_loop().time()
        await asyncio.gather(*(sb.arun_code("python", "import time; time.sleep(0.3)")
                               for _ in range(4)))
        return asyncio.get_running_loop().time() - t0

    elapsed = asyncio.run(main())
    assert elapsed >= 0.6  # two waves of two


def test_cancelled_arun_kills_the_jail(sb, host):
    async def main():
        task = asyncio.ensure_future(sb.arun_code("bash", f"sleep 100 # {host.marker}"))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_session_persists_work_dir_and_snapshots(sb, host):
    with sb.session() as s:
        r1 = s.run_code("bash", "mkdir -p proj && echo v1 > proj/a.txt && chmod 640 proj/a.txt"
                        " && ln -s a.txt proj/link && cd proj && pwd")
        assert r1.ok and r1.stdout == "/work/proj\n"
        r2 = s.run_code("python", "print(open('proj/a.txt').read().strip())")
        assert r2.stdout == "v1\n"  # persisted across two fresh jails
        s.write_files({"given.txt": "from host"})
        r3 = s.run(["cat", "given.txt"])
        assert r3.stdout == "from host"
        snap = s.snapshot()
        assert list(snap) == ["given.txt", "proj", "proj/a.txt", "proj/link"]
        assert snap["proj/a.txt"].content == b"v1\n" and snap["proj/a.txt"].mode == 0o640
        assert snap["proj"].kind == "dir" and snap["proj/link"].target == "a.txt"
        assert s.read_file("proj/a.txt") == b"v1\n"
        st = os.stat(s.path)
        assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == nsj.host_caps().jail_uid
        path = s.path
    assert not os.path.exists(path)
    with pytest.raises(SandboxError):
        s.run_code("bash", "true")


def test_policy_and_hydra_override():
    policy = SandboxPolicy(limits=Limits(wall_time_s=3, memory_mb=256),
                           languages=("python", "bash"), env={"DOMAIN": "math"})
    sb = Sandbox.from_config({"wall_time_s": 1.5, "memory_mb": None, "max_concurrency": 3,
                              "extra_ro_mounts": ["/etc/hostname:/data/hostname"]},
                             policy=policy)
    assert sb.limits.wall_time_s == 1.5 and sb.limits.memory_mb == 256
    assert sb.pool.max_concurrency == 3 and sb.languages == ("python", "bash")
    r = sb.run_code("bash", "echo $DOMAIN; cat /data/hostname >/dev/null && echo mounted")
    assert r.stdout == "math\nmounted\n"
    assert policy.sandbox().limits.wall_time_s == 3
    with pytest.raises(ValueError, match="unknown sandbox limit"):
        Sandbox.from_config({"wall_time": 1})


def test_hydra_group_files_load():
    from pathlib import Path

    import yaml

    import gym_llm

    conf = Path(gym_llm.__file__).resolve().parent / "apps" / "conf" / "sandbox"
    names = sorted(p.stem for p in conf.glob("*.yaml"))
    assert "default" in names
    for p in conf.glob("*.yaml"):
        data = yaml.safe_load(p.read_text())
        limits_keys = {k for k in data if k not in
                       {"isolation", "max_concurrency", "extra_ro_mounts", "languages", "env"}}
        Limits.from_dict({k: v for k, v in data.items() if k in limits_keys and v is not None})
    sb = Sandbox.from_config(yaml.safe_load((conf / "strict.yaml").read_text()))
    assert sb.limits.memory_mb == 256


def test_isolation_none_is_explicit_and_loud(host):
    with pytest.warns(RuntimeWarning, match="UNJAILED"):
        sb = Sandbox(isolation="none", limits=Limits(wall_time_s=1))
    r = sb.run_code("python", "print('plain')", files={"f": "x"}, output_files=["f"])
    assert r.isolation == "none" and r.stdout == "plain\n" and r.files == {"f": b"x"}
    r = sb.run_code("bash", f"sleep 100 # {host.marker}")
    assert r.timed_out
    with pytest.raises(ValueError):
        Sandbox(isolation="docker")  # type: ignore[arg-type]


def test_missing_nsjail_raises_sandbox_error(monkeypatch):
    monkeypatch.setenv("GYM_LLM_NSJAIL", "/nonexistent/nsjail")
    path, why = nsj.find_nsjail()
    assert path is None and "GYM_LLM_NSJAIL" in why
    core._check_isolation.cache_clear()
    try:
        with pytest.raises(SandboxError, match="nsjail not found"):
            Sandbox()
    finally:
        monkeypatch.delenv("GYM_LLM_NSJAIL")
        core._check_isolation.cache_clear()
    assert Sandbox().run_code("python", "print(1)").ok


def test_nsjail_on_path_python_wrapper_is_skipped(tmp_path, monkeypatch):
    fake = tmp_path / "nsjail"
    fake.write_text("#!/usr/bin/env python3\nprint('wrapper')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    path, how = nsj.find_nsjail()
    assert path != str(fake) and path is not None and how != "PATH"


def test_jail_setup_failure_is_sandbox_error():
    # a source the jail can reach as it is (not staged), so removing it breaks the jail
    gone = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.chmod(gone, 0o755)
    bad = Sandbox(extra_ro_mounts=[gone])
    os.rmdir(gone)  # the mount source vanishes: nsjail cannot build the jail
    with pytest.raises(SandboxError, match="nsjail could not run"):
        bad.run_code("python", "print(1)")


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the jail's outside uid is unrelated to the owner; "
                    "as a user it is the user, who can read their own private dirs")
def test_mount_source_in_a_private_dir_is_staged(tmp_path):
    private = tmp_path / "home"  # like a mode-0700 home dir holding a venv
    (private / "pkg").mkdir(parents=True)
    (private / "pkg" / "mod.py").write_text("VALUE = 42\n")
    private.chmod(0o700)
    (private / "pkg").chmod(0o700)
    sandbox = Sandbox(extra_ro_mounts=[f"{private / 'pkg'}:/opt/lib/pkg"])
    staged = sandbox.extra_ro_mounts[0].split(":")[0]
    assert staged != str(private / "pkg") and not staged.startswith(str(tmp_path))
    res = sandbox.run_code("python", "import sys; sys.path.insert(0, '/opt/lib')\nfrom pkg.mod import VALUE\nprint(VALUE)")
    assert res.exit_code == 0 and res.stdout.strip() == "42", res.stderr
    # staged once: a second sandbox reuses the same copy
    assert Sandbox(extra_ro_mounts=[f"{private / 'pkg'}:/opt/lib/pkg"]).extra_ro_mounts[0].split(":")[0] == staged


def test_diagnose_rows():
    rows = diagnose()
    assert all(set(r) == {"name", "ok", "detail", "fix"} for r in rows)
    by_name = {r["name"]: r for r in rows}
    assert by_name["sandbox: nsjail binary"]["ok"]
    assert by_name["sandbox: isolation"]["ok"]
    assert by_name["sandbox: resident nsjail"]["ok"]  # CI has a C compiler
    for lang, exe in available_languages().items():
        assert by_name[f"sandbox: language {lang}"]["ok"] == (exe is not None)


def test_warning_free_default_construction():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Sandbox()


def test_missing_program_is_exit_127(sb):
    r = sb.run(["/no/such/program"])
    assert r.exit_code == 127 and "/no/such/program" in r.stderr and not r.memory_exceeded


def test_prespawned_jail_is_fresh_used_once_and_released(sb_limits, host):
    from tests.sandbox.conftest import descendants

    sb = Sandbox(limits=sb_limits, resident=False)  # pre-spawning serves per-run jails

    def jails() -> set[int]:
        return {p for p in descendants(os.getpid()) if "nsjail" in _cmdline(p)}

    core.release_spares()  # spares of earlier tests' configurations
    code = ("import os\nprint(sorted(os.listdir('/tmp')), os.getpid())\n"
            "open('/tmp/left', 'w').write('x')")
    first = sb.run_code("python", code)
    assert first.stdout == "[] 2\n", first.stderr
    deadline = time.monotonic() + 10
    while not jails() and time.monotonic() < deadline:  # the spare is being started
        time.sleep(0.01)
    spares = jails()
    assert len(spares) == 1  # one idle jail per configuration, not one per run
    second = sb.run_code("python", code)  # runs in that spare: a fresh, empty jail
    assert second.stdout == "[] 2\n", second.stderr
    assert spares.isdisjoint(jails())  # used once: the spare that ran is gone
    core.release_spares()
    assert not jails()


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def test_library_dirs_ignore_the_hosts_ld_library_path(tmp_path, monkeypatch):
    # torch and vllm put their lib dirs on LD_LIBRARY_PATH; the jail has no host
    # environment, so those dirs must not become mounts (under /tmp they cannot)
    from gym_llm_sandbox.languages import library_dirs

    fake = tmp_path / "lib"
    fake.mkdir()
    libc = next(p for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6",
                            "/usr/lib/x86_64-linux-gnu/libc.so.6") if os.path.exists(p))
    (fake / "libc.so.6").symlink_to(libc)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(fake))
    library_dirs.cache_clear()
    try:
        dirs = library_dirs(os.path.realpath("/bin/bash"))
    finally:
        library_dirs.cache_clear()
    assert dirs and not any(d.startswith(str(tmp_path)) for d in dirs)
