"""Procedural multi-file projects for ``code/Repo-v0``, and their tasks.

A project is a small Python package with a realistic call graph: a data model
(``models``: a record class and a CSV parser), helpers (``utils``), record-level
pricing (``pricing``), list-level services (``services``), reports
(``reports``) and a command line (``cli.run(argv, text)``), plus distractor
functions and modules that take no part in the task. Depth, module count and
distractors grow with ``difficulty``:

* record-level functions stacked on the leaf ``utils.<rec>_amount``: 1-3;
* list-level functions stacked on ``services.group_total``: 1-3 (then the CLI);
* modules: 3 (``models``, ``core``, ``cli``) to 6, plus 0-2 distractor modules;
* distractor functions: 0-4, some named like the functions of the chain.

Task kinds (``kind``):

* ``interface``: the leaf gains a required parameter that every caller, across
  modules up to the command line, must take and pass on; hidden tests call the
  callers with it;
* ``bug``: one function of the call chain is wrong (an operator, an off-by-one,
  a filter); the prompt describes only the symptom, the command line's output on
  a data file against the expected one;
* ``feature``: a new function and a new command line command, from a spec.

The reference solution (``task.answer``: ``{path: full new content}``) and the
task's project are two renderings of one :class:`Spec`. Hidden tests are call
expressions over the package (``services.group_total(models.parse_records(...),
'tools')``) whose expected values are computed at generation, by running the
*reference* (our own generated code, never the model's) on the host; only tests
whose result differs between the untouched project and the reference are
hidden tests (so the untouched project earns 0.0 and the reference 1.0); those
that agree are regression tests of the strict grader.
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import threading
import types
from dataclasses import dataclass, field, replace
from typing import Any

from gym_llm import Draft
from gym_llm.envs.tasks import Plan

from ..jail import plain

__all__ = ["Spec", "draw_spec", "render_project", "evaluate_in_process", "call_expressions", "build_task",
           "generate_repo_task", "same_result", "KINDS"]

KINDS = ("interface", "bug", "feature")

#: Domains: package name, record class, its plural, and its four fields
#: (name, group, value: float, count: int) with value pools.
DOMAINS: tuple[dict[str, Any], ...] = (
    {"pkg": "stockroom", "rec": "Item", "recs": "items", "group": "category", "value": "price",
     "count": "quantity", "groups": ["tools", "garden", "kitchen", "toys", "books"],
     "names": ["hammer", "rake", "kettle", "puzzle", "atlas", "drill", "hose", "ladle", "kite", "novel"]},
    {"pkg": "gradebook", "rec": "Entry", "recs": "entries", "group": "course", "value": "points",
     "count": "credits", "groups": ["algebra", "drawing", "physics", "history", "music"],
     "names": ["ana", "ben", "chloe", "dev", "emma", "farid", "gia", "hugo", "ines", "jon"]},
    {"pkg": "fleetops", "rec": "Trip", "recs": "trips", "group": "region", "value": "fare",
     "count": "riders", "groups": ["north", "south", "harbor", "airport", "center"],
     "names": ["t101", "t102", "t203", "t204", "t305", "t306", "t407", "t408", "t509", "t510"]},
    {"pkg": "payroll", "rec": "Shift", "recs": "shifts", "group": "team", "value": "wage",
     "count": "hours", "groups": ["support", "sales", "ops", "design", "legal"],
     "names": ["kai", "lena", "mo", "nia", "omar", "pia", "quinn", "rosa", "sam", "tess"]},
    {"pkg": "bakery", "rec": "Order", "recs": "orders", "group": "product", "value": "unit_price",
     "count": "boxes", "groups": ["bagels", "scones", "tarts", "rolls", "pies"],
     "names": ["o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9", "o10"]},
)

#: The parameter an ``interface`` task adds, with the prompt's words for it.
INTERFACE_PARAMS = (("rate", "an exchange rate"), ("factor", "a scaling factor"),
                    ("multiplier", "a multiplier"))
FEATURES = ("average", "top", "above")
#: Bugs by function role: (text in the correct body, its wrong replacement).
BUGS: dict[str, tuple[tuple[str, str], ...]] = {
    "leaf": (("{rv}.{value} * {rv}.{count}", "{rv}.{value} * ({rv}.{count} - 1)"),
             ("{rv}.{value} * {rv}.{count}", "{rv}.{value} + {rv}.{count}")),
    "discount": ((">= BULK_MIN", "> BULK_MIN"), ("1 - BULK_DISCOUNT", "1 + BULK_DISCOUNT")),
    "fee": (("amount + HANDLING_FEE", "amount"), ("round(", "int(")),
    "group_total": (("r.{group} == {gv}", "r.{group} != {gv}"),
                    ("for r in {lv} if", "for r in {lv}[1:] if")),
    "by_group": (("group_names({lv})", "group_names({lv})[:-1]"),),
    "render": (("fmt_money(totals[g])", "fmt_money(round(totals[g]))"),),
    "parse": (("lines[1:]", "lines[2:]"), ("float(value)", "int(float(value))")),
    "fmt": ((":.2f", ":.1f"),),
}


@dataclass(frozen=True)
class Spec:
    """Everything a project is rendered from (JSON-able through :meth:`key`)."""

    domain: int
    rec_levels: int          # 1..3: leaf, + discount, + fee
    list_levels: int         # 1..3: group_total, + totals_by_group, + render_report
    n_modules: int           # 3..6
    distractor_modules: int  # 0..2
    distractor_functions: int  # 0..4
    bulk_min: int
    bulk_discount: float
    fee: float
    kind: str
    param: int = 0           # interface: index into INTERFACE_PARAMS
    feature: str = ""        # feature: one of FEATURES
    bug_role: str = ""       # bug: a key of BUGS
    bug_variant: int = 0
    data_seed: int = 0
    # rendering switches: the task's project and the reference differ in these
    with_param: bool = False
    with_feature: bool = False
    with_bug: bool = False

    def key(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("with_")}


@dataclass
class _Fn:
    name: str
    module: str
    source: str
    deps: list[str] = field(default_factory=list)


def _names(spec: Spec) -> dict[str, str]:
    d = DOMAINS[spec.domain]
    rec = d["rec"]
    return {"pkg": d["pkg"], "rec": rec, "recs": d["recs"], "group": d["group"], "value": d["value"],
            "count": d["count"], "rv": rec.lower(), "lv": d["recs"], "gv": d["group"],
            "leaf": f"{rec.lower()}_amount", "p": INTERFACE_PARAMS[spec.param][0]}


def _layout(spec: Spec) -> dict[str, str]:
    """Role -> module, by module count."""
    n = spec.n_modules
    core = {3: "core", 4: "services", 5: "services", 6: "services"}[n]
    return {
        "model": "models",
        "util": "core" if n == 3 else "utils",
        "pricing": "core" if n == 3 else ("utils" if n == 4 else "pricing"),
        "service": core,
        "report": "reports" if n == 6 else core,
        "cli": "cli",
    }


def _functions(spec: Spec) -> list[_Fn]:
    """The project's functions in definition order, each with its module and the
    names of project functions it calls."""
    n = _names(spec)
    mod = _layout(spec)
    param = spec.with_param
    p = n["p"]
    kw = f", *, {p}=1.0" if param else ""     # a caller's new keyword parameter
    pass_on = f", {p}={p}" if param else ""   # ... passed on to what it calls
    fns: list[_Fn] = []

    def bug(role: str, body: str) -> str:
        if spec.with_bug and spec.bug_role == role:
            old, new = (s.format(**n) for s in BUGS[role][spec.bug_variant])
            assert old in body, (role, old)
            body = body.replace(old, new, 1)
        return body

    rec, rv, lv, gv = n["rec"], n["rv"], n["lv"], n["gv"]
    fns.append(_Fn(rec, mod["model"], f'''class {rec}:
    """One {rv}: its name, {n["group"]}, {n["value"]} and {n["count"]}."""

    def __init__(self, name, {n["group"]}, {n["value"]}, {n["count"]}):
        self.name = name
        self.{n["group"]} = {n["group"]}
        self.{n["value"]} = {n["value"]}
        self.{n["count"]} = {n["count"]}

    def __repr__(self):
        return f"{rec}({{self.name!r}}, {{self.{n["group"]}!r}}, {{self.{n["value"]}!r}}, {{self.{n["count"]}!r}})"
'''))
    fns.append(_Fn("parse_records", mod["model"], bug("parse", f'''def parse_records(text):
    """{rec} records from CSV text with a header line: name,{n["group"]},{n["value"]},{n["count"]}."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    records = []
    for line in lines[1:]:
        name, {gv}, value, count = (part.strip() for part in line.split(","))
        records.append({rec}(name, {gv}, float(value), int(count)))
    return records
