"""``gym-llm serve ENV_ID``: one gym-llm environment over OpenEnv's protocol.

    gym-llm serve math/Arithmetic-v0 --port 8000 --max-sessions 64 difficulty=0.3

Each WebSocket connection to ``/ws`` is one session with its own environment
instance (made from ``ENV_ID`` and the ``KEY=VALUE`` kwargs, values read as
YAML scalars: ``3`` is an int, ``true`` a bool, ``heldout`` a string). The
messages are OpenEnv's (``openenv.core.env_server.types``): the client sends
``{"type": "reset", "data": {"seed": S, "task_index": K}}`` (both optional),
``{"type": "step", "data": {"message": TEXT, "tool_calls": [...]}}``,
``{"type": "state"}`` and ``{"type": "close"}``; the server answers with an
observation (``{"type": "observation", "data": {"observation": {...},
"reward": R, "done": D}}``), a state, or an error (``{"type": "error",
"data": {"message": ..., "code": ...}}``, OpenEnv's ``WSErrorCode``). The
observation holds ``messages`` (the new chat messages: the prompt at reset,
the environment's reply after a step), ``info`` (the env's info dict) and
``truncated``; ``done`` is terminated or truncated. ``GET /health``,
``/schema`` and ``/metadata`` are OpenEnv's too; ``GET /sessions`` gives the
open and maximum session counts.

Why not OpenEnv's ``HTTPEnvServer`` itself: it runs every session's env in a
thread of its own and closes an idle session's env under a still-open socket;
here every step is the env's ``astep`` on the server's event loop (sandboxed
work is awaited, so one session's jail never holds up another's step), a
disconnect in the middle of a step cancels it (which kills its jail), and an
idle session is told and closed. The wire format is OpenEnv's own models,
serialised by OpenEnv's own ``serialize_observation``, of values first made
JSON-safe by :func:`wire_value`: every reply encodes, whatever an env put in
its messages and info (what the model wrote is never a protocol error).
A session's env is made in a worker thread, so a slow construction (a big
dataset file) never stalls the other sessions.

Limits: ``--max-sessions`` (a connection beyond it gets a ``CAPACITY_REACHED``
error at once, and is closed with code 1013 after the client's first message
or 2 s, so a client that sends before it reads, like OpenEnv's, reads the
error as its reply), ``--idle-timeout-s`` (a session that sends nothing for
that long gets a ``SESSION_ERROR`` and is closed; one whose client takes no
reply for that long, not reading its socket, is closed at once: its env is
closed and its slot freed, and its connection aborted: see
:func:`ws_protocol`), ``--max-message-bytes``
(a bigger WebSocket message closes the connection with code 1009, by
uvicorn). SIGTERM or Ctrl-C closes every session (cancelling steps in flight)
and every env before the process exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import signal
import socket
import struct
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Mapping, Set
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, WebSocket
from gymnasium.error import ResetNeeded
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import (
    Action,
    EnvironmentMetadata,
    HealthResponse,
    HealthStatus,
    Observation,
    SchemaResponse,
    ServerCapacityStatus,
    State,
    WSErrorCode,
    WSErrorResponse,
    WSObservationResponse,
    WSResetMessage,
    WSStateResponse,
    WSStepMessage,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import to_jsonable_python
from starlette.websockets import WebSocketDisconnect

import gym_llm
from gym_llm.apps.env_kwargs import parse_env_kwargs
from gym_llm.envs.core import LLMEnv
from gym_llm.envs.jsonio import utf8_text

__all__ = [
    "GymLLMAction",
    "GymLLMObservation",
    "GymLLMState",
    "ResetData",
    "Session",
    "EnvServer",
    "wire_value",
    "create_app",
    "parse_env_kwargs",
    "add_serve_parser",
    "main",
]

log = logging.getLogger("gym_llm.apps.serve")

#: Default cap on one WebSocket message (uvicorn's own default).
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: How long a refused connection stays open for the client's first message.
REFUSAL_GRACE_S = 2.0
#: WebSocket close codes (RFC 6455): normal, going away (idle, shutdown), try again later.
CLOSE_NORMAL, CLOSE_GOING_AWAY, CLOSE_TRY_AGAIN_LATER = 1000, 1001, 1013
#: Threads that make sessions' envs; their own pool, so a burst of slow
#: constructions never queues the steps of sync envs (``asyncio.to_thread``).
ENV_MAKER_THREADS = 4
#: Nesting kept in a reply's values; a deeper container becomes a string. Far
#: above any env's info, and below the depth JSON readers recurse to (Python's
#: ``json`` stops near 1000, pydantic's serializer at a few hundred).
MAX_WIRE_DEPTH = 100
#: Integers of more bits are written as a string: Python refuses to print
#: integers of more than 4300 digits (``sys.set_int_max_str_digits``).
MAX_WIRE_INT_BITS = 14_000

def wire_value(value: Any, depth: int = MAX_WIRE_DEPTH) -> Any:
    """``value`` as JSON and UTF-8 can carry it: every reply the server sends is
    made of these, so none fails to encode whatever an env returned.

    Text holding surrogates (bytes that were not UTF-8, kept by
    ``surrogateescape``: a file name, a program's output) has each replaced by
    U+FFFD, as :class:`~gym_llm.envs.core.LLMEnv` does to its messages; a
    non-finite float is ``None`` (:mod:`gym_llm.envs.jsonio`'s rule); bytes are
    decoded as UTF-8 (U+FFFD where they are not); mapping keys become text;
    tuples and sets become lists; other objects are what pydantic makes of
    them (an enum's value, a dataclass's fields, ISO dates; ``str`` of the
    rest). A container nested deeper than ``depth`` levels, or holding
    itself, becomes a string saying so; an integer too long to print, its size."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, int):
        return int(value) if value.bit_length() <= MAX_WIRE_INT_BITS else f"<an integer of {value.bit_length()} bits>"
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, bytes | bytearray | memoryview):
        return utf8_text(bytes(value).decode("utf-8", "replace"))
    if isinstance(value, Mapping | list | tuple | Set):
        return _wire_container(value, depth, set())
    try:
        plain = to_jsonable_python(value, fallback=str)
    except Exception:  # a cycle, a depth, a __str__ that raises: its type is all there is to say
        return f"<{type(value).__name__}>"
    return wire_value(plain, depth)


def _wire_container(value: Any, depth: int, path: set[int]) -> Any:
    if depth <= 0:
        return f"<cut: nested deeper than {MAX_WIRE_DEPTH} levels>"
    if id(value) in path:
        return "<cycle>"
    path.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {_wire_key(k): _wire_item(v, depth - 1, path) for k, v in value.items()}
        return [_wire_item(v, depth - 1, path) for v in value]
    finally:
        path.discard(id(value))


def _wire_item(value: Any, depth: int, path: set[int]) -> Any:
    if isinstance(value, Mapping | list | tuple | Set):
        return _wire_container(value, depth, path)
    return wire_value(value, depth)


def _wire_key(key: Any) -> str:
    if isinstance(key, str):
        return utf8_text(key)
    text = wire_value(key, 1)
    return text if isinstance(text, str) else str(text)


class GymLLMAction(Action):
    """One assistant turn: ``message`` (its text) and/or ``tool_calls``
    (OpenAI-format calls). Anything the model can write is accepted; an empty
    turn earns the env's lowest reward with its reason."""

    message: str | None = Field(default=None, description="the assistant message's text")
    tool_calls: list[dict[str, Any]] | None = Field(default=None, description="OpenAI-format tool calls")

    def as_env_action(self) -> dict[str, Any]:
        """The assistant message dict ``LLMEnv.step`` takes."""
        action: dict[str, Any] = {"role": "assistant", "content": self.message}
        if self.tool_calls:
            action["tool_calls"] = self.tool_calls
        return action


class GymLLMObservation(Observation):
    """What a reset or a step returns: the new chat ``messages``, the env's
    ``info`` and whether the episode was ``truncated`` (``done`` and
    ``reward`` are OpenEnv's, beside the observation on the wire)."""

    messages: list[dict[str, Any]] = Field(default_factory=list, description="the new chat messages")
    info: dict[str, Any] = Field(default_factory=dict, description="the env's reset or step info")
    truncated: bool = Field(default=False, description="the episode ended at max_turns")


class GymLLMState(State):
    """A session's state: OpenEnv's ``episode_id`` and ``step_count``, plus
    the env id, task id, turn and whether the episode is over."""

    env_id: str
    task_id: str | None = None
    turn: int = 0
    done: bool = True


class ResetData(BaseModel):
    """The ``data`` of a reset message."""

    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(default=None, ge=0, description="seed of the task draw")
    task_index: int | None = Field(default=None, ge=0, description="the task's index in the split")
    episode_id: str | None = Field(default=None, max_length=255, description="a name for the episode")


def _error(message: str, code: WSErrorCode, **extra: Any) -> str:
    return WSErrorResponse(data=wire_value({"message": message, "code": code, **extra})).model_dump_json()


def _observation_reply(messages: Any, info: Any, *, reward: float | None, done: bool, truncated: bool = False) -> str:
    observation = GymLLMObservation(messages=wire_value(messages), info=wire_value(info),
                                    truncated=truncated, done=done, reward=wire_value(reward))
    return WSObservationResponse(data=serialize_observation(observation)).model_dump_json()


@dataclass
class Session:
    """One WebSocket session: its env, the episode it is in and when it last spoke."""

    env: LLMEnv
    last_activity: float = field(default_factory=time.monotonic)
    episode_id: str | None = None
    step_count: int = 0


class EnvServer:
    """The sessions of one env id: making, stepping and closing their envs.

    ``env_kwargs`` go to :func:`gym_llm.make` for every session; the first
    env is made at construction, so a bad id or kwarg fails before serving.
    A session's env is made in a worker thread (one of
    :data:`ENV_MAKER_THREADS`), never on the event loop. With
    ``idle_timeout_s``, a session also ends when its client takes no reply
    (or idle notice) for that long: every send is bounded by it.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any] | None = None,
        *,
        max_sessions: int = 64,
        idle_timeout_s: float | None = None,
    ):
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        if idle_timeout_s is not None and idle_timeout_s <= 0:
            raise ValueError(f"idle_timeout_s must be > 0, got {idle_timeout_s}")
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self.sessions: dict[str, Session] = {}
        #: Sessions whose env is being made: they hold a slot too.
        self.starting = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._env_makers = ThreadPoolExecutor(ENV_MAKER_THREADS, thread_name_prefix="gym_llm-serve-make")
        probe = self.make_env()
        self.metadata = EnvironmentMetadata(
            name=env_id,
            description=gym_llm.spec(env_id).description or env_id,
            version=gym_llm.__version__,
            documentation_url=None,
        )
        probe.close()

    def make_env(self) -> LLMEnv:
        return gym_llm.make(self.env_id, **self.env_kwargs)

    async def make_env_off_loop(self) -> LLMEnv:
        """:meth:`make_env` in a worker thread, the event loop free meanwhile.
        Cancelled while the thread works, the env it makes is closed once made."""
        made = asyncio.get_running_loop().run_in_executor(self._env_makers, self.make_env)
        try:
            return await asyncio.shield(made)
        except asyncio.CancelledError:
            made.add_done_callback(_close_made_env)
            raise

    @property
    def open_sessions(self) -> int:
        """Slots taken: sessions open or having their env made."""
        return len(self.sessions) + self.starting

    def capacity(self) -> ServerCapacityStatus:
        return ServerCapacityStatus.from_counts(active=self.open_sessions, max_sessions=self.max_sessions)

    # ---------------------------------------------------------------- handlers
    async def reset(self, session: Session, data: dict[str, Any]) -> str:
        request = ResetData.model_validate(data)
        options = {"task_index": request.task_index} if request.task_index is not None else None
        messages, info = await session.env.areset(seed=request.seed, options=options)
        session.episode_id = request.episode_id or str(uuid.uuid4())
        session.step_count = 0
        return _observation_reply(messages, info, reward=None, done=False)

    async def step(self, session: Session, data: dict[str, Any]) -> str:
        action = GymLLMAction.model_validate(data)
        messages, reward, terminated, truncated, info = await session.env.astep(action.as_env_action())
        session.step_count += 1
        return _observation_reply(messages, info, reward=reward, done=terminated or truncated, truncated=truncated)

    def state(self, session: Session) -> str:
        env = session.env.unwrapped
        state = GymLLMState(
            episode_id=session.episode_id,
            step_count=session.step_count,
            env_id=self.env_id,
            task_id=env.task.id if env.task is not None else None,
            turn=env.turn,
            done=env.done,
        )
        return WSStateResponse(data=wire_value(state.model_dump())).model_dump_json()

    async def handle(self, session: Session, raw: str) -> str | None:
        """The reply to one client message, or ``None`` for a close message."""
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as e:  # also bad UTF-8, over-long integers
            return _error(f"Invalid JSON: {e}", WSErrorCode.INVALID_JSON)
        if not isinstance(message, dict):
            return _error(f"a message is a JSON object, got {type(message).__name__}", WSErrorCode.INVALID_JSON)
        kind = message.get("type")
        try:
            if kind == "reset":
                return await self.reset(session, WSResetMessage.model_validate(message).data)
            if kind == "step":
                return await self.step(session, WSStepMessage.model_validate(message).data)
            if kind == "state":
                return self.state(session)
            if kind == "close":
                return None
        except ValidationError as e:
            errors = wire_value(e.errors(include_url=False, include_input=False))
            where = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'data'}: {err['msg']}" for err in errors)
            return _error(f"Invalid {kind} message: {where}", WSErrorCode.VALIDATION_ERROR, errors=errors)
        except ResetNeeded:
            return _error('step before reset: send {"type": "reset"} first', WSErrorCode.EXECUTION_ERROR)
        except Exception as e:  # an env bug answers this message; the session and server go on
            log.exception("%s failed in a %s session", kind, self.env_id)
            return _error(f"{type(e).__name__}: {e}", WSErrorCode.EXECUTION_ERROR)
        known = "reset, step, state, close"
        return _error(f"Unknown message type: {kind!r} (known: {known})", WSErrorCode.UNKNOWN_TYPE)

    # ---------------------------------------------------------------- sessions
    async def serve(self, websocket: WebSocket) -> None:
        """Run one WebSocket session to its end (close message, disconnect,
        idle timeout or shutdown); its env is closed whatever the end."""
        await websocket.accept()
        if self.open_sessions >= self.max_sessions:
            await websocket.send_text(_error(
                f"Server at capacity: {self.open_sessions}/{self.max_sessions} sessions open; retry later",
                WSErrorCode.CAPACITY_REACHED,
                active_sessions=self.open_sessions,
                max_sessions=self.max_sessions,
            ))
            await self._close_after_first_message(websocket, "server at capacity")
            return
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            self.starting += 1
            try:
                env = await self.make_env_off_loop()
            except Exception as e:
                await websocket.send_text(_error(f"could not make {self.env_id}: {e}", WSErrorCode.FACTORY_ERROR))
                await self._close_after_first_message(websocket, "env factory failed")
                return
            finally:
                self.starting -= 1
            session_id = str(uuid.uuid4())
            session = self.sessions[session_id] = Session(env)
            try:
                await self._converse(websocket, session)  # ends the WebSocket its own way
            finally:
                del self.sessions[session_id]
                env.close()
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]

    async def _close_after_first_message(self, websocket: WebSocket, reason: str) -> None:
        # A client that sends before it reads (OpenEnv's: connect, then send the
        # reset) must still find the error as the reply to its first message, not
        # a closed socket: wait for that message (or REFUSAL_GRACE_S), then close.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(websocket.receive(), REFUSAL_GRACE_S)
        with contextlib.suppress(Exception):
            await websocket.close(CLOSE_TRY_AGAIN_LATER, reason)

    async def _deliver(self, sending: Awaitable[None]) -> bool:
        """Await a send (a reply, a close frame); False when the client has
        not taken it within the idle timeout. uvicorn holds a send while the
        connection's write buffer is full, which is for ever when the client
        reads nothing: a timeout is the only way out."""
        try:
            await asyncio.wait_for(sending, self.idle_timeout_s)
        except TimeoutError:
            return False
        return True

    async def _converse(self, websocket: WebSocket, session: Session) -> None:
        # One receive is always pending, even during a step: a disconnect in the
        # middle of a step is seen at once and cancels the step (and its jail).
        # Every ending closes the WebSocket here, or leaves it to uvicorn: a
        # disconnect, or a client that took no reply (no close frame would reach
        # it; ws_protocol's connection aborts the socket).
        receive = asyncio.ensure_future(websocket.receive())
        try:
            while True:
                done, _ = await asyncio.wait({receive}, timeout=self.idle_timeout_s)
                if not done:
                    notice = _error(f"session closed after {self.idle_timeout_s:g} s without a message",
                                    WSErrorCode.SESSION_ERROR)
                    if await self._deliver(websocket.send_text(notice)):
                        await self._deliver(websocket.close(CLOSE_GOING_AWAY, "idle timeout"))
                    return
                frame = receive.result()
                if frame["type"] == "websocket.disconnect":
                    return
                receive = asyncio.ensure_future(websocket.receive())
                session.last_activity = time.monotonic()
                raw = frame.get("text")
                if raw is None:
                    raw = frame.get("bytes") or b""
                work = asyncio.ensure_future(self.handle(session, raw))
                await asyncio.wait({work, receive}, return_when=asyncio.FIRST_COMPLETED)
                if not work.done() and receive.result()["type"] == "websocket.disconnect":
                    work.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await work
                    return
                reply = await work
                if reply is None:  # a close message
                    await self._deliver(websocket.close(CLOSE_NORMAL))
                    return
                if not await self._deliver(websocket.send_text(reply)):
                    log.warning("closed a %s session: its client took no reply in %g s",
                                self.env_id, self.idle_timeout_s)
                    return
                session.last_activity = time.monotonic()
        except WebSocketDisconnect:
            return
        finally:
            receive.cancel()

    async def aclose(self) -> None:
        """Close every session: cancel what it is doing; each closes its env."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._env_makers.shutdown(wait=False, cancel_futures=True)


def _close_made_env(made: asyncio.Future[LLMEnv]) -> None:
    if not made.cancelled() and made.exception() is None:
        made.result().close()


def ws_protocol() -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol (``websockets-sansio``), except that a connection
    whose send the app gave up on is aborted (a TCP reset) once the app is done with
    it. A send waits while the connection's write buffer is full; the app gives up
    (:meth:`EnvServer._deliver`'s timeout cancels it) when the client reads nothing,
    and uvicorn's close would then wait for that buffer to drain, for ever: the silent
    client's socket and its ~64 KiB stayed after its session was freed. The abort
    lingers 0 s, so the kernel drops what it still holds for the client too (a plain
    close of the socket left it in FIN_WAIT1, retrying that data for minutes)."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class AbortingWebSocketProtocol(WebSocketsSansIOProtocol):
        abandoned = False  # the app gave up a send: the client is not reading

        async def send(self, message: Any) -> None:
            try:
                await super().send(message)
            except asyncio.CancelledError:
                self.abandoned = True
                raise

        async def run_asgi(self) -> None:
            await super().run_asgi()
            if self.abandoned:
                sock = self.transport.get_extra_info("socket")
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.transport.abort()

    return AbortingWebSocketProtocol


def create_app(server: EnvServer) -> FastAPI:
    """The FastAPI app of ``server``: ``/ws``, ``/health``, ``/schema``,
    ``/metadata``, ``/sessions``. Its lifespan's end closes every session."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await server.aclose()

    app = FastAPI(title=f"gym-llm {server.env_id}", version=gym_llm.__version__, lifespan=lifespan)

    @app.get("/health", response_model=HealthResponse)
    async def health() -> HealthResponse:
        return HealthResponse(status=HealthStatus.HEALTHY)

    @app.get("/schema", response_model=SchemaResponse)
    async def schema() -> SchemaResponse:
        return SchemaResponse(
            action=GymLLMAction.model_json_schema(),
            observation=GymLLMObservation.model_json_schema(),
            state=GymLLMState.model_json_schema(),
        )

    @app.get("/metadata", response_model=EnvironmentMetadata)
    async def metadata() -> EnvironmentMetadata:
        return server.metadata

    @app.get("/sessions")
    async def sessions() -> dict[str, int]:
        status = server.capacity()
        return {"active_sessions": status.active_sessions, "max_sessions": status.max_sessions}

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await server.serve(websocket)

    return app


# -------------------------------------------------------------------- command
def _add_options(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """The options of ``serve``; ``default=argparse.SUPPRESS`` for the parser
    that reads the options given after ``ENV_ID``."""

    def default_of(v: Any) -> Any:
        return v if default is None else default

    parser.add_argument("--host", default=default_of("127.0.0.1"))
    parser.add_argument("--port", type=int, default=default_of(8000))
    parser.add_argument("--max-sessions", type=int, default=default_of(64),
                        help="open sessions at most; beyond: CAPACITY_REACHED")
    parser.add_argument("--idle-timeout-s", type=float, default=default,
                        help="close a session that sends nothing for this long (default: never)")
    parser.add_argument("--max-message-bytes", type=int, default=default_of(DEFAULT_MAX_MESSAGE_BYTES),
                        help="a bigger WebSocket message closes its connection (code 1009)")
    parser.add_argument("--log-level", default=default_of("warning"))


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand to ``gym-llm``'s subparsers."""
    s = subparsers.add_parser("serve", help="serve one environment over OpenEnv's WebSocket protocol",
                              description="gym-llm serve ENV_ID [options] [KEY=VALUE ...]")
    _add_options(s)
    s.add_argument("env_id")
    # argparse cannot take positionals after options once the first is read, so
    # everything after ENV_ID is read again by _after_env_id: options and KEY=VALUE
    s.add_argument("rest", nargs=argparse.REMAINDER, metavar="KEY=VALUE",
                   help="env kwargs, values read as YAML scalars (options may come among them)")
    s.set_defaults(func=cmd_serve)
    return s


def _after_env_id(args: argparse.Namespace) -> dict[str, Any]:
    """Read the options and env kwargs after ``ENV_ID`` into ``args``; the kwargs."""
    parser = argparse.ArgumentParser(prog="gym-llm serve ENV_ID")
    _add_options(parser, default=argparse.SUPPRESS)
    parser.add_argument("env_kwargs", nargs="*")
    parser.parse_intermixed_args(args.rest, namespace=args)
    return parse_env_kwargs(args.env_kwargs)


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or Ctrl-C; 0 after a clean shutdown."""
    import uvicorn

    try:
        env_kwargs = _after_env_id(args)
    except ValueError as e:
        print(f"error: {e}")
        return 2
    server = EnvServer(args.env_id, env_kwargs, max_sessions=args.max_sessions,
                       idle_timeout_s=args.idle_timeout_s)
    config = uvicorn.Config(
        create_app(server), host=args.host, port=args.port, log_level=args.log_level,
        ws=ws_protocol(), ws_max_size=args.max_message_bytes, timeout_graceful_shutdown=10,
        lifespan="on",
    )
    print(f"serving {args.env_id} on ws://{args.host}:{args.port}/ws (max {args.max_sessions} sessions)", flush=True)
    # uvicorn stops on SIGTERM/SIGINT: it closes every WebSocket (code 1012, which ends
    # each session and its env, cancelling steps in flight), then runs the lifespan's
    # end. Afterwards it re-raises the signal under the handler it found; that
    # handler is this no-op, so the process exits normally and its atexit hooks
    # (the sandbox's resident daemons and staging dirs) run.
    stopped_by: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda sig, frame: stopped_by.append(sig))
    uvicorn.Server(config).run()
    if stopped_by:
        print(f"stopped by {signal.Signals(stopped_by[0]).name}: every session and env closed", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m gym_llm.apps.serve ENV_ID ...``: the same as ``gym-llm serve``."""
    parser = argparse.ArgumentParser(prog="gym-llm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_serve_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["serve", *(argv if argv is not None else __import__("sys").argv[1:])])
    try:
        return args.func(args)
    except gym_llm.UnknownEnvError as e:
        print(f"error: {e}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
