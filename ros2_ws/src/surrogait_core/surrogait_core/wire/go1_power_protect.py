"""unitree_legged_sdk 3.8's `Safety.PowerProtect(cmd, state, level)`, without the SDK.

The SDK ships it compiled only (its header declares `int WattLimit, Wcount`). Its behaviour, measured call
by call against the SDK's Python binding (cp311 x86_64; tests/core/test_go1_power_protect.py compares the
two on random sequences wherever that wheel installs):

- the limit is 100 W × level, the level clamped to 1..10 (the header: "1~10, means 10%~100% power limit");
- a call is "over" when the 12 leg motors' power, the sum of each one's |tauEst · dq| (float32, as the
  SDK's float fields multiply), exceeds the limit (two motors at 60 W trip level 1, as one at 120 W does;
  twelve at 8 W do not); the other 8 slots and the command's own torque do not count;
- an over call adds one to a counter that stops at 10, any other call takes one off (not below 0);
- the call answers -1 (a trip) while the counter is above 5, else 1. So the sixth over call in a row trips,
  a lone spike never does, and after a long overload it takes five calls under the limit to stop tripping.
- it does not change the command: the caller must act on -1 (the policy node damps).
"""

from __future__ import annotations

import numpy as np

from surrogait_core.wire.go1_wire import NUM_MOTORS

WATTS_PER_LEVEL = 100.0
LEVELS = (1, 10)
COUNT_CAP = 10
TRIP_ABOVE = 5


class PowerProtect:
    """One SDK `Safety` object's power protection: `over_limit` once per control step with the newest state."""

    def __init__(self, level: int) -> None:
        self.level = int(min(max(level, LEVELS[0]), LEVELS[1]))
        self.limit_w = WATTS_PER_LEVEL * self.level
        self.count = 0

    def over_limit(self, tau_est_nm, dq_radps) -> bool:
        """True (the SDK's -1) when the protection trips with this state."""
        power = np.abs(np.asarray(tau_est_nm, dtype=np.float32)[:NUM_MOTORS]
                       * np.asarray(dq_radps, dtype=np.float32)[:NUM_MOTORS])
        total = np.float32(0.0)
        for watts in power:  # summed in order, in float32
            total = np.float32(total + watts)
        if total > np.float32(self.limit_w):
            self.count = min(self.count + 1, COUNT_CAP)
        else:
            self.count = max(self.count - 1, 0)
        return self.count > TRIP_ABOVE
