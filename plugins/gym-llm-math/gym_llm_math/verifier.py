"""The math reward: is the model's final boxed answer equivalent to the gold?

Plain numbers are compared here, exactly (the fast path); everything else goes
to math-verify, which runs in persistent worker processes that are killed and
restarted when a comparison overruns its time limit (math-verify's own
timeouts are signal-based and only work on the main thread, so they are off).
Both paths see the same normalised strings, so the fast path changes speed,
never verdicts.

Hardening: the final answer is the *last* ``\\boxed{}``; a response whose
boxed answers disagree, or that lists several values where the gold is one
value, is hedging and earns 0; a gold that lists several values (the
solutions of an equation) is matched as a set, against the values of each
answer, an answer being the boxes joined by "and", "or" or a comma
(:func:`~gym_llm_math.answers.boxed_answers`; ``\\boxed{35} ++++++
\\boxed{4}`` is two answers, each to match the whole set); gold that math-verify cannot parse, or that is a whole
solution with no marked answer, sets ``info["reward_error"]`` instead of a
silent 0 or a guess. Numbers compare exactly (``lenient_decimals`` relaxes
decimals to "rounds to it").
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextvars
import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_llm.envs.parsing import extract_boxed, message_text
from gym_llm.envs.rewards import RewardResult

from .answers import (
    boxed_answers,
    compare_numbers,
    extract_gold,
    has_relation_sign,
    hedges,
    is_multi_valued,
    is_relation,
    is_single_value,
    normalise,
    plain_number,
    relation_pieces,
    split_relation,
    split_values,
    unmarked_solution,
)

__all__ = ["Verifier", "verify", "default_verifier", "response_text", "is_expanded"]

#: A boxed answer longer than this is not sent to math-verify (it is wrong or
#: an attack; either way it would only burn the time limit).
MAX_ANSWER_CHARS = 10_000

_WORKER = Path(__file__).with_name("_mv_worker.py")


class _Timeout(Exception):
    pass


class _WorkerDied(Exception):
    pass


class VerifierUnavailable(RuntimeError):
    """math-verify cannot be started (not installed, or the worker does not come up)."""


class _Spawner:
    """Starts worker processes from one thread that lives as long as the
    process: a worker asks to be killed when its parent dies
    (PR_SET_PDEATHSIG), and Linux sends that signal when the *thread* that
    started it exits, so workers must not be started by short-lived threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._requests: queue.SimpleQueue = queue.SimpleQueue()

    def popen(self, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        with self._lock:
            if self._pid != os.getpid():  # first use, or forked: threads do not survive fork
                self._pid, self._requests = os.getpid(), queue.SimpleQueue()
                threading.Thread(target=self._serve, args=(self._requests,), daemon=True,
                                 name="gym-llm-math-spawner").start()
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._requests.put((argv, env, future))
        return future.result()

    @staticmethod
    def _serve(requests: queue.SimpleQueue) -> None:
        while True:
            argv, env, future = requests.get()
            try:
                future.set_result(subprocess.Popen(
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                ))
            except BaseException as e:
                future.set_exception(e)


_spawner = _Spawner()


class _Worker:
    """One math-verify process speaking JSON lines."""

    def __init__(self, memory_mb: int, startup_timeout_s: float):
        env = dict(os.environ, GYM_LLM_MATH_WORKER_MEMORY_MB=str(memory_mb), OMP_NUM_THREADS="1")
        # -P: the worker's folder (this package) must not shadow other modules.
        self.proc = _spawner.popen([sys.executable, "-P", str(_WORKER)], env)
        self._buf = b""
        try:
            ready = self._read(time.monotonic() + startup_timeout_s)
        except (_Timeout, _WorkerDied) as e:
            self.kill()
            raise VerifierUnavailable(f"math-verify worker did not start: {type(e).__name__} {e}") from None
        if not ready.get("ready"):
            self.kill()
            raise VerifierUnavailable(f"math-verify worker could not import math_verify: {ready.get('error')}")

    def request(self, obj: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise _WorkerDied(str(e)) from None
        return self._read(time.monotonic() + timeout_s)

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout()
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise _Timeout()
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _WorkerDied(f"exit code {self.proc.poll()}")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class _Pool:
    """Up to ``size`` workers, started on demand, shared by threads. A worker
    that overruns is killed; the next request starts a fresh one."""

    def __init__(self, size: int, memory_mb: int, startup_timeout_s: float):
        self.size, self.memory_mb, self.startup_timeout_s = size, memory_mb, startup_timeout_s
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._count = 0
        self._pid = os.getpid()

    def run(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        worker = self._acquire()
        try:
            reply = worker.request(request, timeout_s)
        except BaseException:
            worker.kill()
            self._release(None)
            raise
        self._release(worker)
        return reply

    def _acquire(self) -> _Worker:
        with self._cond:
            if self._pid != os.getpid():  # forked: the parent's workers are not ours to use
                self._idle, self._count, self._pid = [], 0, os.getpid()
            while not self._idle and self._count >= self.size:
                self._cond.wait()
            if self._idle:
                return self._idle.pop()
            self._count += 1
        try:
            return _Worker(self.memory_mb, self.startup_timeout_s)
        except BaseException:
            self._release(None)
            raise

    def _release(self, worker: _Worker | None) -> None:
        with self._cond:
            if worker is None:
                self._count -= 1
            else:
                self._idle.append(worker)
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        if self._pid == os.getpid():
            for w in idle:
                w.kill()


@dataclass(frozen=True)
class _Verdict:
    equal: bool
    path: str  # "fast" or "math-verify"
    problem: str | None = None  # the answer is wrong whatever else matches (a hedge, a timeout, a crash)
    error: str | None = None  # the environment failed (gold unparseable, no math-verify)


def response_text(response: Any) -> str:
    """The text to score: a string, an assistant message dict, or a list of
    messages (the last assistant message) as TRL's conversational format."""
    if isinstance(response, list):
        for msg in reversed(response):
            if isinstance(msg, dict) and msg.get("role", "assistant") == "assistant":
                return message_text(msg)
        return ""
    if isinstance(response, bytes | bytearray):
        return bytes(response).decode("utf-8", "replace")
    return message_text(response)


def _box_key(box: str) -> str:
    number = plain_number(box)
    if number is not None:
        return number.canonical + ("%" if number.percent else "")
    return " ".join(box.split())


#: When the :meth:`Verifier.__call__` running in this context must be done
#: (``time.monotonic()``): its comparisons share one budget.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("gym_llm_math_deadline", default=None)


def _unreadable(answer: str) -> str | None:
    """Why a normalised boxed answer is wrong before any comparison: too long, or a box
    inside it (the parsers would grade the inner box alone); None when neither."""
    if len(answer) > MAX_ANSWER_CHARS:
        return f"answer of {len(answer)} characters is too long"
    if "box" in answer and extract_boxed(answer):
        return "a box inside the boxed answer"
    return None


class Verifier:
    """Scores ``(gold, response)`` pairs; see :func:`verify`.

    Args:
        timeout_s: Hard limit for one math-verify comparison; an overrun kills
            the worker and scores 0 with ``info["reason"]``.
        call_timeout_s: Limit for all the comparisons of one call together
            (several boxes, the sides of a relation, a set's values); ``None``:
            twice ``timeout_s``. Without it, seven slow but equal sides of one
            relation took 27 s, each within its own limit.
        workers: Most math-verify processes running at once (each ~150 MB);
            ``None``: ``min(4, cpu count)``.
        memory_mb: Address-space limit of each worker (0 = none).
        startup_timeout_s: Time a new worker may take to import math-verify.
        max_boxes: More distinct boxed answers than this is hedging, scored 0
            without verifying each.
        fast_path: Compare plain numbers without math-verify. Off only to
            check that it changes no verdict (tests, benchmarks).
    """

    def __init__(
        self,
        *,
        timeout_s: float = 5.0,
        call_timeout_s: float | None = None,
        workers: int | None = None,
        memory_mb: int = 2048,
        startup_timeout_s: float = 60.0,
        max_boxes: int = 8,
        fast_path: bool = True,
    ):
        if timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        self.timeout_s = float(timeout_s)
        self.call_timeout_s = 2 * self.timeout_s if call_timeout_s is None else float(call_timeout_s)
        self.max_boxes = int(max_boxes)
        self.fast_path = fast_path
        size = workers if workers is not None else min(4, os.cpu_count() or 1)
        self._pool = _Pool(max(1, size), memory_mb, startup_timeout_s)

    def close(self) -> None:
        """Stop the idle math-verify workers (busy ones stop when done)."""
        self._pool.close()

    # ----------------------------------------------------------------- public
    def __call__(self, gold: Any, response: Any, *, lenient_decimals: bool = False) -> RewardResult:
        """Score ``response`` against ``gold``: ``score`` 1.0 or 0.0;
        components ``format`` (a boxed answer is present) and ``correct``.
        ``lenient_decimals``: a decimal also matches a value that rounds to it
        (``0.333`` for ``\\frac{1}{3}``); off, numbers must be equal."""
        token = _DEADLINE.set(time.monotonic() + self.call_timeout_s)
        try:
            return self._score(gold, response, lenient_decimals)
        finally:
            _DEADLINE.reset(token)

    def _score(self, gold: Any, response: Any, lenient_decimals: bool) -> RewardResult:
        gold_text = extract_gold(gold)
        if not gold_text.strip():
            return _result(0.0, 0.0, reward_error=f"gold answer {gold!r} is empty or not text")
        if unmarked_solution(gold_text):
            return _result(0.0, 0.0, reward_error="gold is a whole solution with no marked final answer "
                                                  "(####, \\boxed{} or 'the answer is')")
        gold_text = normalise(gold_text)
        text = response_text(response)
        boxes = [normalise(box) for box in extract_boxed(text)]
        if not boxes:
            return _result(0.0, 0.0, reason="no \\boxed{} answer")
        info: dict[str, Any] = {"answer": boxes[-1][:200]}
        distinct: dict[str, str] = {}  # one box per different answer, the last box first
        for box in reversed(boxes):
            distinct.setdefault(_box_key(box), box)
        if len(distinct) > self.max_boxes:
            return _result(1.0, 0.0, reason=f"hedged: {len(distinct)} different boxed answers", **info)
        gold_values = split_values(gold_text)
        if len(gold_values) > 1 and (len(distinct) > 1 or not self._equal(gold_text, boxes[-1], lenient_decimals)):
            answers: dict[str, str] = {}  # one per different answer, the last first
            for answer in map(normalise, reversed(boxed_answers(text, joined_by_prose=True))):
                answers.setdefault(_box_key(answer), answer)
            for answer in answers.values():  # each answer must be the whole set
                result = self._match_set(gold_text, gold_values, answer, lenient_decimals, info)
                if not result.score:
                    return result if len(answers) == 1 else _result(
                        1.0, 0.0, reason="hedged: boxed answers disagree", **info)
            return result
        single = is_single_value(gold_text)
        for k, box in enumerate(distinct.values()):
            verdict = self._judge(gold_text, box, lenient_decimals)
            info["verifier"] = verdict.path
            if verdict.error:
                return _result(1.0, 0.0, reward_error=verdict.error, **info)
            if single and is_multi_valued(box):
                return _result(1.0, 0.0, reason="hedged: several values where one is asked", **info)
            if hedges(box) and not hedges(gold_text):  # "2, 3 (or 4)" parses as 2, 3
                return _result(1.0, 0.0, reason="hedged: a value in the box hedges", **info)
            if not verdict.equal:
                reason = verdict.problem or ("wrong answer" if k == 0 else "hedged: boxed answers disagree")
                return _result(1.0, 0.0, reason=reason, **info)
        return _result(1.0, 1.0, **info)

    def judge(self, gold: str, answer: str, *, lenient_decimals: bool = False) -> _Verdict:
        """Is ``answer`` (one boxed content) equivalent to ``gold`` (a bare answer)?

        Both are :func:`~gym_llm_math.answers.normalise`-d first. A box inside
        the answer makes it wrong (the parsers would grade the inner box
        alone). The sides of a relation in the answer are values that must
        all be equal (``7 = 5`` and ``5 \\approx 6`` are hedges; ``x = 2 + 3
        = 5`` is ``x = 5``; a leading name, ``x`` in ``x = 5``, is not a
        value); one equation answering a gold that is an equation is
        compared as an equation."""
        return self._judge(normalise(gold), normalise(answer), lenient_decimals)

    def _judge(self, gold: str, answer: str, lenient_decimals: bool) -> _Verdict:
        """:meth:`judge` of a normalised ``gold`` and ``answer``."""
        if (problem := _unreadable(answer)) is not None:
            return _Verdict(False, "fast", problem=problem)
        if not has_relation_sign(answer):  # most answers: nothing to settle
            return self._compare(gold, answer, lenient_decimals)
        pieces, settled = [], False
        for piece, separator in relation_pieces(answer):
            names, values = split_relation(piece)
            if len(values) > 1 and not (len(names) + len(values) == 2 and is_relation(gold)):
                if len(values) > self.max_boxes:
                    return _Verdict(False, "fast", problem=f"hedged: a relation of {len(values)} values")
                for value in values[:-1]:
                    verdict = self._compare(values[-1], value, lenient_decimals)
                    if verdict.problem:
                        return verdict
                    if not verdict.equal:
                        return _Verdict(False, verdict.path, problem=f"hedged: the sides of {piece[:100]!r} "
                                                                     "are different values")
                piece, settled = " = ".join([*names, values[-1]]), True
            pieces.append(f"{piece}{separator} ")
        return self._compare(gold, "".join(pieces).strip() if settled else answer, lenient_decimals)

    def is_expanded(self, answer: str) -> tuple[bool, str]:
        """Whether ``answer`` *as written* is an expanded polynomial, with the
        reason when not. Decided on the parsed expression, unevaluated and
        with number literals kept as written: a sum of monomials, each a
        sign, at most one number (an integer or a reduced fraction, such as
        ``\\frac{3}{2}``) and distinct variables to positive integer powers,
        no two with the same variables and powers (like terms combined). So
        ``2(x + 1)``, ``{x - 1}\\cdot{x + 1}``, ``\\cfrac{..}{..}``, ``\\div``,
        ``x^{-1}``, ``x + x``, ``4/2``, ``\\frac{4}{2}`` and ``(-1)(-2)`` are
        not. The answer is normalised as for :meth:`judge`; a box inside it
        fails; every value side of a relation (``f(x) = ...``) must be
        expanded. An answer that cannot be parsed or judged in time is not
        expanded."""
        answer = normalise(answer)
        if (problem := _unreadable(answer)) is not None:
            return False, problem
        for value in split_relation(answer)[1]:
            try:
                reply = self._pool.run({"form": "expanded", "pred": value}, self.timeout_s)
            except (VerifierUnavailable, _Timeout, _WorkerDied) as e:
                return False, f"the form could not be checked ({type(e).__name__})"
            if "error" in reply:
                return False, f"the form could not be checked: {reply['error']}"
            if not reply["form_ok"]:
                return False, reply["why"]
        return True, ""

    # -------------------------------------------------------------- internals
    def _compare(self, gold: str, answer: str, lenient_decimals: bool) -> _Verdict:
        """``judge`` on normalised strings, relations settled: the fast path
        for two plain numbers, else math-verify."""
        g, p = plain_number(gold), plain_number(answer)
        if self.fast_path and g is not None and p is not None:
            equal = any(compare_numbers(a, b, lenient_decimals) for a in g.candidates() for b in p.candidates())
            return _Verdict(equal, "fast")
        golds = [c.canonical for c in g.candidates()] if g is not None else [gold]
        answers = [c.canonical for c in p.candidates()] if p is not None else [answer]
        for gs in golds:
            for ans in answers:
                verdict = self._math_verify(gs, ans, lenient_decimals)
                if verdict.equal or verdict.error or verdict.problem:
                    return verdict
        return _Verdict(False, "math-verify")

    def _equal(self, gold: str, answer: str, lenient_decimals: bool) -> bool:
        return self._judge(gold, answer, lenient_decimals).equal

    def _match_set(self, gold: str, gold_values: list[str], answer: str, lenient_decimals: bool,
                   info: dict[str, Any]) -> RewardResult:
        """A multi-valued gold against the values of one answer (boxes listed
        together, :func:`~gym_llm_math.answers.boxed_answers`): equal as sets
        (every gold value answered, every answered value right; a value equal
        to the whole gold, such as ``\\{2\\} \\cup \\{3\\}``, answers all of it)."""
        answered = list(dict.fromkeys(split_values(answer)))
        if len(answered) > len(gold_values) + self.max_boxes:  # a spray of candidates, not a set
            return _result(1.0, 0.0, reason=f"hedged: {len(answered)} different values", **info)
        matched_gold: set[int] = set()
        for value in answered:
            if hedges(value) and not hedges(gold):  # "3 (or 4)" is not the value 3
                return _result(1.0, 0.0, reason=f"hedged: {value[:100]!r} is several values", **info)
            hits = []
            for i, g in [*enumerate(gold_values), (-1, gold)]:
                if i == -1 and hits:
                    break
                verdict = self.judge(g, value, lenient_decimals=lenient_decimals)
                info["verifier"] = verdict.path
                if verdict.error:
                    return _result(1.0, 0.0, reward_error=verdict.error, **info)
                if verdict.problem:
                    return _result(1.0, 0.0, reason=verdict.problem, **info)
                if verdict.equal:
                    hits.extend([i] if i >= 0 else range(len(gold_values)))
            if not hits:
                return _result(1.0, 0.0, reason=f"wrong answer: {value[:100]!r} is not one of the solutions", **info)
            matched_gold.update(hits)
        missing = len(gold_values) - len(matched_gold)
        if missing:
            return _result(1.0, 0.0, reason=f"wrong answer: {missing} of {len(gold_values)} solutions missing",
                           **info)
        return _result(1.0, 1.0, **info)

    def _time_left(self) -> float:
        """This comparison's limit: ``timeout_s``, or less when the call's budget ends sooner."""
        deadline = _DEADLINE.get()
        return self.timeout_s if deadline is None else min(self.timeout_s, deadline - time.monotonic())

    def _math_verify(self, gold: str, answer: str, lenient_decimals: bool) -> _Verdict:
        left = self._time_left()
        if left <= 0:
            return _Verdict(False, "math-verify", problem=f"verifier timed out: the call took over "
                                                          f"{self.call_timeout_s:g} s in all")
        try:
            reply = self._pool.run({"gold": gold, "pred": answer, "lenient_decimals": lenient_decimals}, left)
        except VerifierUnavailable as e:
            return _Verdict(False, "math-verify", error=str(e))
        except _Timeout:
            return _Verdict(False, "math-verify", problem=f"verifier timed out after {left:.3g} s")
        except _WorkerDied as e:
            return _Verdict(False, "math-verify", problem=f"verifier crashed on the answer ({e})")
        if "error" in reply:
            return _Verdict(False, "math-verify", problem=f"verifier failed on the answer: {reply['error']}")
        if not reply["gold_parsed"]:
            return _Verdict(False, "math-verify", error=f"gold answer {gold!r} could not be parsed by math-verify")
        return _Verdict(bool(reply["equal"]), "math-verify")


def _result(fmt: float, correct: float, **info: Any) -> RewardResult:
    if correct == 0.0 and "reason" not in info and "reward_error" not in info:
        info["reason"] = "wrong answer"
    return RewardResult(correct, {"format": fmt, "correct": correct}, info)


_default: Verifier | None = None
_default_lock = threading.Lock()


def default_verifier() -> Verifier:
    """The process-wide verifier behind :func:`verify` (settings from the
    environment: ``GYM_LLM_MATH_TIMEOUT_S``, ``GYM_LLM_MATH_WORKERS``,
    ``GYM_LLM_MATH_WORKER_MEMORY_MB``)."""
    global _default
    with _default_lock:
        if _default is None:
            workers = os.environ.get("GYM_LLM_MATH_WORKERS")
            _default = Verifier(
                timeout_s=float(os.environ.get("GYM_LLM_MATH_TIMEOUT_S", "5")),
                workers=int(workers) if workers else None,
                memory_mb=int(os.environ.get("GYM_LLM_MATH_WORKER_MEMORY_MB", "2048")),
            )
        return _default


def _forget_default() -> None:
    # In a forked child: the parent's workers and locks are not ours.
    global _default, _default_lock, _spawner
    _default, _default_lock, _spawner = None, threading.Lock(), _Spawner()


def _close_default() -> None:
    if _default is not None:
        _default.close()


os.register_at_fork(after_in_child=_forget_default)
atexit.register(_close_default)


def verify(gold: Any, response: Any, *, lenient_decimals: bool = False) -> RewardResult:
    """Score a model response against a gold answer.

    ``gold``: a bare answer (``"42"``, ``"\\frac{1}{2}"``, ``"(1, 2)"``) or a
    reference solution (GSM8K ``#### 42``, MATH ``\\boxed{...}``).
    ``response``: the model's text (or a message dict, or a list of messages).
    Returns ``RewardResult(score, {"format", "correct"}, info)``: score 1.0
    when the last ``\\boxed{}`` is equivalent to the gold and no other boxed
    answer disagrees, else 0.0 with ``info["reason"]``;
    ``info["reward_error"]`` when the gold cannot be parsed. Numbers compare
    exactly unless ``lenient_decimals`` (a decimal then also matches a value
    that rounds to it). Never raises on any response. Thread-safe; fork-safe.
    """
    return default_verifier()(gold, response, lenient_decimals=lenient_decimals)


def is_expanded(answer: str) -> tuple[bool, str]:
    """:meth:`Verifier.is_expanded` with the process-wide verifier."""
    return default_verifier().is_expanded(answer)


