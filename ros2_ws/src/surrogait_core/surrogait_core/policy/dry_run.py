"""The suspended dry run's report: commanded against measured joint motion, per joint.

With the robot hung in a harness and every stiff command's kp and kd scaled down
(`dry_run_gain_fraction`), the legs follow the policy's targets gently in the air. What this shows
before the first stand-up on the ground: every joint moves, in the commanded direction (a motor wired
to the wrong joint, or a reversed one, moves against its target or not at all), over a good part of the
commanded range, and how far behind it lags (weak gains make it lag: the comparison allows up to
MAX_LAG_S). The last WINDOW_STEPS policy steps are kept in preallocated buffers: a policy step costs two
row copies; the report is computed when asked.
"""

from __future__ import annotations

import dataclasses

import numpy as np

JOINTS = [f"{leg}_{j}" for leg in ("FR", "FL", "RR", "RL") for j in ("hip", "thigh", "calf")]
WINDOW_STEPS = 3000  # 60 s at 50 Hz
# 0.12 s at 50 Hz: a joint under a fifth of its gains trails its target (60-100 ms in the rehearsal's dry run);
# less than a quarter of a trot's stride (0.5 s), so a reversed joint (half a stride out of phase) cannot pass
# for a lagging one (at most cos 86° = 0.07 of correlation; a bound's 0.4 s stride: 0.31, still under 0.5).
MAX_LAG_STEPS = 6
MIN_CORRELATION = 0.5
MIN_RANGE_FRACTION = 0.2


@dataclasses.dataclass(frozen=True)
class JointMotion:
    joint: str
    commanded_range_rad: float  # max − min of the targets
    measured_range_rad: float  # max − min of the joint positions
    correlation: float  # of the position with the target it trails, at the best lag (1: in step; < 0: against it)
    lag_steps: int  # policy steps the position trails its target
    rms_error_rad: float  # target − position at that lag


class DryRunTracker:
    def __init__(self, num_joints: int = 12, window_steps: int = WINDOW_STEPS):
        self._commanded = np.zeros((window_steps, num_joints))
        self._measured = np.zeros((window_steps, num_joints))
        self.steps = 0

    def add(self, commanded_q: np.ndarray, measured_q: np.ndarray) -> None:
        """One policy step: the targets sent, the joint positions measured at that step."""
        row = self.steps % len(self._commanded)
        self._commanded[row] = commanded_q
        self._measured[row] = measured_q
        self.steps += 1

    def _series(self) -> tuple[np.ndarray, np.ndarray]:
        n = min(self.steps, len(self._commanded))
        if self.steps <= len(self._commanded):
            return self._commanded[:n], self._measured[:n]
        start = self.steps % len(self._commanded)
        order = np.r_[start:len(self._commanded), 0:start]
        return self._commanded[order], self._measured[order]

    def joints(self) -> list[JointMotion]:
        commanded, measured = self._series()
        if len(commanded) < 2 * MAX_LAG_STEPS + 2:
            return []
        out = []
        for i in range(commanded.shape[1]):
            c, m = commanded[:, i], measured[:, i]
            best = (-2.0, 0)
            for lag in range(MAX_LAG_STEPS + 1):  # the position at step k + lag answers the target at step k
                a, b = c[: len(c) - lag], m[lag:]
                sa, sb = a.std(), b.std()
                corr = float(np.mean((a - a.mean()) * (b - b.mean())) / (sa * sb)) if sa * sb > 1e-12 else 0.0
                best = max(best, (corr, lag))
            corr, lag = best
            err = c[: len(c) - lag] - m[lag:]
            out.append(JointMotion(JOINTS[i] if i < len(JOINTS) else str(i), float(np.ptp(c)), float(np.ptp(m)),
                                   corr, lag, float(np.sqrt(np.mean(err * err)))))
        return out

    def report(self, policy_dt_s: float = 0.02) -> str:
        """A table of every joint, and the joints to look at (moving against, or far less than, commanded)."""
        rows = self.joints()
        if not rows:
            return "dry run: too few policy steps recorded yet (walk, with the robot suspended)"
        lines = [f"dry run over {min(self.steps, len(self._commanded))} policy steps: commanded vs measured "
                 "joint motion",
                 f"{'joint':10s} {'cmd range':>10s} {'meas range':>10s} {'corr':>6s} {'lag ms':>7s} {'rms err':>8s}"]
        lines += [f"{r.joint:10s} {r.commanded_range_rad:10.3f} {r.measured_range_rad:10.3f} {r.correlation:6.2f} "
                  f"{r.lag_steps * policy_dt_s * 1e3:7.0f} {r.rms_error_rad:8.3f}" for r in rows]
        suspect = self.suspects()
        lines.append("check: " + "; ".join(suspect) if suspect else
                     f"every joint moved with its target (correlation ≥ {MIN_CORRELATION} within "
                     f"{MAX_LAG_STEPS * policy_dt_s * 1e3:.0f} ms, ≥ {MIN_RANGE_FRACTION:.0%} of the commanded range)")
        return "\n".join(lines)

    def suspects(self) -> list[str]:
        """Joints that did not follow: moving against the target, or barely at all while commanded to move."""
        out = []
        for r in self.joints():
            if r.commanded_range_rad < 0.02:
                continue  # not commanded to move: nothing to judge
            if r.correlation < MIN_CORRELATION or r.measured_range_rad < MIN_RANGE_FRACTION * r.commanded_range_rad:
                out.append(f"{r.joint} (correlation {r.correlation:.2f}, moved {r.measured_range_rad:.3f} of "
                           f"{r.commanded_range_rad:.3f} rad): wiring, direction or a blocked joint?")
        return out
