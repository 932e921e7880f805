"""``tool/Shell-v0``: file-system tasks through a sandboxed ``bash`` tool.

Each episode gets a fresh sandbox session (:meth:`gym_llm_sandbox.Sandbox.session`):
a work dir holding the task's files that persists across the turns of the
episode (each command still runs in a fresh nsjail) and is deleted when the
episode ends. The reward is 1.0 when the work dir ends in the target state:
exactly the target set of files and directories, each file with the target
content (a final newline is optional) and, where the task names one, the
target permission bits.

Tasks are procedural, one to three steps drawn from :data:`KINDS` (create,
rename, copy, delete, chmod, count lines, sort, grep, replace, cut a CSV
column, sum numbers, move or rename files by extension, ...). ``difficulty``
(0..1) unlocks harder kinds and more steps and distractor files; at 0 a task
is one obvious command (``mkdir out``, ``mv a.txt b.txt``).

The target state is computed in Python from a model of the file system; the
gold commands in ``task.answer`` reach it in the sandbox (the tests replay
them). A task is a function of its instruction text: file contents are drawn
from a generator seeded by it, so one prompt is one task.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gym_llm_sandbox import ExecResult, FileState, Limits, Sandbox, SandboxError, SandboxPolicy

from gym_llm import Draft, ProceduralTasks, RewardResult, Task, ToolEnv
from gym_llm.envs.tasks import content_hash
from gym_llm.envs.tools import Tool, function_schema, render_tools_prompt

from .signals import SIGNALS

__all__ = ["ShellEnv", "generate_shell_task", "verify_shell_state", "SHELL_POLICY", "KINDS"]

SYSTEM_PROMPT = (
    "You are working in a Linux shell. Use the bash tool to run commands; they run in the work "
    "directory /work, whose files persist between calls. Do exactly what the task asks and leave no "
    "other files behind. When the task is done, reply with a short message without a tool call."
)

#: Characters of a command's stdout and of its stderr shown back to the model.
MAX_SHOWN_CHARS = 4000
#: The work dir of an episode may hold at most this many entries; past it the
#: episode's commands stop and it scores 0. Its size is capped by the sandbox
#: session itself (``tmpfs_mb`` of :data:`SHELL_POLICY`: writes past it fail).
WORKDIR_MAX_ENTRIES = 10_000


#: The sandbox of the ``bash`` tool: per command 10 s wall, 5 s CPU, 256 MB, 32
#: processes, 64 kB of output per stream, 4 MB per file, no network.
#: ``/etc/alternatives`` is mounted read-only (where the host has it) because
#: ``awk`` and friends are links through it.
SHELL_POLICY = SandboxPolicy(
    limits=Limits(wall_time_s=10, cpu_time_s=5, memory_mb=256, max_processes=32,
                  max_output_bytes=64_000, max_file_mb=4, tmpfs_mb=16),
    languages=("bash",),
    extra_ro_mounts=("/etc/alternatives",) if os.path.isdir("/etc/alternatives") else (),
)


# ---------------------------------------------------------------- fs model
@dataclass
class FS:
    """A model of the work dir: files (path -> text), directories, and the
    permission bits a task prescribes (path -> mode)."""

    files: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    modes: dict[str, int] = field(default_factory=dict)

    def names(self) -> set[str]:
        return set(self.files) | self.dirs

    def add(self, path: str, content: str) -> None:
        self.files[path] = content
        parent = os.path.dirname(path)
        while parent:
            self.dirs.add(parent)
            parent = os.path.dirname(parent)

    def move(self, src: str, dst: str) -> None:
        self.add(dst, self.files.pop(src))

    def listing(self) -> str:
        return "\n".join(p + ("/" if p in self.dirs else "") for p in sorted(self.names())) or "(empty)"


WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "lemon", "piano", "orbit", "candle",
         "meadow", "copper", "falcon", "harbor", "velvet", "willow", "ember", "glacier", "saddle", "quartz"]
PHRASES = ["hello world", "backup complete", "build passed", "remember the milk", "meeting at noon",
           "all systems nominal", "version two point one", "do not delete"]
FILES = ["notes.txt", "data.txt", "todo.md", "readme.md", "report.txt", "list.txt", "words.txt",
         "input.txt", "draft.md", "summary.txt", "names.txt", "plan.md", "ideas.txt", "journal.txt"]
DIRS = ["archive", "backup", "out", "old", "docs", "results", "stash", "keep"]
CSV_COLUMNS = ["name", "city", "age", "team", "score"]
CITIES = ["paris", "lima", "oslo", "cairo", "denver", "madrid", "seoul", "nairobi"]
MODES = {"600": 0o600, "640": 0o640, "700": 0o700, "755": 0o755, "444": 0o444, "400": 0o400}


def _lines(c: random.Random, n: int, words: list[str] = WORDS) -> list[str]:
    return [" ".join(c.choice(words) for _ in range(c.randrange(2, 6))) for _ in range(n)]


def _text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


@dataclass
class World:
    """The work dir before (``start``) and after (``end``) the task's steps."""

    start: FS = field(default_factory=FS)
    end: FS = field(default_factory=FS)

    def given(self, path: str, content: str) -> None:
        """An input file: there from the start (and until a step changes it)."""
        self.start.add(path, content)
        self.end.add(path, content)

    def given_text(self, c: random.Random, path: str, n_lines: int | None = None) -> str:
        text = _text(_lines(c, n_lines or c.randrange(3, 9)))
        self.given(path, text)
        return text


