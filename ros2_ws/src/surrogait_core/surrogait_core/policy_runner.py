"""One policy step on the robot: LowState + command + gait clock + last action → joint targets.

The observation goes through the same `ObservationBuilder` and `OnnxPolicy` that training-time
evaluation uses (ARCHITECTURE.md, principle 3); this module only gathers the raw terms.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from surrogait_core.gait import clock_features, leg_phases
from surrogait_core.go2_wire import LowStateView
from surrogait_core.observation import ObservationBuilder, projected_gravity
from surrogait_core.onnx_policy import OnnxPolicy


@dataclasses.dataclass(frozen=True)
class PolicyOutput:
    joint_targets: np.ndarray  # rad, SDK order
    action: np.ndarray  # clipped network output
    inference_s: float  # onnxruntime time for this step

    @property
    def finite(self) -> bool:
        return bool(np.all(np.isfinite(self.joint_targets)))


class PolicyRunner:
    def __init__(self, policy: OnnxPolicy, default_joint_pos: np.ndarray,
                 joint_pos_range: tuple[np.ndarray, np.ndarray] | None = None):
        """`joint_pos_range` (lower, upper; rad, SDK order) clips the targets as training's position
        actuators do (their control range is the joint range), so the robot sees what training saw
        and no target asks a motor to drive into its stop."""
        self.policy = policy
        self.joint_pos_range = joint_pos_range
        self.contract = policy.contract
        self.builder = ObservationBuilder(self.contract)
        self.default_joint_pos = np.asarray(default_joint_pos, dtype=np.float64)
        self.needs_base_lin_vel = "base_lin_vel_b" in self.contract.estimator_terms
        self.last_action = np.zeros(self.contract.action_size)

    def reset(self) -> None:
        """Forget the previous action (called when walking starts)."""
        self.last_action = np.zeros(self.contract.action_size)

    def raw_terms(self, state: LowStateView, command: np.ndarray, gait_time_s: float,
                  base_lin_vel_b: np.ndarray | None = None) -> dict[str, np.ndarray]:
        terms = {
            "base_ang_vel_b": state.gyro_b,
            "projected_gravity_b": projected_gravity(state.quat_wxyz),
            "command": np.asarray(command, dtype=np.float64),
            "joint_pos_rel": state.joint_pos - self.default_joint_pos,
            "joint_vel": state.joint_vel,
            "last_action": self.last_action,
            "gait_clock": clock_features(leg_phases(self.contract.gait, gait_time_s)),
        }
        if self.needs_base_lin_vel:
            if base_lin_vel_b is None:
                raise ValueError("this policy needs base_lin_vel_b from the state estimator, and none was given")
            terms["base_lin_vel_b"] = np.asarray(base_lin_vel_b, dtype=np.float64)
        return terms

    def observation(self, state: LowStateView, command: np.ndarray, gait_time_s: float,
                    base_lin_vel_b: np.ndarray | None = None) -> np.ndarray:
        return self.builder.build(self.raw_terms(state, command, gait_time_s, base_lin_vel_b))

    def step(self, state: LowStateView, command: np.ndarray, gait_time_s: float,
             base_lin_vel_b: np.ndarray | None = None) -> PolicyOutput:
        obs = self.observation(state, command, gait_time_s, base_lin_vel_b)
        start = time.perf_counter()
        raw_action = self.policy.act(obs)
        inference_s = time.perf_counter() - start
        action = self.policy.clip_action(np.asarray(raw_action, dtype=np.float64))
        targets = self.policy.joint_targets(action)
        if self.joint_pos_range is not None:
            targets = np.clip(targets, *self.joint_pos_range)  # NaN stays NaN: the controller damps on it
        if np.all(np.isfinite(action)):
            self.last_action = action
        return PolicyOutput(joint_targets=targets, action=action, inference_s=inference_s)