'''), [rec]))
    fns.append(_Fn("fmt_money", mod["util"], bug("fmt", '''def fmt_money(amount):
    """An amount with two decimals."""
    return f"{amount:.2f}"
''')))
    fns.append(_Fn("group_names", mod["util"], f'''def group_names({lv}):
    """The distinct {n["group"]} names, sorted."""
    return sorted({{r.{n["group"]} for r in {lv}}})
'''))
    leaf_params = f"{rv}, {p}" if param else rv
    leaf_times = f" * {p}" if param else ""
    fns.append(_Fn(n["leaf"], mod["util"], bug("leaf", f'''def {n["leaf"]}({leaf_params}):
    """What one {rv} amounts to: {n["value"]} times {n["count"]}{" times " + p if param else ""}."""
    return {rv}.{n["value"]} * {rv}.{n["count"]}{leaf_times}
''')))
    top_rec = n["leaf"]
    if spec.rec_levels >= 2:
        fns.append(_Fn("discounted_amount", mod["pricing"], bug("discount", f'''def discounted_amount({rv}{kw}):
    """The amount of one {rv}, with the bulk discount from BULK_MIN {n["count"]} on."""
    amount = {top_rec}({rv}{", " + p if param else ""})
    if {rv}.{n["count"]} >= BULK_MIN:
        amount = amount * (1 - BULK_DISCOUNT)
    return amount