# ------------------------------------------------------------------- kinds
Build = Callable[[dict[str, Any], random.Random, World], str]


@dataclass(frozen=True, eq=False)
class Kind:
    """One kind of step: an instruction ``template`` whose ``{placeholders}``
    are drawn from :data:`POOLS` (all names of a task distinct), and
    ``build(params, c, world)`` that adds the step's input files (contents
    from ``c``), applies the change to ``world.end`` and returns the gold
    command. ``level`` is the lowest difficulty at which it is drawn; ``glob``
    kinds act on every file with an extension, so a task holds at most one."""

    name: str
    level: float
    template: str
    build: Build
    glob: bool = False


def _create(p: dict[str, Any], c: random.Random, w: World) -> str:
    w.end.add(p["dst"], p["phrase"] + "\n")
    return f"printf '%s\\n' '{p['phrase']}' > {p['dst']}"


def _mkdir(p: dict[str, Any], c: random.Random, w: World) -> str:
    w.end.dirs.add(p["dir"])
    return f"mkdir {p['dir']}"


def _rename(p: dict[str, Any], c: random.Random, w: World) -> str:
    w.given_text(c, p["src"])
    w.end.move(p["src"], p["dst"])
    return f"mv {p['src']} {p['dst']}"


def _copy(p: dict[str, Any], c: random.Random, w: World) -> str:
    w.end.add(p["dst"], w.given_text(c, p["src"]))
    return f"cp {p['src']} {p['dst']}"


def _delete(p: dict[str, Any], c: random.Random, w: World) -> str:
    w.given_text(c, p["src"])
    del w.end.files[p["src"]]
    return f"rm {p['src']}"


def _chmod(p: dict[str, Any], c: random.Random, w: World) -> str:
    w.given_text(c, p["src"])
    w.end.modes[p["src"]] = MODES[p["mode"]]
    return f"chmod {p['mode']} {p['src']}"


def _count(p: dict[str, Any], c: random.Random, w: World) -> str:
    n = c.randrange(3, 25)
    w.given_text(c, p["src"], n)
    w.end.add(p["dst"], f"{n}\n")
    return f"wc -l < {p['src']} > {p['dst']}"


def _head(p: dict[str, Any], c: random.Random, w: World) -> str:
    lines = _lines(c, p["n"] + c.randrange(2, 8))
    w.given(p["src"], _text(lines))
    w.end.add(p["dst"], _text(lines[: p["n"]]))
    return f"head -n {p['n']} {p['src']} > {p['dst']}"


def _concat(p: dict[str, Any], c: random.Random, w: World) -> str:
    w.end.add(p["dst"], w.given_text(c, p["src"]) + w.given_text(c, p["src2"]))
    return f"cat {p['src']} {p['src2']} > {p['dst']}"


