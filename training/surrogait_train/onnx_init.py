"""Start training from an exported policy file: the actor, normaliser included, read back from its ONNX graph.

A user holds the shipped `go2_trot.onnx`, not the checkpoint it came from. Fine-tuning it (on their terrain,
their payload) starts here: `surrogait-train train --init-from go2_trot.onnx ...`. The file carries the actor
alone, so the critic starts untrained, and its values would steer the first actor updates anywhere;
`learner.critic_warmup_iterations` trains the critic alone first. The normaliser's sample count is not in
the file: it is set to SETTLED_COUNT, so the statistics move as slowly as a long-trained run's would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from surrogait_core.policy.contract import PolicyContract, read_contract
from surrogait_train.widen import ObservationMismatch, appended_size, widen_network_state

SETTLED_COUNT = 1.0e6  # observations; a shipped policy's stages saw ~1e8

# What the actor's inputs and outputs mean: a file that differs here cannot start this run.
MEANING_FIELDS = ("robot", "joint_names", "observation", "action", "default_joint_pos", "control_dt_s")
# What a fine-tune may change on purpose (gains, joint range, gait timing, commands): reported, not refused.
TUNABLE_FIELDS = ("kp", "kd", "soft_joint_pos_lower", "soft_joint_pos_upper", "gait", "gaits", "command_ranges")


class PolicyFileMismatch(ValueError):
    """The policy file cannot start this run: its inputs or outputs mean something else, or its network differs."""


@dataclass
class PolicyFileActor:
    """What a policy file gives a run: the actor, the floor its normaliser puts under its std, the fields changed."""

    actor_state: dict[str, torch.Tensor]  # an `Actor.state_dict()`
    std_floor: float | None  # this trainer's export clips its std from below; a PPO export divides by it as stored
    changed_fields: list[str]  # contract fields the run changes on purpose (gains, gait timing, commands)


def contract_differences(file_contract: PolicyContract, run_contract: PolicyContract,
                         widen_observation: bool = False) -> tuple[list[str], list[str]]:
    """(fields that change what the actor's inputs/outputs mean, fields a fine-tune may change) that differ.

    `widen_observation`: an observation the run only appends to counts as a change a fine-tune may make.
    """
    differ = [f for f in (*MEANING_FIELDS, *TUNABLE_FIELDS) if getattr(file_contract, f) != getattr(run_contract, f)]
    tunable = {*TUNABLE_FIELDS}
    if widen_observation and "observation" in differ and appended_obs_size(file_contract, run_contract):
        tunable.add("observation")
    return [f for f in differ if f not in tunable], [f for f in differ if f in tunable]


def appended_obs_size(file_contract: PolicyContract, run_contract: PolicyContract) -> int:
    """Inputs the run appends to the file's observation; 0 when it changes the file's terms otherwise."""
    try:
        return appended_size(file_contract.observation, run_contract.observation)
    except ObservationMismatch:
        return 0


def actor_from_onnx(path: Path | str, hidden: list[int]) -> tuple[dict[str, torch.Tensor], float | None]:
    """(an `Actor.state_dict()`, the std floor or None) from an exported file: obs -> (obs - mean) / std -> MLP.

    The graph is walked from its input rather than trusted by initialiser names alone: the Sub that takes
    `obs` holds the mean, the Div after it the std (through the Clip that floors it in this trainer's
    export), the Gemms the layers.
    """
    model = onnx.load(str(path))
    weights = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    constants = dict(weights)
    for node in model.graph.node:
        if node.op_type == "Constant":
            constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    producer = {out: node for node in model.graph.node for out in node.output}
    nodes = list(model.graph.node)
    obs_name = model.graph.input[0].name

    def fail(why: str) -> PolicyFileMismatch:
        return PolicyFileMismatch(
            f"{path}: {why}; --init-from reads policies exported by surrogait-train (normaliser + MLP). "
            "Start from the run's checkpoint.pt instead"
        )

    sub = next((n for n in nodes if n.op_type == "Sub" and n.input[0] == obs_name), None)
    div = next((n for n in nodes if sub is not None and n.op_type == "Div" and n.input[0] == sub.output[0]), None)
    if sub is None or div is None or sub.input[1] not in weights:
        raise fail("no observation normaliser ((obs - mean) / std) at its input")
    clip = producer.get(div.input[1])
    clip = clip if clip is not None and clip.op_type == "Clip" else None
    std_name = clip.input[0] if clip is not None else div.input[1]
    if std_name not in weights:
        raise fail("its normaliser's std is not a stored tensor")
    floored = clip is not None and len(clip.input) >= 2 and clip.input[1] in constants
    floor = float(constants[clip.input[1]]) if floored else None
    # a PPO export (rsl_rl's normaliser) stores them as (1, obs) rows and folds its eps into the std
    mean = weights[sub.input[1]].astype(np.float32).reshape(-1)
    var = np.square(weights[std_name].astype(np.float32).reshape(-1))

    layers = [n for n in nodes if n.op_type == "Gemm"]
    sizes = [weights[n.input[1]].shape for n in layers if n.input[1] in weights]
    file_hidden = [rows for rows, _ in sizes[:-1]]
    if len(sizes) != len(layers) or not layers:
        raise fail("its layers are not plain matrix products")
    if file_hidden != list(hidden):
        raise PolicyFileMismatch(
            f"{path}: its actor has hidden layers {file_hidden}, this run's config asks for {list(hidden)}; "
            f"set learner.actor_hidden={file_hidden}"
        )
    state = {
        "normalizer.mean": torch.from_numpy(mean),
        "normalizer.var": torch.from_numpy(var),
        "normalizer.count": torch.tensor(SETTLED_COUNT),
    }
    for i, node in enumerate(layers):  # Linear layers sit at even indices of the Sequential, ELUs between
        state[f"net.{2 * i}.weight"] = torch.from_numpy(weights[node.input[1]].astype(np.float32).copy())
        state[f"net.{2 * i}.bias"] = torch.from_numpy(weights[node.input[2]].astype(np.float32).copy())
    return state, floor


def load_policy_file(
    path: Path | str,
    run_contract: PolicyContract,
    hidden: list[int],
    appended_obs_stats: Callable[[int], tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> PolicyFileActor:
    """The file's actor, checked against the run's contract; raises PolicyFileMismatch.

    With `appended_obs_stats` (the run's `LocomotionEnv.appended_obs_stats`), a file whose observation is the
    start of the run's (a trot policy starting a multi-gait run, which appends `gait_params`) is widened: the
    new inputs get zero weights, so the actor still acts as the file, and the run's statistics for them.
    """
    file_contract = read_contract(path)
    widen = appended_obs_stats is not None
    meaning, tunable = contract_differences(file_contract, run_contract, widen_observation=widen)
    added = appended_obs_size(file_contract, run_contract) if "observation" in tunable else 0
    if meaning:
        detail = "; ".join(
            f"{f}: file {_brief(getattr(file_contract, f))}, run {_brief(getattr(run_contract, f))}" for f in meaning
        )
        raise PolicyFileMismatch(
            f"{path}: its actor's inputs or outputs mean something else in this run ({detail}). Start from a policy "
            "trained for this robot and observation (or one whose observation this run's only appends to), or "
            "set the run's config (env.robot, env.gait(s)) to match it"
        )
    actor_state, floor = actor_from_onnx(path, hidden)
    if added:
        mean, var = appended_obs_stats(len(file_contract.observation))
        actor_state = widen_network_state(actor_state, added, mean, var)
    return PolicyFileActor(actor_state, floor, tunable)


def floor_note(actor_state: dict[str, torch.Tensor], min_std: float) -> str | None:
    """Why the actor would not act exactly as the file: inputs whose std is under this trainer's floor
    (a PPO export has no floor), with the setting that keeps them; None when there are none."""
    std = actor_state["normalizer.var"].sqrt()
    below = int((std < min_std).sum())
    if below == 0:
        return None
    return (f"{below} of the file's inputs have a std under learner.obs_norm_min_std={min_std:g}, so the actor starts "
            f"slightly unlike the file; learner.obs_norm_min_std={0.999 * float(std.min()):.4g} keeps them")


def _brief(value: object) -> str:
    """A contract field short enough for an error line: observation terms by name, long tuples by length."""
    if isinstance(value, tuple) and value and hasattr(value[0], "name") and hasattr(value[0], "size"):
        return "[" + ", ".join(f"{t.name}({t.size})" for t in value) + "]"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
