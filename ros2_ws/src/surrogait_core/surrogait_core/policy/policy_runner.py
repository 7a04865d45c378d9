"""One policy step on the robot: LowState + command + gait clock + last action → joint targets.

The observation goes through the same `ObservationBuilder` and `OnnxPolicy` that training-time
evaluation uses (docs/architecture.md, Principles: one code path from evaluation to the robot);
this module only gathers the raw terms. The default pose and the soft joint range come from the
policy's contract, never from the robot model, so the robot sees what training saw.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

import numpy as np

from surrogait_core.policy.contract import GaitSpec
from surrogait_core.policy.gait import clock_features, gait_features, leg_phases
from surrogait_core.policy.observation import ObservationBuilder, projected_gravity
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.wire.go2_wire import LowStateView


@dataclasses.dataclass(frozen=True)
class PolicyOutput:
    joint_targets: np.ndarray  # rad, SDK order, inside the contract's soft joint range
    action: np.ndarray  # clipped network output
    inference_s: float  # onnxruntime time for this step
    observation: np.ndarray | None = None  # what the network was given (the node checks it is not frozen)

    @property
    def finite(self) -> bool:
        return bool(np.all(np.isfinite(self.joint_targets)))


class PolicyRunner:
    """Raw terms → observation → action → joint targets, for one robot or (evaluation) a batch."""

    def __init__(self, policy: OnnxPolicy):
        self.policy = policy
        self.contract = policy.contract
        self.builder = ObservationBuilder(self.contract)
        self.default_joint_pos = np.asarray(self.contract.default_joint_pos, dtype=np.float64)
        self.soft_joint_pos_lower = np.asarray(self.contract.soft_joint_pos_lower, dtype=np.float64)
        self.soft_joint_pos_upper = np.asarray(self.contract.soft_joint_pos_upper, dtype=np.float64)
        self.needs_base_lin_vel = "base_lin_vel_b" in self.contract.estimator_terms
        self.last_action = np.zeros(self.contract.action_size)
        self.gait: GaitSpec = self.contract.gait  # a multi-gait policy walks with any of its contract's gaits
        self._gait_input = "gait_params" in {t.name for t in self.contract.observation}
        # Where the observation holds what the robot measured (IMU, encoders, the estimator's velocity): the part
        # that must change while walking. The clock, command and last action change on their own.
        offsets = np.cumsum([0] + [t.size for t in self.contract.observation])
        self.measured_obs_index = np.concatenate(
            [np.arange(offsets[i], offsets[i + 1]) for i, t in enumerate(self.contract.observation)
             if t.source in ("proprioception", "estimator")] or [np.zeros(0, dtype=int)])

    def set_gait(self, name: str) -> GaitSpec:
        """Walk with the contract's gait `name` from the next step (KeyError for a gait it was not trained for)."""
        self.gait = self.contract.gait_named(name)
        return self.gait

    def reset(self, num_robots: int | None = None) -> None:
        """Forget the previous action (called when walking starts); `num_robots` for batched evaluation."""
        shape = (self.contract.action_size,) if num_robots is None else (num_robots, self.contract.action_size)
        self.last_action = np.zeros(shape)

    def terms(self, base_ang_vel_b: np.ndarray, projected_gravity_b: np.ndarray, joint_pos: np.ndarray,
              joint_vel: np.ndarray, command: np.ndarray, gait_time_s: float | np.ndarray,
              base_lin_vel_b: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Raw observation terms (contract names; SDK order, body frame), one robot or a batch (N, ...)."""
        terms = {
            "base_ang_vel_b": np.asarray(base_ang_vel_b, dtype=np.float64),
            "projected_gravity_b": np.asarray(projected_gravity_b, dtype=np.float64),
            "command": np.asarray(command, dtype=np.float64),
            "joint_pos_rel": np.asarray(joint_pos, dtype=np.float64) - self.default_joint_pos,
            "joint_vel": np.asarray(joint_vel, dtype=np.float64),
            "last_action": self.last_action,
            "gait_clock": clock_features(leg_phases(self.gait, gait_time_s)),
        }
        if self._gait_input:
            features = gait_features(self.gait)
            terms["gait_params"] = np.broadcast_to(features, (*terms["command"].shape[:-1], features.size))
        if self.needs_base_lin_vel:
            if base_lin_vel_b is None:
                raise ValueError("this policy needs base_lin_vel_b from the state estimator, and none was given")
            terms["base_lin_vel_b"] = np.asarray(base_lin_vel_b, dtype=np.float64)
        return terms

    def raw_terms(self, state: LowStateView, command: np.ndarray, gait_time_s: float,
                  base_lin_vel_b: np.ndarray | None = None) -> dict[str, np.ndarray]:
        return self.terms(state.gyro_b, projected_gravity(state.quat_wxyz), state.joint_pos, state.joint_vel,
                          command, gait_time_s, base_lin_vel_b)

    def observation(self, state: LowStateView, command: np.ndarray, gait_time_s: float,
                    base_lin_vel_b: np.ndarray | None = None) -> np.ndarray:
        return self.builder.build(self.raw_terms(state, command, gait_time_s, base_lin_vel_b))

    def step(self, state: LowStateView, command: np.ndarray, gait_time_s: float,
             base_lin_vel_b: np.ndarray | None = None) -> PolicyOutput:
        return self.act(self.raw_terms(state, command, gait_time_s, base_lin_vel_b))

    def act(self, terms: Mapping[str, np.ndarray]) -> PolicyOutput:
        """Joint targets for raw terms from `terms`/`raw_terms`; remembers the action for the next observation."""
        obs = self.builder.build(terms)
        start = time.perf_counter()
        raw_action = self.policy.act(obs)
        inference_s = time.perf_counter() - start
        action = self.policy.clip_action(np.asarray(raw_action, dtype=np.float64))
        # NaN stays NaN (np.clip keeps it): the controller damps on a non-finite target
        targets = np.clip(self.policy.joint_targets(action), self.soft_joint_pos_lower, self.soft_joint_pos_upper)
        # a robot whose action is not finite keeps its previous one
        finite = np.all(np.isfinite(action), axis=-1, keepdims=True)
        self.last_action = np.where(finite, action, self.last_action)
        return PolicyOutput(joint_targets=targets, action=action, inference_s=inference_s, observation=obs)