def _sort_unique(p: dict[str, Any], c: random.Random, w: World) -> str:
    lines = [c.choice(WORDS[:8]) for _ in range(c.randrange(6, 16))]
    w.given(p["src"], _text(lines))
    w.end.add(p["dst"], _text(sorted(set(lines))))
    return f"LC_ALL=C sort -u {p['src']} > {p['dst']}"


def _grep(p: dict[str, Any], c: random.Random, w: World) -> str:
    word = p["word"]
    lines = _lines(c, c.randrange(5, 14), [x for x in WORDS if x != word])
    for i in c.sample(range(len(lines)), c.randrange(1, 4)):
        words = lines[i].split()
        words.insert(c.randrange(len(words) + 1), word)
        lines[i] = " ".join(words)
    w.given(p["src"], _text(lines))
    w.end.add(p["dst"], _text([line for line in lines if word in line.split()]))
    return f"grep -w {word} {p['src']} > {p['dst']}"


def _replace(p: dict[str, Any], c: random.Random, w: World) -> str:
    old, new = p["word"], p["word2"]
    lines = _lines(c, c.randrange(4, 10), [x for x in WORDS if x != new])
    lines[c.randrange(len(lines))] += f" {old}"
    text = _text(lines)
    w.given(p["src"], text)
    w.end.add(p["src"], re.sub(rf"\b{old}\b", new, text))
    return f"sed -i 's/\\b{old}\\b/{new}/g' {p['src']}"


def _column(p: dict[str, Any], c: random.Random, w: World) -> str:
    index = CSV_COLUMNS.index(p["column"])
    rows = [[c.choice(WORDS), c.choice(CITIES), str(c.randrange(18, 90)), c.choice("ABCD"), str(c.randrange(100))]
            for _ in range(c.randrange(3, 10))]
    w.given(p["src"], _text([",".join(CSV_COLUMNS)] + [",".join(r) for r in rows]))
    w.end.add(p["dst"], _text([r[index] for r in rows]))
    return f"tail -n +2 {p['src']} | cut -d, -f{index + 1} > {p['dst']}"


def _sum(p: dict[str, Any], c: random.Random, w: World) -> str:
    numbers = [c.randrange(-50, 500) for _ in range(c.randrange(3, 15))]
    w.given(p["src"], _text([str(n) for n in numbers]))
    w.end.add(p["dst"], f"{sum(numbers)}\n")
    return f"paste -sd+ {p['src']} | bc > {p['dst']}"


def _move_ext(p: dict[str, Any], c: random.Random, w: World) -> str:
    ext, d = p["ext"], p["dir"]
    for i, word in enumerate(c.sample(WORDS, c.randrange(2, 5))):
        w.given_text(c, f"{word}{i}.{ext}", 2)
    for path in [f for f in w.end.files if "/" not in f and f.endswith("." + ext)]:
        w.end.move(path, f"{d}/{path}")
    return f"mkdir {d} && mv *.{ext} {d}/"


def _delete_ext(p: dict[str, Any], c: random.Random, w: World) -> str:
    ext, d = p["ext"], p["dir"]
    for i, word in enumerate(c.sample(WORDS, c.randrange(1, 4))):
        w.given_text(c, f"{word}{i}.{ext}", 1)
        w.given_text(c, f"{d}/{word}{i}.{ext}", 1)
    w.given_text(c, f"{d}/{c.choice(FILES)}")  # survives: not a .{ext} file
    for path in [f for f in w.end.files if f.endswith("." + ext)]:
        del w.end.files[path]
    return f"find . -type f -name '*.{ext}' -delete"


def _rename_ext(p: dict[str, Any], c: random.Random, w: World) -> str:
    ext, ext2, d = p["ext"], p["ext2"], p["dir"]
    for word in c.sample(WORDS, c.randrange(2, 5)):
        w.given_text(c, f"{d}/{word}.{ext}", 2)
    for path in [f for f in w.end.files if f.startswith(d + "/") and f.endswith("." + ext)]:
        w.end.move(path, path[: -len(ext)] + ext2)
    return f'for f in {d}/*.{ext}; do mv "$f" "${{f%.{ext}}}.{ext2}"; done'


