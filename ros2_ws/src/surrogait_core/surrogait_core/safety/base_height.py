"""Base height from leg kinematics, for the "base too low" rule when no estimator runs.

With the base's attitude from the IMU and the joint angles, the lowest foot is on the ground
(a standing or walking robot always has a foot down), so the base origin sits
−z(lowest foot in a gravity-aligned base frame) + foot radius above it. Flat ground assumed.
"""

from __future__ import annotations

import numpy as np

from surrogait_core.robot_spec import RobotSpec
from surrogait_core.wire.go2_wire import LowStateView


class LegKinematicsHeight:
    def __init__(self, spec: RobotSpec):
        import pinocchio  # imported here: only the node needs it, not the rules' unit tests

        self._pin = pinocchio
        self.spec = spec
        self.model = pinocchio.buildModelFromMJCF(str(spec.mjcf_path))
        self.data = self.model.createData()
        self.foot_frames = [self.model.getFrameId(name) for name in spec.foot_names]
        # Pinocchio's joint order is the MJCF tree order = model order; the SDK arrays are permuted.
        self._q = pinocchio.neutral(self.model)

    def height(self, quat_wxyz: np.ndarray, joint_pos_sdk: np.ndarray) -> float:
        w, x, y, z = (float(v) for v in quat_wxyz)
        norm = np.sqrt(w * w + x * x + y * y + z * z)
        if not np.isfinite(norm) or norm < 1e-6:
            return float("nan")
        q = self._q
        q[0:3] = 0.0
        q[3:7] = (x / norm, y / norm, z / norm, w / norm)  # Pinocchio's free flyer stores (x, y, z, w)
        q[7:] = self.spec.to_model_order(joint_pos_sdk)
        self._pin.framesForwardKinematics(self.model, self.data, q)
        lowest = min(self.data.oMf[f].translation[2] for f in self.foot_frames)
        return float(-lowest + self.spec.foot_radius_m)



def monitor_base_height(estimate: tuple[float, float, float] | None, state: LowStateView | None,
                        legs: LegKinematicsHeight, now: float, max_std_m: float,
                        timeout_s: float) -> tuple[float, str] | None:
    """(base height m, its source) for the "base too low" rule, or None with nothing to judge.

    `estimate` is the estimator's (height m, standard deviation m, monotonic time received). The
    estimator reports a height it does not vouch for — not converged, fallen behind its stream,
    just after a gap — as a large z variance (≥ 1 m²): such an estimate, or a stale one, must never
    damp a robot that stands. The leg-kinematics height of the newest robot state is used instead:
    it needs no convergence, and it still sees a real collapse.
    """
    if estimate is not None:
        height_m, std_m, received_t = estimate
        if std_m <= max_std_m and now - received_t <= timeout_s:
            return height_m, "estimator"
    if state is None:
        return None
    finite = np.all(np.isfinite(state.joint_pos))
    return (legs.height(state.quat_wxyz, state.joint_pos) if finite else float("nan")), "leg kinematics"
