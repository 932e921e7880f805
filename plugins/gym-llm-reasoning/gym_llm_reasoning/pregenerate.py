"""Fill the reasoning entry cache ahead of a run (:func:`gym_llm_reasoning.families.pregenerate`).

    python -m gym_llm_reasoning.pregenerate 'reasoning/*' --difficulty 0 0.5 --jobs 8
    python -m gym_llm_reasoning.pregenerate reasoning/Puzzle24-v0 reasoning/Countdown-v0 --blocks 4

Every (id, difficulty, seed block) is one job; ``--jobs`` processes run them.
A block is 500 entries; an env draws from all 16 blocks, so a partly filled
cache still generates the rest on first use. Ids are patterns as in a
mixture (``reasoning/*``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

from gym_llm.runtime.mixture import expand_ids

from .envs import BLOCKS
from .families import family_of, pregenerate


def _job(job: tuple[str, float, int]) -> tuple[str, float, int, int, float]:
    family, difficulty, block = job
    started = time.perf_counter()
    failed = pregenerate(family, difficulty, range(block, block + 1))
    return family, difficulty, block, failed, time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m gym_llm_reasoning.pregenerate", description=__doc__.split("\n")[0])
    ap.add_argument("ids", nargs="+", help="reasoning/ ids or patterns (reasoning/*)")
    ap.add_argument("--difficulty", type=float, nargs="+", default=[0.0], help="difficulties (the env kwarg)")
    ap.add_argument("--blocks", type=int, default=BLOCKS, help=f"seed blocks from 0 (an env uses {BLOCKS})")
    ap.add_argument("--jobs", type=int, default=1, help="processes")
    args = ap.parse_args(argv)
    try:
        families = [family_of(i) for pattern in args.ids for i in expand_ids(pattern)]
    except (KeyError, ValueError) as e:
        ap.error(f"not a reasoning/ id or pattern: {e}")
    jobs = [(f, d, b) for f in dict.fromkeys(families) for d in args.difficulty for b in range(args.blocks)]
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for n, (family, difficulty, block, failed, seconds) in enumerate(pool.imap_unordered(_job, jobs), 1):
            note = f", {failed} not generated (the generator raised)" if failed else ""
            print(f"[{n}/{len(jobs)}] {family} difficulty {difficulty:g} block {block}: {seconds:.1f} s{note}",
                  flush=True)


if __name__ == "__main__":
    main()