KINDS: tuple[Kind, ...] = (
    Kind("create", 0.0, "Create a file named {dst} containing the single line: {phrase}", _create),
    Kind("mkdir", 0.0, "Create an empty directory named {dir}.", _mkdir),
    Kind("rename", 0.0, "Rename the file {src} to {dst}.", _rename),
    Kind("copy", 0.0, "Copy the file {src} to {dst}.", _copy),
    Kind("delete", 0.0, "Delete the file {src}.", _delete),
    Kind("chmod", 0.2, "Set the permissions of {src} to {mode} (octal).", _chmod),
    Kind("count", 0.3, "Write the number of lines of {src} into {dst}.", _count),
    Kind("head", 0.3, "Write the first {n} lines of {src} into {dst}.", _head),
    Kind("concat", 0.3, "Concatenate {src} and {src2}, in this order, into {dst}.", _concat),
    Kind("sort", 0.4, "Write the distinct lines of {src}, sorted alphabetically, into {dst}.", _sort_unique),
    Kind("grep", 0.4, "Write the lines of {src} that contain the word {word} into {dst}, in their original order.",
         _grep),
    Kind("move_ext", 0.4, "Move every .{ext} file of the work directory into a new directory {dir}.",
         _move_ext, glob=True),
    Kind("replace", 0.5, "In {src}, replace every occurrence of the word {word} with {word2}.", _replace),
    Kind("sum", 0.5, "{src} holds one integer per line. Write their sum into {dst}.", _sum),
    Kind("delete_ext", 0.5, "Delete every .{ext} file, in the work directory and in {dir}.", _delete_ext, glob=True),
    Kind("column", 0.6, "{src} is a CSV file with a header line. Write the values of its {column} column, "
         "without the header, into {dst}.", _column),
    Kind("rename_ext", 0.6, "In the directory {dir}, change the extension of every .{ext} file to .{ext2}.",
         _rename_ext, glob=True),
)

