"""Whether the estimated base height may be trusted, and the z variance to publish with it.

The agreement with the safety monitor: the odometry's z variance (pose covariance [14], m^2) is
the filter's own variance while the estimate is converged and healthy, and at least
`untrusted_z_var_m2` (1 m^2: "do not use") whenever it is not. The monitor trusts the height
only when sqrt(var) <= 5 cm and otherwise falls back to its own leg-kinematics height.

The filter's variance alone cannot say "not converged": it is small right after a reset (the
start assumes the feet on the ground), it knows nothing of samples that never reached it, and it
describes the state at the sample's time, not now. So the verdict also looks at how the estimate
was made: enough samples since the filter (re)started, enough robot time since the last trouble
(reset, long gap in the stream, refused sample), an innovation consistent with the noise model,
and an estimate that is not stale (latency from the robot's sample to publication).
"""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass
class TrustConfig:
    min_samples_since_reset: int = 100  # accepted samples after a (re)initialisation (0.2 s at 500 Hz)
    settle_s: float = 0.5  # robot time after a reset, a long gap or a refused sample
    # Recent mean normalised innovation squared per measurement row. ~0.01-0.1 here when tracking (the
    # measurement noises are conservative); a filter whose state disagrees with the legs reads >> 1.
    max_nis_per_dof: float = 5.0
    max_latency_s: float = 0.05  # robot sample -> published estimate; older means the node fell behind
    untrusted_z_var_m2: float = 1.0  # z variance published when the height must not be used

    def __post_init__(self) -> None:
        if self.min_samples_since_reset < 1 or not (self.settle_s >= 0.0 and self.max_nis_per_dof > 0.0
                                                    and self.max_latency_s > 0.0 and self.untrusted_z_var_m2 > 0.0):
            raise ValueError("trust: min_samples_since_reset >= 1, settle_s >= 0 and max_nis_per_dof, "
                             "max_latency_s, untrusted_z_var_m2 > 0 are required")


@dataclasses.dataclass(frozen=True)
class FilterStatus:
    """What the verdict looks at, from the estimator (and the node, for the latency)."""

    initialized: bool
    finite: bool
    samples_since_reset: int
    since_trouble_s: float  # robot time since the last reset, long gap or refused sample (inf if none)
    trouble: str  # what that trouble was, for the message
    nis_per_dof: float
    z_var_m2: float  # the filter's base-height variance
    latency_s: float  # age of the estimate when published (0 when not known, e.g. offline)


@dataclasses.dataclass(frozen=True)
class HeightTrust:
    trusted: bool
    reason: str  # why not ("" when trusted)
    z_var_m2: float  # the filter's own variance
    reported_z_var_m2: float  # what to publish: z_var_m2 when trusted, >= untrusted_z_var_m2 otherwise

    @property
    def z_std_m(self) -> float:
        return math.sqrt(self.z_var_m2) if self.z_var_m2 >= 0.0 else math.nan


def assess_height(status: FilterStatus, config: TrustConfig) -> HeightTrust:
    """The verdict: trusted only when every condition holds; the first failing one is the reason."""
    reason = _distrust_reason(status, config)
    var = status.z_var_m2 if math.isfinite(status.z_var_m2) else math.inf
    reported = var if reason == "" else max(var, config.untrusted_z_var_m2)
    return HeightTrust(reason == "", reason, status.z_var_m2, reported)


def _distrust_reason(s: FilterStatus, c: TrustConfig) -> str:
    if not s.initialized:
        return "no valid sample yet"
    if not (s.finite and math.isfinite(s.z_var_m2)):
        return "filter state not finite"
    if s.samples_since_reset < c.min_samples_since_reset:
        return f"converging: {s.samples_since_reset} of {c.min_samples_since_reset} samples since the filter started"
    if s.since_trouble_s < c.settle_s:
        return f"settling: {s.since_trouble_s:.2f} s since {s.trouble} (needs {c.settle_s:g} s)"
    if not s.nis_per_dof <= c.max_nis_per_dof:
        return f"innovation too large: NIS per dof {s.nis_per_dof:.1f} > {c.max_nis_per_dof:g} (diverged?)"
    if not s.latency_s <= c.max_latency_s:
        return f"behind the stream: estimate {s.latency_s * 1e3:.0f} ms old > {c.max_latency_s * 1e3:.0f} ms"
    return ""
