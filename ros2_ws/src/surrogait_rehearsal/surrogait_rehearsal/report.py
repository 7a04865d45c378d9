"""The rehearsal report: metrics from the recorded session, PNG plots and a markdown page.

Inputs are files in the run folder: the session recording (`harness.operator.Operator.save`), the simulator's
recording (torques), the policy node's loop timings and the safety monitor's JSONL fault log.
Tracking is scored against the simulator's ground truth, after a settling time at the start of
each segment (the robot needs a moment to reach a new command).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path

import numpy as np

SETTLE_S = 1.0  # the first second of each segment is not scored
FALL_HEIGHT_M = 0.15  # base below this, or
FALL_TILT_RAD = 1.0  # roll or pitch beyond this, while the policy is in charge: a fall
GT = {"t": 0, "x": 1, "y": 2, "z": 3, "roll": 4, "pitch": 5, "vx": 6, "vy": 7, "vz": 8, "wx": 9, "wy": 10, "wz": 11}


@dataclasses.dataclass
class RunFiles:
    session: Path
    sim_log: Path | None = None
    timing: Path | None = None
    fault_log: Path | None = None
    video: Path | None = None
    recording: Path | None = None  # the session recorder's MCAP file


def _rmse(a: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(a)))) if a.size else float("nan")


def load_session(path: Path) -> dict:
    with np.load(path) as z:
        return {
            "ground_truth": z["ground_truth"],
            "odometry": z["odometry"],
            "commands": z["commands"],
            "policy_states": json.loads(str(z["policy_states"])),
            "safety_states": json.loads(str(z["safety_states"])),
            "diagnostics": json.loads(str(z["diagnostics"])),
            "sim_diagnostics": json.loads(str(z["sim_diagnostics"])) if "sim_diagnostics" in z else [],
            "segments": json.loads(str(z["segments"])),
            "gaits": json.loads(str(z["gaits"])) if "gaits" in z else [],
            **{key: z[key] for key in ("ground_truth_stamp_unix_s", "ground_truth_arrival_unix_s") if key in z},
        }


def read_fault_log(path: Path | None) -> list[dict]:
    if path is None or not path.is_file():
        return []
    events = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line:
            try:
                events.append(json.loads(line))
            except ValueError:
                events.append({"unreadable": line})
    return events


def tracking_metrics(session: dict, settle_s: float = SETTLE_S) -> dict:
    """Per segment: RMSE of ground-truth body velocity against the command, after `settle_s`."""
    gt = session["ground_truth"]
    per_segment, scored_vx_err = [], []
    for seg in session["segments"]:
        lo, hi = seg["start_s"] + settle_s, seg["end_s"]
        rows = gt[(gt[:, GT["t"]] >= lo) & (gt[:, GT["t"]] <= hi)] if gt.size else gt
        vx_cmd, vy_cmd, wz_cmd = seg["command"]
        err_vx = rows[:, GT["vx"]] - vx_cmd if rows.size else np.empty(0)
        entry = {
            "name": seg["name"], "command": seg["command"], "scored": seg["scored"],
            "duration_s": seg["end_s"] - seg["start_s"], "samples": int(len(rows)),
            "vx_mean": float(rows[:, GT["vx"]].mean()) if rows.size else float("nan"),
            "vx_rmse": _rmse(err_vx),
            "vy_rmse": _rmse(rows[:, GT["vy"]] - vy_cmd) if rows.size else float("nan"),
            "yaw_rate_mean": float(rows[:, GT["wz"]].mean()) if rows.size else float("nan"),
            "yaw_rate_rmse": _rmse(rows[:, GT["wz"]] - wz_cmd) if rows.size else float("nan"),
        }
        per_segment.append(entry)
        if seg["scored"]:
            scored_vx_err.append(err_vx)
    pooled = np.concatenate(scored_vx_err) if scored_vx_err else np.empty(0)
    return {"segments": per_segment, "walking_vx_rmse": _rmse(pooled), "walking_samples": int(pooled.size),
            "settle_s": settle_s}


def fall_metrics(session: dict) -> dict:
    """Falls while the policy drives (from the first segment's start to the last one's end)."""
    gt, segs = session["ground_truth"], session["segments"]
    if not segs or not gt.size:
        return {"fell": None, "min_height_m": float("nan"), "max_tilt_rad": float("nan"), "fall_time_s": None}
    rows = gt[(gt[:, GT["t"]] >= segs[0]["start_s"]) & (gt[:, GT["t"]] <= segs[-1]["end_s"])]
    xy = rows[:, [GT["x"], GT["y"]]]
    tilt = np.maximum(np.abs(rows[:, GT["roll"]]), np.abs(rows[:, GT["pitch"]]))
    fallen = (rows[:, GT["z"]] < FALL_HEIGHT_M) | (tilt > FALL_TILT_RAD)
    return {
        "fell": bool(fallen.any()),
        "fall_time_s": float(rows[np.argmax(fallen), GT["t"]]) if fallen.any() else None,
        "min_height_m": float(rows[:, GT["z"]].min()) if rows.size else float("nan"),
        "max_tilt_rad": float(tilt.max()) if rows.size else float("nan"),
        "distance_m": float(np.linalg.norm(xy[-1] - xy[0])) if rows.size else 0.0,
    }


def estimator_metrics(session: dict) -> dict | None:
    """Estimated body velocity against ground truth while the scored segments run."""
    odom, gt = session["odometry"], session["ground_truth"]
    if not odom.size or not gt.size:
        return None
    scored = [s for s in session["segments"] if s["scored"]]
    mask = np.zeros(len(odom), bool)
    for s in scored:
        mask |= (odom[:, 0] >= s["start_s"]) & (odom[:, 0] <= s["end_s"])
    rows = odom[mask]
    if not rows.size:
        return None
    true_vx = np.interp(rows[:, 0], gt[:, GT["t"]], gt[:, GT["vx"]])
    true_vy = np.interp(rows[:, 0], gt[:, GT["t"]], gt[:, GT["vy"]])
    return {"vx_rmse": _rmse(rows[:, 1] - true_vx), "vy_rmse": _rmse(rows[:, 2] - true_vy), "samples": int(len(rows))}


def simulator_metrics(session: dict, sim_log: Path | None = None) -> dict:
    """How well the simulator kept real time: a stalled simulator also stalls rt/lowstate, which
    the policy node and the safety monitor rightly treat as a fault.

    `physics_max_gap_ms` comes from the simulator's own recording (its physics thread's clock at each record
    tick, between rows one record period apart): the simulator's stalls. `ground_truth_max_gap_ms` is when
    this harness *received* ground truth: it adds the harness's own lag (a normal-priority process beside
    real-time ones), so it is not the robot's; in a demo it reached 337 ms while the physics loop's longest
    gap was 28 ms.
    """
    gt = session["ground_truth"]
    arrival = session.get("ground_truth_arrival_unix_s", gt[:, 0] if len(gt) else gt)  # older sessions: rows by arrival
    out = {"ground_truth_max_gap_ms": float(np.diff(arrival).max() * 1e3) if len(arrival) > 1 else float("nan")}
    if sim_log is not None and sim_log.is_file():
        with np.load(sim_log) as z:
            wall, sim_time = z["wall_time_s"], z["time_s"]
            period_s = 1.0 / float(z["record_rate_hz"])
        # Only between rows one record period apart in simulated time: where rows are missing (the writer's
        # pipe was full), the wall-clock gap is the recording's, not the physics loop's.
        consecutive = np.diff(sim_time) < 1.5 * period_s
        out["record_period_ms"] = period_s * 1e3
        out["recording_rows_missing"] = int(np.count_nonzero(~consecutive))
        gaps = np.diff(wall)[consecutive]
        out["physics_max_gap_ms"] = float(gaps.max() * 1e3) if len(gaps) else float("nan")
    if session["sim_diagnostics"]:
        last = session["sim_diagnostics"][-1][1]
        for key in ("realtime_factor", "late_steps", "resyncs", "lowcmd_accepted", "lowcmd_dropped"):
            if key in last:
                out[key] = float(last[key])
    return out


def timing_metrics(timing_path: Path | None, session: dict) -> dict:
    if timing_path is not None and timing_path.is_file():
        with np.load(timing_path) as z:
            summary = json.loads(str(z["summary"]))
        summary["source"] = timing_path.name
        return summary
    if session["diagnostics"]:  # the node's last diagnostics (covers the last minute)
        values = session["diagnostics"][-1][1]
        out = {k: float(v) for k, v in values.items() if k != "state"}
        out["source"] = "diagnostics"
        return out
    return {}


# ---- plots ------------------------------------------------------------------------------------
def _shade_segments(ax, segments) -> None:
    for i, s in enumerate(segments):
        ax.axvspan(s["start_s"], s["end_s"], color=f"C{i % 10}", alpha=0.08, lw=0)
        ax.text(s["start_s"], 1.0, s["name"], transform=ax.get_xaxis_transform(), fontsize=7, va="top")


def _command_steps(session: dict) -> tuple[np.ndarray, np.ndarray]:
    cmds = session["commands"]
    return (cmds[:, 0], cmds[:, 1:4]) if cmds.size else (np.empty(0), np.empty((0, 3)))


def plot_velocity(session: dict, path: Path) -> Path:
    import matplotlib.pyplot as plt

    gt = session["ground_truth"]
    t_cmd, cmd = _command_steps(session)
    fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    axes[0].plot(gt[:, GT["t"]], gt[:, GT["vx"]], lw=0.8, label="actual vx (ground truth, body)")
    axes[0].step(t_cmd, cmd[:, 0], where="post", color="k", lw=1.2, label="commanded vx")
    axes[0].set_ylabel("vx [m/s]")
    axes[1].plot(gt[:, GT["t"]], gt[:, GT["wz"]], lw=0.8, label="actual yaw rate")
    axes[1].step(t_cmd, cmd[:, 2], where="post", color="k", lw=1.2, label="commanded yaw rate")
    axes[1].set_ylabel("yaw rate [rad/s]")
    axes[1].set_xlabel("time [s]")
    # Gait changes (a multi-gait policy's, the first is its starting gait): a dashed line and the gait's name.
    for t_gait, gait in session.get("gaits", [])[1:]:
        for ax in axes:
            ax.axvline(t_gait, color="purple", ls="--", lw=1.0)
        axes[0].text(t_gait, 0.02, f" {gait}", transform=axes[0].get_xaxis_transform(), color="purple", fontsize=8)
    for ax in axes:
        _shade_segments(ax, session["segments"])
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_torques(sim_log: Path, path: Path) -> Path | None:
    import matplotlib.pyplot as plt

    if sim_log is None or not sim_log.is_file():
        return None
    with np.load(sim_log) as z:
        t, tau, names = z["time_s"], z["joint_tau"], [str(n) for n in z["joint_names"]]
    fig, axes = plt.subplots(3, 1, figsize=(9, 6.5), sharex=True)
    for j, joint in enumerate(("hip", "thigh", "calf")):
        for leg in range(4):
            i = 3 * leg + j
            axes[j].plot(t, tau[:, i], lw=0.6, label=names[i])
        axes[j].set_ylabel(f"{joint} torque [N·m]")
        axes[j].legend(loc="upper right", fontsize=7, ncol=4)
        axes[j].grid(alpha=0.3)
    axes[-1].set_xlabel("simulation time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_loop_period(timing_path: Path | None, path: Path) -> Path | None:
    import matplotlib.pyplot as plt

    if timing_path is None or not timing_path.is_file():
        return None
    with np.load(timing_path) as z:
        period_ms = z["period_s"] * 1e3
        nominal_ms = json.loads(str(z["summary"])).get("command_period_ms", 20.0)
    period_ms = period_ms[np.isfinite(period_ms)]
    if not period_ms.size:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.hist(period_ms, bins=80, color="C0")
    ax.axvline(nominal_ms, color="k", lw=1, ls="--", label=f"nominal {nominal_ms:g} ms")
    ax.set_yscale("log")
    ax.set_xlabel("LowCmd stream period [ms]")
    ax.set_ylabel("cycles")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_estimate(session: dict, path: Path) -> Path | None:
    import matplotlib.pyplot as plt

    odom, gt = session["odometry"], session["ground_truth"]
    if not odom.size:
        return None
    fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for ax, name, col in ((axes[0], "vx", 1), (axes[1], "vy", 2)):
        ax.plot(gt[:, GT["t"]], gt[:, GT[name]], lw=0.9, label=f"true {name}")
        ax.plot(odom[:, 0], odom[:, col], lw=0.7, label=f"estimated {name}")
        ax.set_ylabel(f"{name} [m/s]")
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3)
        _shade_segments(ax, session["segments"])
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- the report -------------------------------------------------------------------------------
def build_report(run_dir: Path, files: RunFiles, info: dict) -> tuple[Path, dict]:
    """Write metrics.json, plots/*.png and report.md into `run_dir`; returns (report path, metrics)."""
    import matplotlib

    matplotlib.use("Agg")
    session = load_session(files.session)
    faults = read_fault_log(files.fault_log)
    safety_damps = [s for s in session["safety_states"] if s[1].get("state") != "OK"]
    metrics = {
        "tracking": tracking_metrics(session),
        "falls": fall_metrics(session),
        "estimator": estimator_metrics(session),
        "loop_timing": timing_metrics(files.timing, session),
        "simulator": simulator_metrics(session, files.sim_log),
        "policy_states": session["policy_states"],
        "gaits": session["gaits"],  # [session time, gait] on every change, the first the starting gait
        "safety": {"fault_log": str(files.fault_log) if files.fault_log else None, "events": faults,
                   "damp_states_seen": safety_damps},
        "info": info,
    }
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2, default=str))
    plots_dir = run_dir / "plots"
    plots_dir.mkdir(exist_ok=True)
    plots = {
        "Commanded vs actual velocity": plot_velocity(session, plots_dir / "velocity.png"),
        "Joint torques (simulator's motor drivers)": plot_torques(files.sim_log, plots_dir / "joint_torques.png"),
        "Control-loop period": plot_loop_period(files.timing, plots_dir / "loop_period.png"),
        "Estimated vs true body velocity": plot_estimate(session, plots_dir / "estimate_vs_true.png"),
    }
    report = run_dir / "report.md"
    report.write_text(_markdown(run_dir, metrics, {k: v for k, v in plots.items() if v}, files))
    return report, metrics


def _fmt(x, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return "—" if np.isnan(x) else f"{x:.{digits}f}"
    return str(x)


def _markdown(run_dir: Path, m: dict, plots: dict[str, Path], files: RunFiles) -> str:
    info, tr, falls, timing = m["info"], m["tracking"], m["falls"], m["loop_timing"]
    lines = [
        f"# surrogait rehearsal — {info.get('run', run_dir.name)}",
        "",
        f"- Robot: {info.get('robot', 'go2')}",
        f"- Policy: `{info.get('policy_path')}` ({info.get('policy_source')})",
        f"- Processes: {', '.join(info.get('processes', []))}",
        f"- Session: {info.get('outcome', '')}",
        *([f"- Gaits: {', then '.join(f'{g} from {t:.1f} s' for t, g in m['gaits'])}"] if m.get("gaits") else []),
        f"- Machine: {info.get('machine', '')}",
        "",
        "## Tracking (ground truth vs command, body frame)",
        "",
        f"Scored after the first {tr['settle_s']:.1f} s of each segment. "
        f"**Walking vx RMSE: {_fmt(tr['walking_vx_rmse'])} m/s** over {tr['walking_samples']} samples.",
        "",
        "| segment | command (vx, vy, yaw) | mean vx | vx RMSE | vy RMSE | mean yaw rate | yaw-rate RMSE |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in tr["segments"]:
        cmd = ", ".join(f"{c:g}" for c in s["command"])
        lines.append(f"| {s['name']} | ({cmd}) | {_fmt(s['vx_mean'])} | {_fmt(s['vx_rmse'])} | {_fmt(s['vy_rmse'])} "
                     f"| {_fmt(s['yaw_rate_mean'])} | {_fmt(s['yaw_rate_rmse'])} |")
    lines += [
        "",
        "## Falls",
        "",
        f"- Fell: **{_fmt(falls['fell'])}**" + (f" at t = {falls['fall_time_s']:.1f} s" if falls.get("fall_time_s")
                                                 else ""),
        f"- Lowest base height {_fmt(falls['min_height_m'])} m (fall below {FALL_HEIGHT_M} m); largest roll/pitch "
        f"{_fmt(falls['max_tilt_rad'])} rad (fall beyond {FALL_TILT_RAD} rad); distance walked "
        f"{_fmt(falls.get('distance_m'), 2)} m",
        "",
        "## Control loop (policy node)",
        "",
    ]
    if timing:
        lines += [
            f"Source: {timing.get('source')}; {int(timing.get('cycles', 0))} LowCmd cycles at "
            f"{1e3 / timing.get('command_period_ms', 20.0):.0f} Hz (a policy step every "
            f"{timing.get('policy_period_ms', 20.0):g} ms), {int(timing.get('overruns', 0))} overruns.",
            "",
            "| quantity | p50 [ms] | p99 [ms] | max [ms] |",
            "|---|---|---|---|",
        ]
        nominal = f"{timing.get('command_period_ms', 20.0):g} ms"
        for key, label in (("period", "LowCmd period"), ("period_dev", f"period deviation from {nominal}"),
                           ("inference", "inference (onnxruntime)"), ("compute", "wake-up to LowCmd written"),
                           ("state_age", "lowstate arrival to LowCmd written")):
            if f"{key}_p50_ms" in timing:
                lines.append(f"| {label} | {_fmt(timing[f'{key}_p50_ms'])} | {_fmt(timing[f'{key}_p99_ms'])} "
                             f"| {_fmt(timing[f'{key}_max_ms'])} |")
    else:
        lines.append("No timing recorded.")
    sim = m["simulator"]
    lines += ["", "## Simulator", "",
              f"Real-time factor {_fmt(sim.get('realtime_factor'), 2)} (last report), {_fmt(sim.get('resyncs'), 0)} "
              "resyncs, " + (f"longest gap of its physics loop between records {_fmt(sim['physics_max_gap_ms'], 0)} ms "
                             f"(every {_fmt(sim['record_period_ms'], 0)} ms when on time; a stalled simulator stalls "
                             "rt/lowstate: a fault for the policy node and the safety monitor"
                             + (f"; the recording lost rows in {sim['recording_rows_missing']} places"
                                if sim.get("recording_rows_missing") else "") + "); "
                             if "physics_max_gap_ms" in sim else "no recording of its physics loop; ")
              + f"this harness received its ground truth with gaps up to {_fmt(sim['ground_truth_max_gap_ms'], 0)} ms "
              f"(the harness's own lag included); LowCmds accepted {_fmt(sim.get('lowcmd_accepted'), 0)}, dropped "
              f"{_fmt(sim.get('lowcmd_dropped'), 0)}."]
    steal = m["info"].get("host_steal") or {}
    if steal.get("available"):
        at = datetime.datetime.fromtimestamp(steal["worst_at_unix_s"], datetime.UTC).strftime("%H:%M:%S.%f")
        lines += ["", f"The hypervisor took {_fmt(steal['total_ms'], 0)} ms of CPU time from this machine's cores "
                  f"during the session, at most {_fmt(steal['worst_ms'], 0)} ms within "
                  f"{_fmt(steal['window_ms'], 0)} ms (the window ending {at[:-3]} UTC). A paused virtual machine "
                  "stalls every process at once, whatever its priority (surrogait_rehearsal.harness.host_steal)."]
    est = m["estimator"]
    lines += ["", "## State estimator", ""]
    lines.append(f"Estimated vs true body velocity while walking: vx RMSE {_fmt(est['vx_rmse'])} m/s, "
                 f"vy RMSE {_fmt(est['vy_rmse'])} m/s ({est['samples']} samples)." if est
                 else "No estimate to score (the estimator did not run, or no walking segment was reached).")
    safety = m["safety"]
    lines += ["", "## Safety events", ""]
    if safety["fault_log"] is None:
        lines.append("The safety monitor did not run.")
    elif not safety["events"]:
        lines.append(f"None in the fault log (`{Path(safety['fault_log']).name}`).")
    else:
        lines += [f"From the fault log `{Path(safety['fault_log']).name}`:", "",
                  "| time (UTC) | event | cause | detail | action |", "|---|---|---|---|---|"]
        for e in safety["events"]:
            time_utc = str(e.get("iso", e.get("time", "")))[11:23]
            lines.append(f"| {time_utc} | {e.get('event', '')} | {e.get('cause', '')} | {e.get('detail', '')} "
                         f"| {e.get('action', '')} |")
    lines += ["", "## Policy states", ""]
    lines += [f"- t = {t:6.2f} s: {state}" for t, state in m["policy_states"]]
    lines += ["", "## Plots", ""]
    for title, path in plots.items():
        lines += [f"### {title}", "", f"![{title}]({path.relative_to(run_dir)})", ""]
    if files.video and files.video.is_file():
        lines += ["## Video", "", f"[{files.video.name}]({files.video.name}) (offscreen MuJoCo rendering)", ""]
    if files.recording and files.recording.is_file():
        lines += ["## Session log", "", f"[{files.recording.name}]({files.recording.name}): every topic of the session "
                  "and the robot's wire (LowState, LowCmd), as an MCAP file that Foxglove Studio and PlotJuggler "
                  "open like a rosbag2 recording (the session recorder's, surrogait_recorder).", ""]
    lines += ["## Files", "", "- `metrics.json`: every number above", "- `session.npz`: the recorded session",
              "- `logs/`: each process's output", ""]
    return "\n".join(lines)
