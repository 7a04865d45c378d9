"""Benchmark: state-estimator accuracy in rehearsal, against the simulator's ground truth.

    python bench/estimator.py --mode offline [--driver policy|scripted] [--vx 0.5] [--walk-s 10]
    python bench/estimator.py --mode live    [--driver policy|scripted] [--vx 0.5] [--walk-s 12] [--domain 35]
                                             [--node-params defaults|package] [--cpu-hogs N]

live: the real processes over DDS on loopback, in real time: `go2_sim` (MuJoCo Go2, starts lying),
`estimator_node`, and a driver:
  policy    `policy_node` with the shipped policy (ros2_ws/src/surrogait_bringup/policies/go2_trot.onnx):
            policy/stand_up, then policy/walk with cmd_vel (vx) for --walk-s seconds;
  scripted  tests/estimator/robot_driver.py: stands up by joint PD, then an open-loop trot from
            inverse kinematics (no feedback), for when no walking policy is available.
  `sim/ground_truth` is stamped with the wall clock when the simulator publishes it (the instant it
  also writes rt/lowstate); `odom` with the wall-clock time of the robot sample it describes. Each
  ground-truth message is paired with the estimate interpolated at its stamp (accuracy at equal times)
  and, separately, with the estimate this recorder had *received* by then (what a consumer such as the
  safety monitor sees: accuracy plus the pipeline's latency). Latency = arrival - stamp. Height trust:
  the share of the window where the odometry's z std (sqrt pose.covariance[14]) is <= 5 cm, the
  monitor's rule. On a loaded machine the simulator runs slower than real time and samples are lost in
  transport: this measures the pipeline as it ran.
offline: the simulator core, the same policy (through PolicyRunner/OnnxPolicy) and the estimator core in
  one loop in simulated time (the sim's sensor noise, integer foot forces as on the wire): exact timing,
  so this measures the estimator itself, independent of the machine's load.
Reports over the walking window: RMSE of body-frame vx, vy (target <= 0.1 m/s), height error (target
<= 2 cm), the velocity error's mean and std (the noise a policy trained on `base_lin_vel_b` should see),
and the same while standing. Writes bench/results/estimator_<mode>_<driver>.{json,md,png}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from surrogait_rehearsal.harness.operator import GROUND_TRUTH_COLUMNS, ODOMETRY_COLUMNS, Operator
from surrogait_rehearsal.harness.processes import child_env
from surrogait_rehearsal.harness.session import Session, SessionConfig

ROOT = Path(__file__).resolve().parents[1]
POLICY = ROOT / "ros2_ws/src/surrogait_bringup/policies/go2_trot.onnx"
DRIVER = ROOT / "tests/estimator/robot_driver.py"


TRUSTED_Z_STD_M = 0.05  # the safety monitor uses the odometry height only when sqrt(cov_zz) <= this
ARRIVAL, Z_VAR = 7, 8  # odometry columns after stamp, position, body velocity


def received_by(odom: np.ndarray, t: np.ndarray) -> np.ndarray:
    """For each time in `t`: the newest estimate that had arrived by then (a consumer's view), NaN before any."""
    arrived = odom[np.argsort(odom[:, ARRIVAL])]
    idx = np.searchsorted(arrived[:, ARRIVAL], t, side="right") - 1
    out = arrived[np.maximum(idx, 0)].copy()
    out[idx < 0] = np.nan
    return out


def percentiles_ms(x: np.ndarray) -> dict:
    if x.size == 0:
        return {}
    return {"p50": float(np.percentile(x, 50) * 1e3), "p95": float(np.percentile(x, 95) * 1e3),
            "max": float(np.max(x) * 1e3)}


def errors(odom: np.ndarray, truth: np.ndarray, t0: float, t1: float) -> dict:
    """Over ground-truth stamps in [t0, t1]: the estimate interpolated at the same instant (accuracy), the
    estimate received by then (accuracy + latency, as the safety monitor sees it), latency, height trust."""
    order = np.argsort(odom[:, 0])
    odom = odom[order]
    sel = truth[(truth[:, 0] >= max(t0, odom[0, 0])) & (truth[:, 0] <= min(t1, odom[-1, 0]))]
    if len(sel) < 10:
        return {"samples": int(len(sel))}
    est = np.column_stack([np.interp(sel[:, 0], odom[:, 0], odom[:, k]) for k in range(1, 7)])
    err_v = est[:, 3:6] - sel[:, 4:7]
    err_h = est[:, 2] - sel[:, 3]
    rms = lambda x: float(np.sqrt(np.mean(x**2)))  # noqa: E731
    got = received_by(odom, sel[:, 0])
    ok = np.isfinite(got[:, 0])
    got_err_h, got_err_v = got[ok, 3] - sel[ok, 3], got[ok, 4:6] - sel[ok, 4:6]
    trusted = np.sqrt(got[ok, Z_VAR]) <= TRUSTED_Z_STD_M
    in_window = odom[(odom[:, 0] >= t0) & (odom[:, 0] <= t1)]
    return {
        "latency_ms": percentiles_ms(in_window[:, ARRIVAL] - in_window[:, 0]),
        "as_received": {
            "rmse_vx_mps": rms(got_err_v[:, 0]),
            "rmse_vy_mps": rms(got_err_v[:, 1]),
            "height_err_rmse_m": rms(got_err_h),
            "height_err_max_m": float(np.max(np.abs(got_err_h))),
            "height_trusted_share": float(np.mean(trusted)),
            "height_err_max_when_trusted_m": float(np.max(np.abs(got_err_h[trusted]))) if trusted.any() else None,
        },
        "samples": int(len(sel)),
        "duration_s": float(sel[-1, 0] - sel[0, 0]),
        "rmse_vx_mps": rms(err_v[:, 0]),
        "rmse_vy_mps": rms(err_v[:, 1]),
        "rmse_vz_mps": rms(err_v[:, 2]),
        "vel_err_mean_mps": err_v.mean(axis=0).tolist(),
        "vel_err_std_mps": err_v.std(axis=0).tolist(),
        "height_err_rmse_m": rms(err_h),
        "height_err_max_m": float(np.max(np.abs(err_h))),
        "height_true_mean_m": float(sel[:, 3].mean()),
        "true_vx_mean_mps": float(sel[:, 4].mean()),
        "true_vx_std_mps": float(sel[:, 4].std()),
        "true_vy_std_mps": float(sel[:, 5].std()),
        "est_vx_mean_mps": float(est[:, 3].mean()),
        "xy_drift_m": float(np.linalg.norm((est[-1, 0:2] - est[0, 0:2]) - (sel[-1, 1:3] - sel[0, 1:3]))),
        "distance_true_m": float(np.linalg.norm(sel[-1, 1:3] - sel[0, 1:3])),
    }


def plot(odom: np.ndarray, truth: np.ndarray, t0: float, t1: float, marks: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    # The consumer's view: each estimate drawn from its arrival on (steps), next to it at its own stamp.
    arrived = odom[np.argsort(odom[:, ARRIVAL])]
    received = np.column_stack([arrived[:, ARRIVAL], arrived[:, 1:ARRIVAL]])
    for ax, k, label in zip(axes, (4, 5, 3), ("vx body (m/s)", "vy body (m/s)", "height (m)"), strict=True):
        for data, name, style in ((truth, "ground truth", "k-"), (odom, "estimate at its sample's time", "C1-"),
                                  (received, "estimate as received", "C2--")):
            sel = (data[:, 0] >= t0) & (data[:, 0] <= t1)
            ax.plot(data[sel, 0] - t0, data[sel, k], style, lw=0.8, label=name, drawstyle="steps-post"
                    if data is received else "default")
        for name, t in marks.items():
            ax.axvline(t - t0, color="C0", ls=":", lw=0.8)
            ax.text(t - t0, ax.get_ylim()[1], name, fontsize=7, va="top")
        ax.set_ylabel(label)
    # Grey: the odometry says its height must not be used (z std > 5 cm, e.g. >= 1 m when not converged).
    sel = (arrived[:, ARRIVAL] >= t0) & (arrived[:, ARRIVAL] <= t1)
    axes[2].fill_between(arrived[sel, ARRIVAL] - t0, 0, 1, where=np.sqrt(arrived[sel, Z_VAR]) > TRUSTED_Z_STD_M,
                         step="post", color="0.85", transform=axes[2].get_xaxis_transform(), label="height untrusted")
    axes[0].legend(loc="lower right", fontsize=8)
    axes[2].legend(loc="lower right", fontsize=8)
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def run_offline(args) -> tuple[np.ndarray, np.ndarray, dict[str, float], dict]:
    """The same pipeline without processes or wall clock: simulator core, policy (or scripted trot) and
    estimator core stepped in one loop in simulated time. Every 2 ms physics step gives one LowState-
    equivalent sample (with the simulator's sensor noise and integer foot forces, as on the wire) to the
    estimator; the policy acts every 20 ms. Timing is exact, so this measures the estimator alone."""
    from surrogait_core.estimator import ProprioSample, StateEstimator
    from surrogait_core.estimator.leg_kinematics import LegKinematics
    from surrogait_core.policy.onnx_policy import OnnxPolicy
    from surrogait_core.policy.policy_runner import PolicyRunner
    from surrogait_core.robot_spec import load_robot_spec
    from surrogait_core.wire import go2_wire
    from surrogait_rehearsal.sim.lowstate_writer import foot_force_counts
    from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig

    sys.path.insert(0, str(DRIVER.parent))
    from robot_driver import trot_feet  # noqa: E402

    spec = load_robot_spec("go2")
    sim = Go2Sim(SimConfig(initial_pose="stand", seed=args.seed))
    est = StateEstimator(spec)
    dt = sim.model.opt.timestep
    kp, kd, zeros = np.full(12, spec.nominal_kp), np.full(12, spec.nominal_kd), np.zeros(12)
    runner = None
    if args.driver == "policy":
        runner = PolicyRunner(OnnxPolicy(args.policy, robot="go2"))
        c = runner.contract
        kp, kd = np.asarray(c.kp, dtype=np.float64), np.asarray(c.kd, dtype=np.float64)
        control_every = int(round(c.control_dt_s / dt))
    else:
        kin = LegKinematics(spec)
        nominal_b, q_ik = kin.foot_positions(spec.default_joint_pos), spec.default_joint_pos.copy()
        control_every = 5
    marks = {"stand_up": 0.0, "stand": 1.0, "walk": 1.0 + args.stand_s, "end": 1.0 + args.stand_s + args.walk_s}
    n_steps = int(round(marks["end"] / dt))
    odom, truth = np.empty((n_steps, 9)), np.empty((n_steps, 9))
    target = spec.default_joint_pos.copy()
    pad = go2_wire.Gamepad(frozenset(), 0.0, 0.0, 0.0, 0.0)
    for k in range(n_steps):
        t = k * dt
        r = sim.readout()
        view = go2_wire.LowStateView(
            tick_ms=int(round(t * 1000)), quat_wxyz=r.quat_wxyz, gyro_b=r.gyro_b, accel_b=r.accel_b,
            joint_pos=r.joint_pos, joint_vel=r.joint_vel, joint_tau_est=r.joint_tau_est,
            foot_force=np.array(foot_force_counts(r.foot_force_n), dtype=np.float64), gamepad=pad)
        e = est.step(ProprioSample.from_lowstate(view, time_s=t))
        gt = sim.ground_truth()
        # In one loop an estimate is "received" the instant it is made.
        odom[k] = [t, *e.position_w, *e.base_lin_vel_b, t, est.height_trust().reported_z_var_m2]
        truth[k] = [t, *gt.base_pos_w, *gt.base_lin_vel_b, t, 0.0]
        if k % control_every == 0 and t >= marks["walk"]:
            if runner is not None:
                target = runner.step(view, np.array([args.vx, 0.0, 0.0]), t - marks["walk"]).joint_targets
            else:
                q_ik = kin.joints_for_feet(trot_feet(nominal_b, args.vx, t - marks["walk"], 0.4, 0.06), q_ik, 3)
                target = q_ik
        sim.step(go2_wire.MotorCommands(mode=np.ones(12), q=target, dq=zeros, kp=kp, kd=kd, tau=zeros))
    h = est.health()
    diag = {"accepted": h.accepted, "rejected_total": h.rejected_total, "slip_rejections": h.slip_rejections,
            "nis_per_dof": round(h.nis_per_dof, 3), "level": h.level}
    return odom, truth, marks, diag


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", choices=("policy", "scripted"), default="policy")
    ap.add_argument("--vx", type=float, default=0.5, help="commanded forward speed, m/s")
    ap.add_argument("--walk-s", type=float, default=12.0)
    ap.add_argument("--stand-s", type=float, default=3.0, help="standing window measured before walking")
    ap.add_argument("--mode", choices=("live", "offline"), default="live",
                    help="live: real processes over DDS in real time; offline: one loop in simulated time")
    ap.add_argument("--seed", type=int, default=0, help="sensor noise seed (offline)")
    ap.add_argument("--domain", type=int, default=35)
    ap.add_argument("--node-params", choices=("defaults", "package"), default="defaults",
                    help="live: nodes with their built-in defaults, or with their package parameters files as in "
                         "the demo (SCHED_FIFO priorities, the simulator's video)")
    ap.add_argument("--cpu-hogs", type=int, default=0,
                    help="live: run this many busy-loop processes meanwhile (a loaded machine, as in the field)")
    ap.add_argument("--policy", type=Path, default=POLICY)
    ap.add_argument("--policy-state-timeout-s", type=float, default=0.5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results")
    ap.add_argument("--name", default="", help="results file stem (default estimator_<mode>_<driver>)")
    ap.add_argument("--workdir", type=Path, default=ROOT / "runs/bench_estimator")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)

    machine = describe_machine_now()  # with the load average at the start: what this run competed with
    if args.mode == "offline":
        odom, truth, marks, diag = run_offline(args)
        return report(args, odom, truth, marks, {"estimator (in-process)": diag}, machine)
    odom, truth, marks, diag = run_live(args)
    return report(args, odom, truth, marks, diag, machine)


def stamped(op: Operator) -> tuple[np.ndarray, np.ndarray]:
    """The operator's odometry and ground truth as (stamp, x, y, z, vx, vy, vz (body), arrival, z variance)."""
    odom, truth = op.table("odometry"), op.table("ground_truth")
    cols = ("stamp", "x", "y", "z", "vx", "vy", "vz", "arrival")
    odom = odom[:, [ODOMETRY_COLUMNS.index(c) for c in (*cols, "z_var")]]
    truth = truth[:, [GROUND_TRUTH_COLUMNS.index(c) for c in cols]]
    return odom, np.column_stack([truth, np.zeros(len(truth))])


def height_trust_changes(op: Operator) -> list[tuple[float, str]]:
    """(arrival wall time, kind of the estimator's height_untrusted_reason) each time it changes."""
    changes: list[tuple[float, str]] = []
    with op.lock:
        statuses = [s for s in op.statuses if s.name.startswith("estimator_node")]
    for s in statuses:
        reason = s.values.get("height_untrusted_reason", "").split(":")[0]  # its kind
        if not changes or changes[-1][1] != reason:
            changes.append((s.wall, reason))
    return changes


def run_live(args) -> tuple[np.ndarray, np.ndarray, dict[str, float], dict]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.cpu_hogs)]
    package = args.node_params == "package"
    # The estimator joins a running stream, as the session starts it (the simulator first), and its subscription
    # then races the samples already arriving. --node-params package: as in the demo, with the simulator's video
    # (it costs CPU).
    config = SessionConfig(
        args.workdir, domain=args.domain, policy=args.policy,
        nodes=("estimator_node", "policy_node") if args.driver == "policy" else ("estimator_node",),
        params_files=package, sim_log=False, video=package, niceness=None, operator_name="estimator_bench",
        params={"go2_sim": {"initial_pose": "lying"},
                # No safety monitor here; a loaded 2-core machine runs the simulator slower than real time:
                # rt/lowstate gaps beyond the robot's 60 ms must not end the run.
                "policy_node": {"reset_requires_safety_ok": False, "state_timeout_s": args.policy_state_timeout_s}})
    session = Session(config, log=lambda _: None)
    try:
        session.start()
        session.wait_ready()
        op = session.operator
        marks: dict[str, float] = {}
        if args.driver == "policy":
            marks["stand_up"] = time.time()
            session.stand_up()
            time.sleep(1.0)
            marks["stand"] = time.time()
            time.sleep(args.stand_s)
            session.walk(0.0)
            marks["walk"] = time.time()
            op.set_cmd_vel(args.vx)
            time.sleep(args.walk_s)
            op.set_cmd_vel(None)
            marks["end"] = time.time()
        else:
            standing = args.workdir / "standing"
            standing.unlink(missing_ok=True)
            settle, trot_after = 1.0, 1.5 + 1.0 + args.stand_s
            drv = subprocess.Popen([sys.executable, str(DRIVER), "--domain", str(args.domain), "--duration",
                                    str(trot_after + args.walk_s + 1.0), "--trot-vx", str(args.vx),
                                    "--trot-after", str(trot_after), "--done-file", str(standing)],
                                   env=child_env(args.domain), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            marks["stand_up"] = time.time()
            deadline = time.monotonic() + 60.0
            while not standing.exists():
                if drv.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("scripted driver never stood the robot up")
                time.sleep(0.02)
            time.sleep(settle)
            marks["stand"] = time.time()
            time.sleep(args.stand_s)
            marks["walk"] = time.time()
            time.sleep(args.walk_s)
            marks["end"] = time.time()
            drv.wait(timeout=30)
        time.sleep(0.5)
        odom, truth = stamped(op)
        diag = op.latest_statuses()
        # Why the height was not trusted, as the diagnostics said (10 Hz), relative to the stand-up command.
        diag["height_trust_changes"] = [(round(t - marks["stand_up"], 2), r) for t, r in height_trust_changes(op)]
    finally:
        session.stop(grace_s=15.0)
        for h in hogs:
            h.kill()
            h.wait()
    return odom, truth, marks, diag


def trailing_s(odom: np.ndarray, truth: np.ndarray, t0: float, t1: float, time_col: int = 0) -> float | None:
    """How far the estimated height trails the truth over [t0, t1]: the shift (s) that best aligns them, with
    the estimate placed at its stamp (time_col 0) or at its arrival (time_col ARRIVAL). None if too few samples."""
    sel = truth[(truth[:, 0] >= t0) & (truth[:, 0] <= t1)]
    est = odom[np.argsort(odom[:, time_col])]
    if len(sel) < 10 or len(est) < 10:
        return None
    shifts = np.arange(-0.3, 0.3001, 0.002)
    cost = [np.mean((np.interp(sel[:, 0] + d, est[:, time_col], est[:, 3]) - sel[:, 3]) ** 2) for d in shifts]
    return float(shifts[int(np.argmin(cost))])


def first_trusted_after(odom: np.ndarray, t0: float) -> float | None:
    """Seconds from t0 to the first arrival of an estimate whose height may be used (sqrt(cov_zz) <= 5 cm)."""
    ok = odom[(odom[:, ARRIVAL] >= t0) & (np.sqrt(odom[:, Z_VAR]) <= TRUSTED_Z_STD_M)]
    return None if len(ok) == 0 else float(ok[:, ARRIVAL].min() - t0)


def describe_machine_now() -> str:
    """The machine and its load average now (call at the start; `report` adds the load at the end)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from machine_info import describe_machine

    return f"{platform.node()}: {describe_machine()}"


def report(args, odom: np.ndarray, truth: np.ndarray, marks: dict[str, float], diag: dict, machine: str) -> int:
    walk_skip = 1.0  # the first second of walking is the start transient
    # A fall ends the walk: judge walking only while upright (base above 0.18 m), up to 0.5 s before a fall.
    after = truth[(truth[:, 0] > marks["walk"]) & (truth[:, 0] <= marks["end"])]
    fallen = after[after[:, 3] < 0.18]
    fell_at = float(fallen[0, 0]) if len(fallen) else None
    walk_end = marks["end"] if fell_at is None else fell_at - 0.5
    result = {
        "bench": "estimator",
        "mode": args.mode,
        "driver": args.driver,
        "policy": str(args.policy.relative_to(ROOT)) if args.driver == "policy" else None,
        "policy_md5": hashlib.md5(args.policy.read_bytes()).hexdigest() if args.driver == "policy" else None,
        "commanded_vx_mps": args.vx,
        "stand_up": {
            **errors(odom, truth, marks["stand_up"], marks["stand"]),
            "height_trails_truth_s": trailing_s(odom, truth, marks["stand_up"], marks["stand"]),
            "height_as_received_trails_truth_s": trailing_s(odom, truth, marks["stand_up"], marks["stand"], ARRIVAL),
            "height_trusted_after_s": first_trusted_after(odom, marks["stand_up"]),
        },
        "standing": errors(odom, truth, marks["stand"], marks["walk"]),
        "walking": errors(odom, truth, marks["walk"] + walk_skip, walk_end),
        "fell_after_walk_start_s": None if fell_at is None else round(fell_at - marks["walk"], 2),
        "targets": {"rmse_vx_vy_mps": 0.1, "height_err_m": 0.02},
        "diagnostics": diag,
        "machine": f"{machine}, {os.getloadavg()[0]:.1f} at the end"
                   + (f"; {args.cpu_hogs} busy-loop processes ran alongside" if args.cpu_hogs else ""),
        "node_params": args.node_params if args.mode == "live" else None,
        "command": "python " + " ".join(sys.argv),
    }
    w = result["walking"]
    if "rmse_vx_mps" in w:
        result["pass"] = bool(w["rmse_vx_mps"] <= 0.1 and w["rmse_vy_mps"] <= 0.1 and w["height_err_rmse_m"] <= 0.02)
    name = args.name or f"estimator_{args.mode}_{args.driver}"
    path = {ext: args.out / f"{name}.{ext}" for ext in ("json", "md", "png")}
    path["json"].write_text(json.dumps(result, indent=2))
    # The raw series, for a closer look (not committed: bench/results keeps the summary and the plot).
    np.savez(args.workdir / f"{name}.npz", odom=odom, truth=truth, marks=json.dumps(marks))
    plot(odom, truth, marks["stand_up"], marks["end"], marks, path["png"])
    lines = [f"# Estimator accuracy in rehearsal ({args.mode}, {args.driver} driver, commanded vx {args.vx} m/s)", "",
             f"Command: `{result['command']}`  ", f"Machine: {result['machine']}", "",
             "At the sample's time (the estimate interpolated at each ground-truth stamp):", "",
             "| window | samples | true vx mean | RMSE vx | RMSE vy | RMSE vz | vel err std (x, y) | "
             "height err RMSE | height err max |", "|---|---|---|---|---|---|---|---|---|"]
    windows = ("stand_up", "standing", "walking")
    for name in windows:
        e = result[name]
        if "rmse_vx_mps" not in e:
            lines.append(f"| {name} | {e['samples']} | – | – | – | – | – | – | – |")
            continue
        lines.append(f"| {name} | {e['samples']} | {e['true_vx_mean_mps']:.3f} | {e['rmse_vx_mps']:.3f} | "
                     f"{e['rmse_vy_mps']:.3f} | {e['rmse_vz_mps']:.3f} | {e['vel_err_std_mps'][0]:.3f}, "
                     f"{e['vel_err_std_mps'][1]:.3f} | {e['height_err_rmse_m'] * 100:.2f} cm | "
                     f"{e['height_err_max_m'] * 100:.2f} cm |")
    lines += ["", "As received (the newest estimate that had arrived at each ground-truth stamp: what the safety "
              "monitor sees), latency (arrival - stamp) and height trust (share of the window with z std <= 5 cm):",
              "", "| window | RMSE vx | RMSE vy | height err RMSE | height err max | latency p50 / p95 / max | "
              "height trusted | height err max while trusted |", "|---|---|---|---|---|---|---|---|"]
    for name in windows:
        e = result[name]
        if "as_received" not in e:
            continue
        a, lat = e["as_received"], e["latency_ms"]
        when_trusted = a["height_err_max_when_trusted_m"]
        lines.append(f"| {name} | {a['rmse_vx_mps']:.3f} | {a['rmse_vy_mps']:.3f} | "
                     f"{a['height_err_rmse_m'] * 100:.2f} cm | {a['height_err_max_m'] * 100:.2f} cm | "
                     f"{lat['p50']:.1f} / {lat['p95']:.1f} / {lat['max']:.1f} ms | "
                     f"{a['height_trusted_share'] * 100:.0f} % | "
                     f"{'–' if when_trusted is None else f'{when_trusted * 100:.2f} cm'} |")
    su = result["stand_up"]
    fmt = lambda x: "–" if x is None else f"{x:.3f} s"  # noqa: E731
    lines += ["", f"Stand-up: the estimated height trails the truth by {fmt(su['height_trails_truth_s'])} at its "
                  f"stamp and by {fmt(su['height_as_received_trails_truth_s'])} as received; the odometry height is "
                  f"trusted {fmt(su['height_trusted_after_s'])} after the stand-up command."]
    if fell_at is not None:
        lines += ["", f"The robot fell {fell_at - marks['walk']:.1f} s after walking started; the walking window "
                      "ends 0.5 s before the fall."]
    lines += ["", "Targets: RMSE vx, vy <= 0.1 m/s; height error <= 2 cm. Velocities in m/s, body frame. "
              f"Plot: `{path['png'].name}`.", ""]
    path["md"].write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
