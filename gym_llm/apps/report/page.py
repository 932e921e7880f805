"""The report page: one self-contained HTML file (inline CSS, JS and data).

Contract: :func:`render` turns :class:`~gym_llm.apps.report.data.RunData` into
HTML that needs no network (no CDN, no fonts, no images fetched) and works
opened from disk. The data travels as JSON in a ``<script
type="application/json">`` element (every ``<`` written ``\\u003c``, so no
text of a trajectory can close it); the script draws the curves as SVG and fills the
tables with ``textContent`` only, so model output is never parsed as HTML.

Elements tests and users rely on: each curve is an ``<svg class="chart">``;
the trajectory browser's filters are ``#f-env``, ``#f-split``,
``#f-step-min``, ``#f-step-max``, ``#f-reward-min``, ``#f-reward-max``,
``#f-signal``; its rows are ``tr.traj-row`` and ``#traj-count`` says how many
are shown.
"""

from __future__ import annotations

import datetime
import html
import os
from pathlib import Path

from gym_llm.apps.report.data import RunData
from gym_llm.envs.jsonio import dumps_utf8, finite

__all__ = ["render"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header .sub{opacity:.8;font-size:13px}main{padding:8px 24px 40px}
section{background:#fff;border:1px solid #dde1e7;border-radius:8px;margin:16px 0;padding:12px 16px}
h2{font-size:16px;margin:4px 0 10px}h3{font-size:14px;margin:4px 0}
.notes{background:#fff8e5;border-color:#f0d48a}.notes li{margin:2px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chartbox{flex:0 0 auto}
svg.chart{background:#fff;border:1px solid #eceef2;border-radius:4px}
svg.chart text{font-size:10px;fill:#4a5263}svg.chart .title{font-size:12px;font-weight:600;fill:#1d2330}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #eceef2;padding:4px 6px;text-align:left;
vertical-align:top;font-size:13px}th{background:#f0f2f5;position:sticky;top:0}
tr.traj-row{cursor:pointer}tr.traj-row:hover{background:#eef4ff}tr.traj-row.sel{background:#dce8ff}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:end;margin-bottom:8px}
.filters label{display:flex;flex-direction:column;font-size:12px;color:#4a5263}
.filters input{width:80px}.scroll{max-height:420px;overflow:auto}
.turn{border-left:4px solid #999;margin:8px 0;padding:6px 10px;border-radius:4px;white-space:pre-wrap;
word-break:break-word;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.turn.policy{border-color:#2f6fec;background:#f1f5ff}.turn.env{border-color:#d98a00;background:#fff6e6}
.turn.prompt{border-color:#7b8494;background:#f4f5f7}
.turn .who{font-family:system-ui,sans-serif;font-weight:600;font-size:12px;margin-bottom:4px;display:block}
.sig{display:inline-block;background:#ffe1e1;color:#a00;border-radius:3px;padding:0 4px;margin:0 2px;font-size:12px}
.muted{color:#7b8494}.kv td:first-child{font-weight:600;width:160px}
.pair td{width:33%;white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace;font-size:12px}
select{max-width:260px}
"""

_JS = r"""
"use strict";
const D = JSON.parse(document.getElementById("report-data").textContent);
const COLORS = ["#2f6fec", "#e8590c", "#2b8a3e", "#c2255c", "#5f3dc4", "#0b7285", "#e67700", "#495057"];
const SVGNS = "http://www.w3.org/2000/svg";
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function sv(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = String(text);
  return e;
}
function fmt(x, d) {
  if (x === null || x === undefined || Number.isNaN(x)) return "-";
  if (typeof x !== "number") return String(x);
  return Math.abs(x) >= 1000 ? x.toFixed(0) : x.toFixed(d === undefined ? 3 : d);
}

function drawChart(chart) {
  const W = 420, H = 230, L = 56, R = 10, T = 22, B = 56;
  const svg = sv("svg", {class: "chart", width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-title": chart.title});
  svg.appendChild(sv("text", {x: L, y: 14, class: "title"}, chart.title));
  const pts = chart.series.flatMap(s => s.points);
  if (!pts.length) return svg;
  let [x0, x1] = [Math.min(...pts.map(p => p[0])), Math.max(...pts.map(p => p[0]))];
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  const [y0, y1] = [chart.axis.min, chart.axis.max];  // the y axis and its labels are data.axis()'s
  const X = x => L + (x - x0) / (x1 - x0) * (W - L - R);
  const Y = y => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  svg.appendChild(sv("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#aab"}));
  svg.appendChild(sv("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#aab"}));
  for (const [yv, label] of chart.axis.ticks) {
    svg.appendChild(sv("line", {x1: L, y1: Y(yv), x2: W - R, y2: Y(yv), stroke: "#eef0f3"}));
    svg.appendChild(sv("text", {x: L - 4, y: Y(yv) + 3, "text-anchor": "end", class: "ytick"}, label));
  }
  const xstep = Math.max(1, Math.ceil((x1 - x0) / 6));  // steps are integers: whole-step ticks only
  for (let xv = Math.ceil(x0); xv <= x1; xv += xstep)
    svg.appendChild(sv("text", {x: X(xv), y: H - B + 12, "text-anchor": "middle"}, String(xv)));
  svg.appendChild(sv("text", {x: W - R, y: H - B + 24, "text-anchor": "end"}, "step"));
  chart.series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length];
    const p = s.points.slice().sort((a, b) => a[0] - b[0]);
    svg.appendChild(sv("polyline", {points: p.map(q => `${X(q[0])},${Y(q[1])}`).join(" "), fill: "none",
                                    stroke: c, "stroke-width": 1.6, class: "series"}));
    for (const q of p) {
      const dot = sv("circle", {cx: X(q[0]), cy: Y(q[1]), r: p.length > 60 ? 1.2 : 2.4, fill: c});
      dot.appendChild(sv("title", {}, `${s.name} @ step ${q[0]}: ${fmt(q[1], 4)}`));
      svg.appendChild(dot);
    }
    const lx = L + (i % 3) * 124, ly = H - 18 + Math.floor(i / 3) * 12;
    svg.appendChild(sv("rect", {x: lx, y: ly - 7, width: 8, height: 8, fill: c}));
    svg.appendChild(sv("text", {x: lx + 11, y: ly}, s.name.length > 22 ? s.name.slice(0, 21) + "…" : s.name));
  });
  return svg;
}

function renderCharts() {
  for (const chart of D.charts) {
    const box = document.getElementById("charts-" + chart.group);
    if (!box) continue;
    const div = el("div", {class: "chartbox"});
    div.appendChild(drawChart(chart));
    box.appendChild(div);
  }
  const pick = document.getElementById("any-metric");
  if (!pick) return;
  const names = [...new Set(D.metrics.flatMap(r => Object.keys(r)).filter(k => k !== "step"))].sort();
  for (const n of names) pick.appendChild(el("option", {value: n}, n));
  const show = () => {
    const box = document.getElementById("any-chart");
    box.replaceChildren();
    const m = pick.value;
    if (!m) return;
    box.appendChild(drawChart({title: m, axis: D.axes[m],
                               series: [{name: m, points: D.metrics.filter(r => m in r).map(r => [r.step, r[m]])}]}));
  };
  pick.addEventListener("change", show);
  if (names.length) { pick.value = names.includes("reward/mean") ? "reward/mean" : names[0]; show(); }
}

function options(select, values) {
  for (const v of values) select.appendChild(el("option", {value: v}, v));
}
function num(id) {
  const v = document.getElementById(id).value;
  return v === "" ? null : Number(v);
}
function filtered() {
  const env = document.getElementById("f-env").value, split = document.getElementById("f-split").value;
  const sig = document.getElementById("f-signal").value;
  const smin = num("f-step-min"), smax = num("f-step-max"), rmin = num("f-reward-min"), rmax = num("f-reward-max");
  return D.trajectories.filter(t =>
    (!env || t.env === env) && (!split || t.split === split) &&
    (sig === "" || (sig === "(any)" ? t.signals.length > 0 : sig === "(none)" ? t.signals.length === 0 : t.signals.includes(sig))) &&
    (smin === null || (t.step !== null && t.step >= smin)) && (smax === null || (t.step !== null && t.step <= smax)) &&
    (rmin === null || (t.reward !== null && t.reward >= rmin)) && (rmax === null || (t.reward !== null && t.reward <= rmax)));
}
function showTrajectory(t) {
  const box = document.getElementById("traj-detail");
  box.replaceChildren();
  box.appendChild(el("h3", {}, `${t.env} · task ${t.task} · sample ${t.sample}` + (t.step !== null ? ` · step ${t.step}` : "") + ` · ${t.split}`));
  const kv = el("table", {class: "kv"});
  const add = (k, v) => { const tr = el("tr"); tr.appendChild(el("td", {}, k)); tr.appendChild(el("td", {}, v)); kv.appendChild(tr); };
  add("reward", fmt(t.reward));
  add("strict score", t.strict === null ? (t.old ? "(not recorded: older run)" : "(not strict-graded)") : fmt(t.strict));
  if (t.correct !== null) add("correct", String(t.correct));
  add("reward components", Object.entries(t.components).map(([k, v]) => `${k} ${fmt(v)}`).join(", ") || "(none)");
  for (const [k, v] of Object.entries(t.reasons)) add(k.replace("_", " "), v);
  add("hack signals", t.old ? "(not recorded: older run)" : (t.signals.join(", ") || "(none)"));
  add("file", t.source);
  box.appendChild(kv);
  for (const turn of t.turns) {
    const div = el("div", {class: "turn " + turn.side});
    let who = turn.side === "policy" ? "policy (assistant)" : (turn.side === "env" ? "environment" : "prompt") + ` (${turn.role}${turn.name ? ": " + turn.name : ""})`;
    if (turn.side === "policy" && turn.reward !== null && turn.reward !== undefined) who += ` · turn reward ${fmt(turn.reward)}`;
    div.appendChild(el("span", {class: "who"}, who));
    div.appendChild(document.createTextNode(turn.text));
    box.appendChild(div);
  }
}
function renderRows() {
  const body = document.getElementById("traj-body");
  body.replaceChildren();
  const rows = filtered();
  document.getElementById("traj-count").textContent = String(rows.length);
  for (const t of rows) {
    const tr = el("tr", {class: "traj-row"});
    for (const v of [t.step === null ? "-" : t.step, t.split, t.env, t.task, fmt(t.reward), fmt(t.strict), t.turns.filter(x => x.side === "policy").length]) tr.appendChild(el("td", {}, v));
    const sig = el("td");
    for (const s of t.signals) sig.appendChild(el("span", {class: "sig"}, s));
    tr.appendChild(sig);
    tr.addEventListener("click", () => { for (const r of body.querySelectorAll(".sel")) r.classList.remove("sel"); tr.classList.add("sel"); showTrajectory(t); });
    body.appendChild(tr);
  }
}
function renderBrowser() {
  if (!document.getElementById("traj-body")) return;
  options(document.getElementById("f-env"), [...new Set(D.trajectories.map(t => t.env))].sort());
  options(document.getElementById("f-split"), [...new Set(D.trajectories.map(t => t.split))].sort());
  options(document.getElementById("f-signal"), ["(any)", "(none)", ...[...new Set(D.trajectories.flatMap(t => t.signals))].sort()]);
  for (const id of ["f-env", "f-split", "f-signal", "f-step-min", "f-step-max", "f-reward-min", "f-reward-max"]) {
    document.getElementById(id).addEventListener("input", renderRows);
    document.getElementById(id).addEventListener("change", renderRows);
  }
  renderRows();
}
function renderFirstLast() {
  const body = document.getElementById("fl-body");
  if (!body) return;
  for (const p of D.first_last) {
    const tr = el("tr", {class: "pair"});
    tr.appendChild(el("td", {}, `${p.env} · ${p.task}\n${p.prompt}`));
    tr.appendChild(el("td", {}, `[reward ${fmt(p.first_reward)}]\n${p.first}`));
    tr.appendChild(el("td", {}, `[reward ${fmt(p.last_reward)}]\n${p.last}`));
    body.appendChild(tr);
  }
}
renderCharts();
renderBrowser();
renderFirstLast();
"""


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _fmt(x: object, digits: int = 3) -> str:
    return f"{x:.{digits}f}" if isinstance(x, float) else "-" if x is None else str(x)


def _results_table(results: dict) -> str:
    cols = [("tasks", "n"), ("samples", "num_samples"), ("mean reward", "mean_reward"),
            ("strict mean", "strict_mean"), ("gap", "gap"), ("pass@1", "pass@1"), ("pass@k", "pass@k"),
            ("k", "k"), ("reward errors", "reward_errors")]
    rows = ["<table id='results'><tr><th>environment</th>" + "".join(f"<th>{_e(c)}</th>" for c, _ in cols) + "</tr>"]
    for key, r in results.items():
        if not isinstance(r, dict):
            continue
        rows.append(f"<tr><td>{_e(key)}</td>" + "".join(f"<td>{_e(_fmt(r.get(k)))}</td>" for _, k in cols) + "</tr>")
    return "\n".join(rows) + "</table>"


def render(data: RunData, output: str | os.PathLike | None = None) -> str:
    """The report page of ``data``; links to the run's files are relative
    to where ``output`` (default ``<run_dir>/report.html``) will be."""
    where = Path(output).resolve().parent if output else data.run_dir.resolve()
    payload = {"metrics": data.metrics, "charts": data.charts, "axes": data.axes,
               "trajectories": data.trajectories, "first_last": data.first_last}
    blob = dumps_utf8(finite(payload), allow_nan=False).replace("<", "\\u003c")
    shown, total = len(data.trajectories), data.total_trajectories
    what = {"train": "training run", "eval": "evaluation", "empty": "run directory"}[data.kind]
    steps = [r["step"] for r in data.metrics]
    sub = [f"{what} · {_e(data.run_dir)}"]
    if steps:
        sub.append(f"steps {min(steps)}–{max(steps)}")
    sub.append("generated " + datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"))
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>gym-llm report: "
             f"{_e(data.run_dir.name)}</title><style>{_CSS}</style></head><body>",
             f"<header><h1>gym-llm report: {_e(data.run_dir.name)}</h1><div class='sub'>{' · '.join(sub)}</div>"
             "</header><main>"]
    if data.notes:
        parts.append("<section class='notes' id='notes'><h2>Notes: what this report could not show</h2><ul>"
                     + "".join(f"<li>{_e(n)}</li>" for n in data.notes) + "</ul></section>")
    if data.links:
        links = " · ".join(f"<a href='{_e(os.path.relpath(data.run_dir.resolve() / name, where))}'>{_e(name)}</a>"
                           for name in data.links)
        parts.append(f"<section id='files'><h2>Files</h2>{links}</section>")
    if data.kind == "eval" and data.results:
        parts.append("<section id='results-section'><h2>Results</h2>"
                     "<p class='muted'>strict mean: the env's strict grader over the same samples; gap: mean "
                     "reward minus strict mean over the strict-graded samples (a policy paid for what the "
                     "task did not ask shows a gap above 0).</p>" + _results_table(data.results) + "</section>")
    if data.kind == "train":
        groups = {c["group"] for c in data.charts}
        for group, title, blurb in (
                ("reward", "Reward: train vs held-out", "Per environment: the training reward, the held-out "
                 "eval's and the strict grader's score of a sample of the training rollouts."),
                ("training", "Optimisation: KL, entropy, length, clipping", ""),
                ("monitoring", "Reward hacking: gap and hack signals", "gap = training reward - strict score "
                 "(widening: the policy learns the grader, not the task); hack signals: fraction of each "
                 "env's episodes showing the signature (docs/monitoring.md)."),
                ("schedule", "Schedule: sampling weights, held-out by domain, forgetting", "How often each env "
                 "and each domain was drawn (schedule=adaptive moves it; the weights of a step sum to 1), the "
                 "held-out reward per domain (its envs' latest values), and each held-out curve's drop "
                 "from its best with the forgetting alarm's alerts (docs/training.md).")):
            if group in groups:
                parts.append(f"<section><h2>{_e(title)}</h2><p class='muted'>{_e(blurb)}</p>"
                             f"<div class='charts' id='charts-{group}'></div></section>")
        if data.metrics:
            parts.append("<section><h2>Any metric</h2><select id='any-metric'></select>"
                         "<div id='any-chart'></div></section>")
    if total:
        sampled = (f"{shown} of {total} episodes, sampled evenly over the files (seed 0)" if shown < total
                   else f"all {total} episodes")
        parts.append(
            f"<section id='browser'><h2>Trajectories</h2><p class='muted'>This report holds {sampled}; "
            "<span id='traj-count'></span> match the filters. Click a row for its turns: policy turns (blue) "
            "with their turn reward, environment turns (orange) and the prompt (grey).</p>"
            "<div class='filters'><label>env<select id='f-env'><option value=''>(all)</option></select></label>"
            "<label>split<select id='f-split'><option value=''>(all)</option></select></label>"
            "<label>step ≥<input id='f-step-min' type='number'></label>"
            "<label>step ≤<input id='f-step-max' type='number'></label>"
            "<label>reward ≥<input id='f-reward-min' type='number' step='any'></label>"
            "<label>reward ≤<input id='f-reward-max' type='number' step='any'></label>"
            "<label>hack signal<select id='f-signal'><option value=''>(all)</option></select></label></div>"
            "<div class='scroll'><table><thead><tr><th>step</th><th>split</th><th>env</th><th>task</th>"
            "<th>reward</th><th>strict</th><th>turns</th><th>signals</th></tr></thead>"
            "<tbody id='traj-body'></tbody></table></div><div id='traj-detail'></div></section>")
    if data.first_last:
        s0, s1 = data.first_last_steps or (None, None)
        parts.append(f"<section id='first-last'><h2>Held-out: first eval (step {s0}) vs last (step {s1})</h2>"
                     "<p class='muted'>The same held-out tasks (group and sample); the policy's last answer "
                     "and the episode reward at each, the tasks whose reward changed most first. "
                     f"{len(data.first_last)} tasks.</p>"
                     "<div class='scroll'><table><thead><tr><th>task</th><th>first</th><th>last</th></tr>"
                     "</thead><tbody id='fl-body'></tbody></table></div></section>")
    parts.append(f"</main><script type='application/json' id='report-data'>{blob}</script>"
                 f"<script>{_JS}</script></body></html>")
    return "\n".join(parts)