'''), [top_rec]))
        top_rec = "discounted_amount"
    if spec.rec_levels >= 3:
        fns.append(_Fn("billed_amount", mod["pricing"], bug("fee", f'''def billed_amount({rv}{kw}):
    """The billed amount of one {rv}: discounted, plus the handling fee, in cents precision."""
    amount = discounted_amount({rv}{pass_on})
    return round(amount + HANDLING_FEE, 2)
'''), [top_rec]))
        top_rec = "billed_amount"
    call_rec = f"{top_rec}(r, {p})" if param and top_rec == n["leaf"] else f"{top_rec}(r{pass_on})"
    fns.append(_Fn("group_total", mod["service"], bug("group_total", f'''def group_total({lv}, {gv}{kw}):
    """The total amount of the {lv} of one {n["group"]}, rounded to cents."""
    return round(sum({call_rec} for r in {lv} if r.{gv} == {gv}), 2)
'''), [top_rec]))
    top_list = "group_total"
    if spec.list_levels >= 2:
        fns.append(_Fn("totals_by_group", mod["report"], bug("by_group", f'''def totals_by_group({lv}{kw}):
    """{{{n["group"]}: total}} for every {n["group"]}, in name order."""
    return {{g: group_total({lv}, g{pass_on}) for g in group_names({lv})}}
'''), ["group_total", "group_names"]))
        top_list = "totals_by_group"
    if spec.list_levels >= 3:
        fns.append(_Fn("render_report", mod["report"], bug("render", f'''def render_report({lv}{kw}):
    """One line per {n["group"]}: "<{n["group"]}>: <total>"."""
    totals = totals_by_group({lv}{pass_on})
    return "\\n".join(f"{{g}}: {{fmt_money(totals[g])}}" for g in totals)
'''), ["totals_by_group", "fmt_money"]))
        top_list = "render_report"
    if spec.with_feature:
        fns += _feature(spec, n, mod, top_rec)
    fns.append(_cli(spec, n, mod, top_list, pass_on))
    return fns


def _feature(spec: Spec, n: dict[str, str], mod: dict[str, str], top_rec: str) -> list[_Fn]:
    """The ``feature`` task's new function (``feature`` tasks never add the interface parameter)."""
    lv, gv = n["lv"], n["gv"]
    if spec.feature == "average":
        return [_Fn("group_average", mod["service"], f'''def group_average({lv}, {gv}):
    """The mean amount of the {lv} of one {n["group"]}, rounded to cents (0.0 when it has none)."""
    members = [r for r in {lv} if r.{gv} == {gv}]
    if not members:
        return 0.0
    return round(group_total(members, {gv}) / len(members), 2)
''', ["group_total"])]
    if spec.feature == "top":
        return [_Fn("top_groups", mod["report"], f'''def top_groups({lv}, n):
    """The n {n["group"]} names with the largest totals, largest first (ties: by name)."""
    totals = {{g: group_total({lv}, g) for g in group_names({lv})}}
    return sorted(totals, key=lambda g: (-totals[g], g))[:n]
