"""The walk rehearsal the tests and benches share: the real processes, the scripted walk, its records in one folder.

The simulator, the state estimator, the safety monitor and the policy node start as the launch file starts
them; an operator stands the robot up and walks it through `segments` (the walk test's by default), while
an optional `while_walking(group, operator, done)` acts on the processes from WALK on (a bench's stalls,
say). `workdir` keeps what a judge reads afterwards: session.npz (the operator's record), sim_log.npz (the
simulator's ground truth), fault_log.jsonl (the monitor's) and logs/ (every process's output).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

from surrogait_rehearsal.demo import run_session, walk_test_segments
from surrogait_rehearsal.harness.operator import Operator, Segment, SessionError
from surrogait_rehearsal.harness.processes import (
    REHEARSAL_NICENESS,
    ProcessGroup,
    launch_rehearsal,
    link_params,
    shipped_policy_path,
    sim_node,
)

WhileWalking = Callable[[ProcessGroup, Operator, threading.Event], None]


@dataclasses.dataclass
class WalkOutcome:
    error: str  # why the session stopped early; "" when it completed
    process_logs: str  # the tail of every process's log, kept when it stopped early


def walk_overrides(workdir: Path, robot: str, domain: int, policy: Path, motor_model: str | None = None,
                   sim_params: dict | None = None) -> dict[str, dict]:
    """Each node's parameters for a walk rehearsal whose records go to `workdir`."""
    link = link_params(robot, domain)
    sim = sim_node(robot)
    return {sim: {**link[sim], "log_path": str(workdir / "sim_log.npz"), "video_path": "",
                  **({"motor_model": motor_model} if motor_model is not None else {}), **(sim_params or {})},
            "estimator_node": link["estimator_node"],
            "safety_monitor": {**link["safety_monitor"], "policy_path": str(policy),
                               "fault_log_path": str(workdir / "fault_log.jsonl")},
            "policy_node": {**link["policy_node"], "policy_path": str(policy)}}


def rehearse_walk(workdir: Path, *, domain: int, robot: str = "go2", policy: Path | None = None,
                  motor_model: str | None = "driver", sim_params: dict | None = None,
                  segments: list[Segment] | None = None, while_walking: WhileWalking | None = None,
                  log: Callable[[str], None] = print, operator_name: str = "surrogait_demo") -> WalkOutcome:
    """Run the walk rehearsal once; its records are in `workdir` afterwards, whether it completed or not."""
    overrides = walk_overrides(workdir, robot, domain, policy or shipped_policy_path(robot), motor_model,
                               sim_params)
    done = threading.Event()
    outcome = WalkOutcome("", "")
    with ProcessGroup(workdir / "logs", domain, config_dir=workdir, niceness=REHEARSAL_NICENESS) as group:
        operator = Operator(domain, log=log, name=operator_name)
        try:
            launch_rehearsal(group, operator, overrides, log=log)
            if while_walking is not None:
                def from_walk() -> None:
                    operator.wait_for("WALK", lambda: operator.policy_state == "WALK" or done.is_set(), 120.0)
                    if not done.is_set():
                        while_walking(group, operator, done)

                threading.Thread(target=from_walk, name="while_walking", daemon=True).start()
            run_session(operator, group, segments if segments is not None else walk_test_segments())
        except SessionError as e:
            outcome = WalkOutcome(str(e), "\n".join(f"--- {c.name}\n{c.tail()}" for c in group.children))
        finally:
            done.set()
            operator.save(workdir / "session.npz")
            operator.close()
    return outcome