#: Where each placeholder's value comes from. Values are unique within a task,
#: so steps never touch each other's files.
POOLS: dict[str, list[Any]] = {
    "src": FILES, "src2": FILES, "dst": FILES, "dir": DIRS, "phrase": PHRASES, "word": WORDS,
    "word2": WORDS, "mode": list(MODES), "column": CSV_COLUMNS[1:], "n": [2, 3, 4, 5],
    "ext": ["log", "tmp", "bak"], "ext2": ["old", "txt.bak", "archived"],
}
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _draw_params(kind: Kind, rng: random.Random, used: set[Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name in _PLACEHOLDER.findall(kind.template):
        params[name] = rng.choice([v for v in POOLS[name] if v not in used])
        used.add(params[name])
    return params


def _target(fs: FS) -> dict[str, dict[str, Any]]:
    """The JSON form of a target state: ``{path: {"kind", "content"?, "mode"?}}``."""
    out: dict[str, dict[str, Any]] = {d: {"kind": "dir"} for d in fs.dirs}
    for path, content in fs.files.items():
        out[path] = {"kind": "file", "content": content}
    for path, mode in fs.modes.items():
        out[path]["mode"] = mode
    return dict(sorted(out.items()))


def generate_shell_task(rng: random.Random, difficulty: float) -> Draft:
    """One Shell task (a :class:`~gym_llm.Draft`): the prompt, gold ``bash``
    calls, and ``metadata`` with ``files`` (the initial work dir), ``target``
    (see :func:`verify_shell_state`) and ``kinds``."""
    n_steps = 1 + (rng.random() < 0.8 * difficulty) + (rng.random() < difficulty - 0.6)
    kinds: list[Kind] = []
    for _ in range(n_steps):
        kinds.append(rng.choice([k for k in KINDS if k.level <= difficulty and k not in kinds
                                 and not (k.glob and any(x.glob for x in kinds))]))
    used: set[Any] = set()
    steps = [(k, _draw_params(k, rng, used)) for k in kinds]
    instructions = [k.template.format(**p) for k, p in steps]
    c = random.Random(content_hash(instructions))  # from here on, a function of the instructions
    world = World()
    for i in range(int(difficulty * 4 + 0.5)):  # distractors, left alone by every step
        name = c.choice([f for f in FILES if f not in used])
        used.add(name)
        world.given_text(c, f"{c.choice([d for d in DIRS if d not in used])}/{name}" if i % 2 else name)
    gold = [{"name": "bash", "arguments": {"command": k.build(p, c, world)}} for k, p in steps]
    task_text = " ".join(instructions) if len(instructions) == 1 else "\n".join(
        f"{i + 1}. {t}" for i, t in enumerate(instructions))
    user = f"{task_text}\n\nThe work directory contains:\n{world.start.listing()}"
    system = f"{SYSTEM_PROMPT}\n\n{render_tools_prompt([_bash_schema()])}"
    metadata = {"files": dict(sorted(world.start.files.items())), "target": _target(world.end),
                "kinds": [k.name for k in kinds]}
    return Draft([{"role": "system", "content": system}, {"role": "user", "content": user}], gold, metadata)


# ------------------------------------------------------------------ reward
def verify_shell_state(target: Mapping[str, Mapping[str, Any]], snapshot: Mapping[str, FileState]) -> RewardResult:
    """Compare a work-dir ``snapshot`` (:meth:`gym_llm_sandbox.SandboxSession.snapshot`)
    with a ``target`` ``{path: {"kind": "file" | "dir", "content"?: str, "mode"?: int}}``:
    1.0 when the paths are exactly the target's, of the target kinds, files
    with the target text (UTF-8; trailing newlines ignored) and the target
    permission bits where given; else 0.0 with ``info["problems"]``."""
    problems = [f"unexpected {p}" for p in sorted(set(snapshot) - set(target))]
    for path, want in target.items():
        got = snapshot.get(path)
        if got is None:
            problems.append(f"missing {path}")
            continue
        if got.kind != want["kind"]:
            problems.append(f"{path} is a {got.kind}, not a {want['kind']}")
            continue
        if want["kind"] == "file" and not _same_text(got.content, want["content"]):
            problems.append(f"wrong content in {path}")
        if "mode" in want and got.mode != want["mode"]:
            problems.append(f"{path} has mode {got.mode:o}, not {want['mode']:o}")
    info: dict[str, Any] = {}
    if problems:
        info = {"reason": problems[0], "problems": problems}
    score = float(not problems)
    return RewardResult(score, {"state": score}, info)


def _same_text(content: bytes | None, want: str) -> bool:
    if content is None:
        return False
    try:
        return content.decode("utf-8").rstrip("\n") == want.rstrip("\n")
    except UnicodeDecodeError:
        return False


def _shown(stream: str) -> str:
    if len(stream) <= MAX_SHOWN_CHARS:
        return stream
    return stream[:MAX_SHOWN_CHARS] + f"\n...[{len(stream) - MAX_SHOWN_CHARS} more characters]"


def format_result(r: ExecResult) -> str:
    """What the model sees of one command: exit code, then the non-empty streams."""
    parts = [f"exit code: {r.exit_code}"]
    if r.timed_out:
        parts.append("(killed: time limit exceeded)")
    elif r.memory_exceeded:
        parts.append("(killed: memory limit exceeded)")
    if r.stdout:
        parts.append("stdout:\n" + _shown(r.stdout))
    if r.stderr:
        parts.append("stderr:\n" + _shown(r.stderr))
    return "\n".join(parts)


# --------------------------------------------------------------------- env
class BashTool:
    """The ``bash`` tool of one episode, bound to its sandbox session.

    With no session (the sandbox failed to start) every call raises
    :class:`~gym_llm_sandbox.SandboxError`; ``error`` keeps the first sandbox
    failure, which makes the episode's reward a ``reward_error``. When the work
    dir grows past :data:`WORKDIR_MAX_ENTRIES` entries,
    ``over_quota`` says so and no further command runs (the model's doing, not
    an environment failure).
    """

    def __init__(self, session: Any = None, error: str | None = None):
        self.session = session
        self.error = error
        self.over_quota: str | None = None

    async def bash(self, command: str) -> str:
        """Run a bash command in the work directory /work and return its exit code, stdout and stderr.

        Args:
            command: The command line, e.g. "ls -l".
        """
        if self.session is None:
            raise SandboxError(self.error or "no sandbox session")
        if self.over_quota:
            raise RuntimeError(f"no more commands: {self.over_quota}")
        try:
            result = await self.session.arun_code("bash", command)
        except SandboxError as e:
            self.error = self.error or f"SandboxError: {e}"
            raise
        # The sandbox's bounded walk: a tree too deep or too large to count is over quota.
        usage = await asyncio.to_thread(self.session.usage, WORKDIR_MAX_ENTRIES)
        if not usage.complete or usage.entries > WORKDIR_MAX_ENTRIES:
            self.over_quota = (f"the work directory exceeded its quota of {WORKDIR_MAX_ENTRIES} "
                               "entries or its depth limit")
            return format_result(result) + f"\n({self.over_quota}; no more commands will run)"
        return format_result(result)


@functools.cache
def _bash_schema() -> dict[str, Any]:
    return function_schema(BashTool().bash)


class ShellEnv(ToolEnv):
    """File-system tasks through a sandboxed bash tool; reward = target work-dir state."""

    hack_signals = SIGNALS

    def __init__(
        self,
        *,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 10,
        difficulty: float = 0.5,
        heldout_size: int = 500,
        sandbox: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
    ):
        """
        Args:
            split, seed, max_turns: as every env; ``max_turns`` counts
                assistant turns (each may run several commands).
            difficulty: 0..1, see the module docstring.
            heldout_size: number of held-out tasks.
            sandbox: overrides of :data:`SHELL_POLICY`, as the Hydra
                ``sandbox`` group takes them (:meth:`Sandbox.from_config`:
                limit fields, ``isolation``, ``max_concurrency``, ...).
        """
        tasks = ProceduralTasks(
            "tool-shell", generate_shell_task, difficulty=difficulty, sizes={"heldout": heldout_size}
        )
        super().__init__(tasks, split=split, seed=seed, max_turns=max_turns, render_mode=render_mode)
        self.sandbox_config = dict(sandbox or {})
        self._sandbox: Sandbox | None = None
        self.shell = BashTool(error="no episode started")
        self._finalizer: weakref.finalize | None = None

    def episode_tools(self, task: Task) -> list[Tool]:
        # A fresh session per episode; ToolEnv asks for the tools before on_reset.
        self._close_session()
        try:
            if self._sandbox is None:
                self._sandbox = Sandbox.from_config(self.sandbox_config, policy=SHELL_POLICY)
            session = self._sandbox.session()
            self._finalizer = weakref.finalize(self, session.close)
            session.write_files(task.metadata["files"])
            self.shell = BashTool(session)
        except (SandboxError, OSError) as e:  # reported as reward_error when scored
            self._close_session()
            self.shell = BashTool(error=f"{type(e).__name__}: {e}")
        return [Tool.from_function(self.shell.bash)]

    def reward_formula(self) -> str:
        """:func:`verify_shell_state` of the work directory when the episode ends."""
        return "1 * state"

    def score_episode(self, final_message: dict[str, Any] | None) -> RewardResult:
        try:
            if self.shell.error or self.shell.session is None:
                error = self.shell.error or "no sandbox session"
                return RewardResult(0.0, {"state": 0.0}, {"reward_error": f"sandbox failed: {error}"})
            if self.shell.over_quota:
                return RewardResult(0.0, {"state": 0.0}, {"reason": self.shell.over_quota})
            snapshot = self.shell.session.snapshot()
            if not snapshot.complete:  # the model's doing: scored, not a reward_error
                return RewardResult(0.0, {"state": 0.0}, {"reason": "the work directory is too "
                                                          "large or deep to check"})
            return verify_shell_state(self.task.metadata["target"], snapshot)
        finally:
            self._close_session()  # the work dir dies with the episode

    def _close_session(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # closes the session once, here or at garbage collection
        self._finalizer = None
        self.shell.session = None

    def close(self) -> None:
        self._close_session()
        super().close()