''', ["group_total", "group_names"])]
    return [_Fn(f"{lv}_above", mod["service"], f'''def {lv}_above({lv}, threshold):
    """The names of the {lv} whose amount is above threshold, sorted."""
    return sorted(r.name for r in {lv} if {top_rec}(r) > threshold)
''', [top_rec])]


def _cli(spec: Spec, n: dict[str, str], mod: dict[str, str], top_list: str, pass_on: str) -> _Fn:
    lv, p = n["lv"], n["p"]
    report = {"group_total": f"'\\n'.join(f\"{{g}}: {{fmt_money(group_total({lv}, g{pass_on}))}}\" "
                             f"for g in group_names({lv}))",
              "totals_by_group": f"'\\n'.join(f\"{{g}}: {{fmt_money(v)}}\" for g, v in "
                                 f"totals_by_group({lv}{pass_on}).items())",
              "render_report": f"render_report({lv}{pass_on})"}[top_list]
    deps = ["parse_records", "fmt_money", "group_total", top_list, "group_names"]
    options = ""
    if spec.with_param:
        options = f'''    {p} = 1.0
    if "--{p}" in argv:
        at = argv.index("--{p}")
        {p} = float(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
'''
    extra = ""
    if spec.with_feature:
        if spec.feature == "average":
            extra = f'''    if command == "average":
        return fmt_money(group_average({lv}, argv[1]{pass_on}))
'''
            deps.append("group_average")
        elif spec.feature == "top":
            extra = f'''    if command == "top":
        return "\\n".join(top_groups({lv}, int(argv[1]){pass_on}))
'''
            deps.append("top_groups")
        else:
            extra = f'''    if command == "above":
        return "\\n".join({lv}_above({lv}, float(argv[1]){pass_on}))
'''
            deps.append(f"{lv}_above")
    return _Fn("run", mod["cli"], f'''def run(argv, text):
    """Run one command on CSV text and return its output.

    Commands: "total <{n["group"]}>", "report"{_feature_usage(spec)}.
    """
{options}    {lv} = parse_records(text)
    command = argv[0] if argv else "report"
    if command == "total":
        return fmt_money(group_total({lv}, argv[1]{pass_on}))
    if command == "report":
        return {report}
{extra}    raise SystemExit(f"unknown command: {{command}}")


def main(argv=None):
    """python -m {n["pkg"]}.cli DATA_FILE [COMMAND ...]"""
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        print(run(argv[1:], f.read()))


if __name__ == "__main__":
    main()
''', deps)


def _feature_usage(spec: Spec) -> str:
    if not spec.with_feature:
        return ""
    return {"average": ', "average <group>"', "top": ', "top <n>"', "above": ', "above <amount>"'}[spec.feature]


_DISTRACTORS = (
    ("count_{lv}", "def count_{lv}({lv}):\n    \"\"\"How many {lv} there are.\"\"\"\n    return len({lv})\n"),
    ("{rv}_label", "def {rv}_label({rv}):\n    \"\"\"A display label for one {rv}.\"\"\"\n"
                   "    return f\"{{{rv}.name}} ({{{rv}.{group}}})\"\n"),
    ("largest_{rv}", "def largest_{rv}({lv}):\n    \"\"\"The {rv} with the largest {count}, or None.\"\"\"\n"
                     "    return max({lv}, key=lambda r: r.{count}, default=None)\n"),
    ("{rv}_amount_estimate", "def {rv}_amount_estimate({rv}):\n    \"\"\"A rough amount, for display only "
                             "(not used in totals).\"\"\"\n    return round({rv}.{value}) * {rv}.{count}\n"),
    ("names_in", "def names_in({lv}, {gv}):\n    \"\"\"The names of the {lv} of one {group}.\"\"\"\n"
                 "    return [r.name for r in {lv} if r.{gv} == {gv}]\n"),
    ("to_csv", "def to_csv({lv}):\n    \"\"\"The {lv} back as CSV text.\"\"\"\n    rows = [\"name,{group},{value},{count}\"]\n"
               "    rows += [f\"{{r.name}},{{r.{group}}},{{r.{value}}},{{r.{count}}}\" for r in {lv}]\n"
               "    return \"\\n\".join(rows)\n"),
)
_DISTRACTOR_MODULES = ("validators", "export")


def render_project(spec: Spec) -> dict[str, str]:
    """The project's files (``{path: content}``): the package, a README, a data
    file and the visible tests are added by :func:`generate_repo_task`."""
    n = _names(spec)
    pkg = n["pkg"]
    fns = _functions(spec)
    rng = random.Random(f"distractors|{spec.key()}")
    modules = list(dict.fromkeys(f.module for f in fns))
    extra_modules = list(_DISTRACTOR_MODULES[: spec.distractor_modules])
    for i, (name, src) in enumerate(rng.sample(_DISTRACTORS, spec.distractor_functions)):
        where = extra_modules[i % len(extra_modules)] if extra_modules and i % 2 == 0 else rng.choice(modules[:-1])
        fns.insert(len(fns) - 1, _Fn(name.format(**n), where, src.format(**n)))
    order = [m for m in ["models", "utils", "core", "pricing", "services", "reports", *extra_modules, "cli"]
             if any(f.module == m for f in fns)]
    where = {f.name: f.module for f in fns}
    files = {f"{pkg}/__init__.py": f'"""{pkg}: {n["recs"]} by {n["group"]}, their amounts and reports."""\n'}
    for m in order:
        own = [f for f in fns if f.module == m]
        deps: dict[str, list[str]] = {}
        for f in own:
            for d in f.deps:
                if where[d] != m and d not in deps.get(where[d], []):
                    deps.setdefault(where[d], []).append(d)
        lines = [f'"""{pkg}.{m}."""', ""]
        if m == "cli":
            lines.insert(2, "import sys\n")
        for dm in sorted(deps, key=order.index):
            lines.append(f"from .{dm} import {', '.join(sorted(deps[dm]))}")
        if deps:
            lines += ["", ""]
        body = "\n\n".join(f.source for f in own)
        consts = []
        if "BULK_MIN" in body:
            consts += [f"BULK_MIN = {spec.bulk_min}", f"BULK_DISCOUNT = {spec.bulk_discount}"]
        if "HANDLING_FEE" in body:
            consts.append(f"HANDLING_FEE = {spec.fee}")
        if consts:
            lines += [*consts, "", ""]
        files[f"{pkg}/{m}.py"] = "\n".join(lines) + "\n" + body.rstrip("\n") + "\n"
    return files


# ------------------------------------------------------------- evaluation
_load_lock = threading.Lock()
_load_counter = itertools.count()


def evaluate_in_process(files: dict[str, str], pkg: str, exprs: list[str]) -> list[dict[str, Any]]:
    """Run the call expressions on a project *we generated* (never on a model's
    code: that runs only in the sandbox), loaded from memory; each result as
    the hidden runner reports it: ``{"ok": True, "v": plain value}`` or
    ``{"ok": False, "e": exception class name}``."""
    with _load_lock:
        alias = f"_gym_llm_repo_{next(_load_counter)}"
        root = types.ModuleType(alias)
        root.__path__ = []
        sys.modules[alias] = root
        try:
            namespace: dict[str, Any] = {}
            for path in _module_order(files, pkg):
                name = path[len(pkg) + 1:-3]
                module = types.ModuleType(f"{alias}.{name}")
                module.__package__ = alias
                sys.modules[module.__name__] = module
                exec(compile(files[path], path, "exec"), module.__dict__)
                namespace[name] = module
            return [_evaluate(expr, namespace) for expr in exprs]
        finally:
            for name in [m for m in sys.modules if m == alias or m.startswith(alias + ".")]:
                del sys.modules[name]


def _module_order(files: dict[str, str], pkg: str) -> list[str]:
    """Module paths with each after the modules it imports from (relative imports only)."""
    paths = [p for p in files if p.startswith(pkg + "/") and p.endswith(".py") and not p.endswith("__init__.py")]
    needs = {p: {f"{pkg}/{line.split()[1][1:]}.py" for line in files[p].splitlines()
                 if line.startswith("from .")} for p in paths}
    out: list[str] = []
    while len(out) < len(paths):
        out += [p for p in sorted(paths) if p not in out and needs[p] <= set(out)][:1]
    return out


def _evaluate(expr: str, namespace: dict[str, Any]) -> dict[str, Any]:
    try:
        value = eval(expr, dict(namespace))  # noqa: S307 - our own expression on our own code
    except BaseException as e:  # noqa: BLE001 - SystemExit is a result too
        return {"ok": False, "e": type(e).__name__}
    return {"ok": True, "v": plain.encode(value)}


def same_result(expected: dict[str, Any], got: Any) -> bool:
    """Whether a runner result ``got`` (untrusted JSON) matches ``expected``."""
    if not isinstance(got, dict) or got.get("ok") is not expected["ok"]:
        return False
    if not expected["ok"]:
        return got.get("e") == expected["e"]
    try:
        return plain.plain_equal(plain.decode(expected["v"]), plain.decode(got.get("v")))
    except (ValueError, TypeError, RecursionError):
        return False


# ---------------------------------------------------------------- tasks
def draw_spec(rng: random.Random, difficulty: float, kind: str | None = None) -> Spec:
    """A project and task kind at ``difficulty`` (0..1)."""
    d = difficulty
    kind = kind or rng.choice(KINDS)
    if kind not in KINDS:
        raise ValueError(f"unknown task kind {kind!r}: expected one of {KINDS}")
    rec_levels = 1 + (rng.random() < d * 1.2) + (rng.random() < d - 0.3)
    list_levels = 1 + (rng.random() < d * 1.2) + (rng.random() < d - 0.3)
    n_modules = min(6, 3 + int(d * 3 + rng.random()))
    spec = Spec(
        domain=rng.randrange(len(DOMAINS)), rec_levels=rec_levels, list_levels=list_levels,
        n_modules=n_modules, distractor_modules=int(d * 2.5 * rng.random() + (d >= 0.9)),
        distractor_functions=min(4, int(d * 5 * rng.random() + d * 1.5)), bulk_min=rng.randrange(3, 8),
        bulk_discount=rng.choice([0.05, 0.1, 0.15, 0.2, 0.25]), fee=rng.choice([0.5, 1.0, 1.25, 2.0, 2.5]),
        kind=kind, data_seed=rng.randrange(10**9))
    if kind == "interface":
        spec = replace(spec, param=rng.randrange(len(INTERFACE_PARAMS)))
    elif kind == "feature":
        spec = replace(spec, feature=rng.choice(FEATURES))
    else:
        roles = ["leaf", "parse", "group_total", "fmt"]
        roles += ["discount"] * (rec_levels >= 2) + ["fee"] * (rec_levels >= 3)
        roles += ["by_group"] * (list_levels >= 2) + ["render"] * (list_levels >= 3)
        # deeper bugs are likelier at higher difficulty
        deep = [r for r in roles if r in ("leaf", "discount", "fee", "parse")]
        role = rng.choice(deep if rng.random() < d else roles)
        spec = replace(spec, bug_role=role, bug_variant=rng.randrange(len(BUGS[role])))
    return spec


def _dataset(spec: Spec, rng: random.Random, size: int) -> str:
    d = DOMAINS[spec.domain]
    groups = rng.sample(d["groups"], rng.randrange(2, 5))
    rows = [f"name,{d['group']},{d['value']},{d['count']}"]
    for name in rng.sample(d["names"], size):
        count = rng.choice([1, 2, spec.bulk_min - 1, spec.bulk_min, spec.bulk_min + 2, rng.randrange(1, 12)])
        value = rng.choice([rng.randrange(1, 40) + rng.choice([0, 0.25, 0.5, 0.75, 0.99]), float(rng.randrange(2, 30))])
        rows.append(f"{name},{rng.choice(groups)},{value},{count}")
    return "\n".join(rows) + "\n"


def call_expressions(spec: Spec, rng: random.Random, n_data: int) -> list[str]:
    """Candidate call expressions: every public function of the chain (and the
    feature), on ``n_data`` fresh data sets."""
    ref = replace(spec, with_param=spec.kind == "interface", with_feature=spec.kind == "feature")
    n, mod = _names(spec), _layout(spec)
    names = {f.name: f.module for f in _functions(ref)}
    p = n["p"]
    out = []
    for _ in range(n_data):
        text = _dataset(spec, rng, rng.randrange(3, 8))
        data = f"{mod['model']}.parse_records({text!r})"
        groups = sorted({line.split(",")[1] for line in text.strip().splitlines()[1:]})
        g = rng.choice(groups)
        kw = f", {p}={rng.choice([0.5, 2.0, 1.5, 3.0])}" if spec.kind == "interface" else ""
        opt = [f"--{p}", str(rng.choice([0.5, 2.0, 1.5]))] if spec.kind == "interface" else []
        out.append(f"len({data})")
        out.append(f"[(r.name, r.{n['value']}, r.{n['count']}) for r in {data}]")
        leaf_args = f"{data}[0]" + (f", {rng.choice([0.5, 2.0, 3.0])}" if spec.kind == "interface" else "")
        out.append(f"{names[n['leaf']]}.{n['leaf']}({leaf_args})")
        for fn in ("discounted_amount", "billed_amount"):
            if fn in names:
                out.append(f"[{names[fn]}.{fn}(r{kw}) for r in {data}]")
        out.append(f"{names['group_total']}.group_total({data}, {g!r}{kw})")
        for fn in ("totals_by_group", "render_report"):
            if fn in names:
                out.append(f"{names[fn]}.{fn}({data}{kw})")
        out.append(f"{names['fmt_money']}.fmt_money({rng.randrange(1, 999) + rng.choice([0.5, 0.25, 0.125, 0.0])})")
        out.append(f"cli.run({['report', *opt]!r}, {text!r})")
        out.append(f"cli.run({['total', g, *opt]!r}, {text!r})")
        if spec.kind == "feature":
            arg = {"average": repr(g), "top": str(rng.randrange(1, 4)), "above": str(rng.randrange(5, 60))}[spec.feature]
            fn = {"average": "group_average", "top": "top_groups", "above": f"{n['lv']}_above"}[spec.feature]
            out.append(f"{names[fn]}.{fn}({data}, {arg}{kw})")
            out.append(f"cli.run({[spec.feature, arg.strip(chr(39))]!r}, {text!r})")
    return out


def _issue_text(spec: Spec, task_files: dict[str, str], ref_files: dict[str, str], rng: random.Random) -> str:
    n = _names(spec)
    pkg, p = n["pkg"], n["p"]
    if spec.kind == "interface":
        words = INTERFACE_PARAMS[spec.param][1]
        return (f"`{n['leaf']}` must take {words}. Change `{n['leaf']}({n['rv']})` to "
                f"`{n['leaf']}({n['rv']}, {p})`: a required second parameter `{p}` (a float) by which the "
                f"amount is multiplied. Every function of the package that calls `{n['leaf']}`, directly or "
                f"through other functions, must accept a keyword argument `{p}` (default 1.0) and pass it on, "
                f"so that totals and reports come out multiplied by it; with `{p}=1.0` nothing changes. "
                f"The command line (`{pkg}.cli.run(argv, text)`) accepts the option `--{p} R` anywhere in "
                f"its arguments.")
    if spec.kind == "feature":
        g = n["group"]
        return {
            "average": f"Add `group_average({n['lv']}, {g})` next to `group_total`: the mean amount of the "
                       f"{n['lv']} of one {g} (their `group_total` divided by how many there are), rounded to "
                       f"cents, and 0.0 for a {g} with none. Add the command line command `average <{g}>` "
                       f"(`{pkg}.cli.run(['average', '<{g}>'], text)`), which prints it with two decimals.",
            "top": f"Add `top_groups({n['lv']}, n)` to the module of the reports: the names of the n {g}s with "
                   f"the largest totals (as `group_total` computes them), largest first, ties in name order. "
                   f"Add the command line command `top <n>`, which prints those names one per line.",
            "above": f"Add `{n['lv']}_above({n['lv']}, threshold)` next to `group_total`: the sorted names "
                     f"of the {n['lv']} whose amount (the same per-{n['rv']} amount that `group_total` adds "
                     f"up) is above `threshold`. Add the command line command `above <amount>`, which prints "
                     f"those names one per line.",
        }[spec.feature]
    for _ in range(50):
        text = _dataset(spec, rng, rng.randrange(4, 8))
        for argv in (["report"], *(["total", g] for g in sorted({row.split(",")[1] for row in text.split()[1:]}))):
            expr = f"cli.run({argv!r}, {text!r})"
            got, want = (evaluate_in_process(f, pkg, [expr])[0] for f in (task_files, ref_files))
            if got != want:
                return (f"Wrong numbers from the command line. With this `data.csv`:\n\n```\n{text}```\n\n"
                        f"`python -m {pkg}.cli data.csv {' '.join(argv)}` prints:\n\n```\n{_shown(got)}\n```\n\n"
                        f"but it should print:\n\n```\n{_shown(want)}\n```")
    raise ValueError("no data set shows the bug")  # a bug that never shows: the generator redraws


def _shown(result: dict[str, Any]) -> str:
    return result["v"] if result["ok"] else f"an error ({result['e']})"


def _visible_tests(pkg: str, modules: list[str], cases: list[tuple[str, dict[str, Any]]]) -> str:
    used = sorted(m for m in modules if any(re.search(rf"\b{m}\.", e) for e, _ in cases))
    lines = [f'"""Tests of {pkg} (run: python3 -m unittest discover -s tests)."""', "",
             "import unittest", "", f"from {pkg} import {', '.join(used)}", "", "",
             f"class Test{pkg.title()}(unittest.TestCase):"]
    for i, (expr, result) in enumerate(cases):
        lines += [f"    def test_{i}(self):",
                  f"        self.assertEqual({expr}, {plain.decode(result['v'])!r})", ""]
    return "\n".join(lines).rstrip() + "\n"


def build_task(spec: Spec) -> Draft:
    """The :class:`~gym_llm.Draft` of ``spec``'s task."""
    n = _names(spec)
    pkg = n["pkg"]
    task_spec = replace(spec, with_bug=spec.kind == "bug")
    ref_spec = replace(spec, with_param=spec.kind == "interface", with_feature=spec.kind == "feature")
    task_files, ref_files = render_project(task_spec), render_project(ref_spec)
    rng = random.Random(f"data|{spec.data_seed}")
    exprs = call_expressions(spec, rng, 6)
    before = evaluate_in_process(task_files, pkg, exprs)
    after = evaluate_in_process(ref_files, pkg, exprs)
    if not all(r["ok"] or r["e"] != "NameError" for r in after):
        raise AssertionError("a test expression names nothing")  # a generator bug, never a model's
    fail_to_pass = [(e, a) for e, b, a in zip(exprs, before, after, strict=True) if b != a and a["ok"]]
    pass_to_pass = [(e, a) for e, b, a in zip(exprs, before, after, strict=True) if b == a and a["ok"]]
    if len(fail_to_pass) < 2:
        raise ValueError("too few tests tell the solution apart")
    # the first third of the data sets are the training hidden set; the strict grader takes all
    cut = max(1, len(fail_to_pass) // 3)
    visible = ([c for c in pass_to_pass if c[0].startswith("cli.")][:2]
               + [c for c in pass_to_pass if not c[0].startswith(("cli.", "len(", "["))][:2])
    issue = _issue_text(spec, task_files, ref_files, rng)
    modules = sorted(p[len(pkg) + 1:-3] for p in task_files if p.endswith(".py") and not p.endswith("__init__.py"))
    readme = (f"# {pkg}\n\n{n['recs'].title()} by {n['group']}, their amounts and reports.\n\n"
              f"    python -m {pkg}.cli data.csv report\n    python -m {pkg}.cli data.csv total <{n['group']}>\n\n"
              "Tests: `python3 -m unittest discover -s tests`.\n")
    project = {**task_files, "README.md": readme, f"tests/test_{pkg}.py": _visible_tests(pkg, modules, visible)}
    answer = {path: text for path, text in ref_files.items() if task_files.get(path) != text}
    listing = "\n".join(sorted(project))
    prompt = (f"You are working in the repository of the Python package `{pkg}` (in /work).\n\n"
              f"## Issue\n\n{issue}\n\n## Files\n\n{listing}\n")
    metadata = {
        "kind": spec.kind, "mode": "expressions", "package": pkg, "roots": [pkg], "modules": modules,
        "files": project,
        "hidden": [{"expr": e, "expected": a} for e, a in fail_to_pass[:cut]],
        "strict": [{"expr": e, "expected": a} for e, a in fail_to_pass + pass_to_pass],
        "visible": [{"expr": e, "expected": a} for e, a in visible],
        "test_files": [f"tests/test_{pkg}.py"],
        "spec": spec.key(),
        "difficulty": {"modules": len(modules), "depth": spec.rec_levels + spec.list_levels + 1,
                       "distractors": spec.distractor_modules + spec.distractor_functions},
    }
    return Draft(prompt, answer, metadata)


def generate_repo_task(rng: random.Random, difficulty: float, kind: str | None = None) -> Plan:
    """A :class:`~gym_llm.Plan` (the split follows the spec) for
    :class:`~gym_llm.ProceduralTasks`; a spec whose bug never shows, or whose
    tests cannot tell the solution apart, is redrawn."""
    for _ in range(100):
        spec = draw_spec(rng, difficulty, kind)
        try:
            draft = build_task(spec)
        except ValueError:
            continue
        return Plan(spec.key(), lambda draft=draft: draft)
    raise RuntimeError("100 specs in a row made no task")  # a generator bug
