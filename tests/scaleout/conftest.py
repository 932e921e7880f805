"""A real multi-node Ray cluster on this machine, one per test module
(``ray.cluster_utils.Cluster``: a head and one more node, one CPU each,
node deaths noticed within ~2 s), with this directory and the trainer tests'
on every node's ``PYTHONPATH`` so workers can import the test environments."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

HERE = Path(__file__).resolve().parent
TRAINER_TESTS = HERE.parent / "trainers"
for _p in (str(HERE), str(TRAINER_TESTS)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import ray_test_envs  # noqa: E402,F401  (registers test/RayTurns-v0 in the driver)

#: The head's custom resource: room for workers that must stay off removable nodes.
HEAD_RESOURCES = {"env_slot": 2}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Cluster]:
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), str(TRAINER_TESTS), old or ""])
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    cluster = Cluster(initialize_head=True, connect=True, head_node_args={
        "num_cpus": 1, "resources": HEAD_RESOURCES, "include_dashboard": False,
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 4,
                           "health_check_initial_delay_ms": 0},
    })
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
