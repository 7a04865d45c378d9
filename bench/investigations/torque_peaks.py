"""When in a rehearsal session does the estimated-torque rule come closest to its threshold, and on which joint?

    python bench/safety.py --scenarios --workdir runs/bench_safety_torque   # the no-fault walk alone
    python bench/investigations/torque_peaks.py runs/bench_safety_torque/baseline/session.mcap [--robot go2]

Reads the session's rt/lowstate from its MCAP (`surrogait_recorder.info.decoded`) and prints, second by second, the
largest |tau_est| as a fraction of the safety monitor's threshold (`tau_est_fraction` of the motor's torque limit,
`default_thresholds`) with its joint, beside the policy node's state changes. Asked because the no-fault walk of
`bench/safety.py` reaches 0.98-0.99 on this rule where issue 34 asks for at most 0.8: the stand-up, a command step,
or the gait itself?
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_recorder.info import decoded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", type=Path, help="a session's MCAP (bench/safety.py's workdir/baseline/session.mcap)")
    parser.add_argument("--robot", default="go2")
    args = parser.parse_args()
    spec = load_robot_spec(args.robot)
    th = default_thresholds(spec)
    limit = th.tau_est_fraction * th.joint_torque_limit
    times, fractions, states = [], [], []
    for topic, t_ns, msg in decoded(args.session, ["/rt/lowstate", "/policy/state"]):
        if topic == "/rt/lowstate":
            times.append(t_ns * 1e-9)
            fractions.append(np.abs([m.tau_est for m in msg.motor_state[:12]]) / limit)
        else:
            states.append((t_ns * 1e-9, msg.data.split()[0] if msg.data else ""))
    if not times:
        raise SystemExit(f"{args.session}: no /rt/lowstate messages")
    t0 = times[0]
    t = np.array(times) - t0
    frac = np.array(fractions)
    print("state changes (s from the first rt/lowstate): "
          + ", ".join(f"{s - t0:.2f} {name}" for s, name in states))
    print("| second | largest tau_est / threshold | joint |")
    print("|---|---|---|")
    for second in range(int(t[-1]) + 1):
        window = (t >= second) & (t < second + 1)
        if window.any():
            peak = frac[window].max(0)
            print(f"| {second} | {peak.max():.3f} | {spec.joint_names[int(peak.argmax())]} |")
    i, j = np.unravel_index(frac.argmax(), frac.shape)
    print(f"peak {frac[i, j]:.3f} on {spec.joint_names[j]} at {t[i]:.2f} s")


if __name__ == "__main__":
    main()
