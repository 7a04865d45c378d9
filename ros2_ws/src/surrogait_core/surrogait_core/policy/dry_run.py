"""The suspended dry run's report: commanded against measured joint motion, per joint.

With the robot hung in a harness and every stiff command's kp and kd scaled down
(`dry_run_gain_fraction`), the legs follow the policy's targets gently in the air. What this shows
before the first stand-up on the ground: every joint moves, in the commanded direction (a motor wired
to the wrong joint, or a reversed one, moves against its target or not at all), over about the
commanded range (the weak gains and the leg's weight make it smaller), without a joint that lags far
behind (a slipping gear, a loose encoder). Running sums only: one policy step costs a few array ops.
"""

from __future__ import annotations

import dataclasses

import numpy as np

JOINTS = [f"{leg}_{j}" for leg in ("FR", "FL", "RR", "RL") for j in ("hip", "thigh", "calf")]


@dataclasses.dataclass(frozen=True)
class JointMotion:
    joint: str
    commanded_range_rad: float  # max − min of the targets
    measured_range_rad: float  # max − min of the joint positions
    correlation: float  # of target and position over the run (1: they move together; < 0: against)
    rms_error_rad: float  # target − position


class DryRunTracker:
    def __init__(self, num_joints: int = 12):
        n = num_joints
        self.steps = 0
        self._sum_c = np.zeros(n)
        self._sum_m = np.zeros(n)
        self._sum_cc = np.zeros(n)
        self._sum_mm = np.zeros(n)
        self._sum_cm = np.zeros(n)
        self._min_c = np.full(n, np.inf)
        self._max_c = np.full(n, -np.inf)
        self._min_m = np.full(n, np.inf)
        self._max_m = np.full(n, -np.inf)

    def add(self, commanded_q: np.ndarray, measured_q: np.ndarray) -> None:
        c, m = np.asarray(commanded_q, dtype=np.float64), np.asarray(measured_q, dtype=np.float64)
        self.steps += 1
        self._sum_c += c
        self._sum_m += m
        self._sum_cc += c * c
        self._sum_mm += m * m
        self._sum_cm += c * m
        np.minimum(self._min_c, c, out=self._min_c)
        np.maximum(self._max_c, c, out=self._max_c)
        np.minimum(self._min_m, m, out=self._min_m)
        np.maximum(self._max_m, m, out=self._max_m)

    def joints(self) -> list[JointMotion]:
        if self.steps < 2:
            return []
        n = self.steps
        mean_c, mean_m = self._sum_c / n, self._sum_m / n
        var_c = np.maximum(self._sum_cc / n - mean_c ** 2, 0.0)
        var_m = np.maximum(self._sum_mm / n - mean_m ** 2, 0.0)
        cov = self._sum_cm / n - mean_c * mean_m
        corr = np.where(var_c * var_m > 1e-12, cov / np.sqrt(np.maximum(var_c * var_m, 1e-24)), 0.0)
        mse = np.maximum(self._sum_cc / n - 2 * self._sum_cm / n + self._sum_mm / n, 0.0)
        return [JointMotion(JOINTS[i] if i < len(JOINTS) else str(i), float(self._max_c[i] - self._min_c[i]),
                            float(self._max_m[i] - self._min_m[i]), float(corr[i]), float(np.sqrt(mse[i])))
                for i in range(len(mean_c))]

    def report(self) -> str:
        """A table of every joint, and the joints to look at (moving against or far less than commanded)."""
        rows = self.joints()
        if not rows:
            return "dry run: no policy steps recorded yet (walk, with the robot suspended)"
        lines = [f"dry run over {self.steps} policy steps: commanded vs measured joint motion",
                 f"{'joint':10s} {'cmd range':>10s} {'meas range':>10s} {'corr':>6s} {'rms err':>8s}"]
        lines += [f"{r.joint:10s} {r.commanded_range_rad:10.3f} {r.measured_range_rad:10.3f} {r.correlation:6.2f} "
                  f"{r.rms_error_rad:8.3f}" for r in rows]
        suspect = self.suspects()
        lines.append("check: " + "; ".join(suspect) if suspect else
                     "every joint moved with its target (correlation ≥ 0.5, ≥ 20 % of the commanded range)")
        return "\n".join(lines)

    def suspects(self) -> list[str]:
        """Joints that did not follow: moving against the target, or barely at all while commanded to move."""
        out = []
        for r in self.joints():
            if r.commanded_range_rad < 0.02:
                continue  # not commanded to move: nothing to judge
            if r.correlation < 0.5 or r.measured_range_rad < 0.2 * r.commanded_range_rad:
                out.append(f"{r.joint} (correlation {r.correlation:.2f}, moved {r.measured_range_rad:.3f} of "
                           f"{r.commanded_range_rad:.3f} rad): wiring, direction or a blocked joint?")
        return out
