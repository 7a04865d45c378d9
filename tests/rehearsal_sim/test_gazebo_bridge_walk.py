"""The Gazebo rehearsal's path, walked end to end with a MuJoCo stand-in where Gazebo would be.

Separate processes, as `python -m surrogait_rehearsal.demo --simulator gazebo-standin` starts them
(surrogait_rehearsal.harness.gazebo), each with its package's parameters file: `gz_standin` (MuJoCo on
the ROS topics ros_gz_bridge would carry from gz sim), `gazebo_bridge` (those topics <-> the Go2's
unitree_sdk2 DDS wire; PD on each new joint state, at most 500 Hz, the force held until the next;
LowStates at 250 Hz), and the unchanged `policy_node` (the shipped go2_trot.onnx), `estimator_node` and
`safety_monitor`. The operator drives the demo's own scripted session (`run_session`): stand up, walk
0.5 m/s, walk 1.0 m/s, stop, damp.

What a pass proves: the bridge's side of the contract — joints mapped by name into SDK order, foot
forces from force_torque wrenches, IMU and ticks from the Gazebo messages, CRC-checked LowCmds, PD
from the latest LowCmd at the bridge's rate with Gazebo's hold-the-latest-force semantics, ground
truth republished — is enough for the deployment nodes to stand the robot up and walk it with no fall
and no safety fault, and that the demo's launch path for Gazebo works.

What it cannot prove: anything about Gazebo itself. The physics is still MuJoCo (its soft contacts,
its integrator, the MJCF's armature, which the SDF cannot express), so the real gz sim's contact
model (DART/bullet), its 1 kHz stepping, its sensor update schedule and noise, the odometry
publisher's velocity smoothing, and ros_gz_bridge's conversion and extra transport hop (latency,
queueing under load) are not exercised. The SDF model and the ros_gz_bridge file are only checked
statically (tests/foundation, tests/launch).

vx RMSE limit 0.2 m/s over the walking segments: the MuJoCo rehearsal's limit (issue 5,
tests/policy/test_rehearsal_walk.py). The physics is the same; the bridge makes each force act one
physics step (2 ms) after the state it comes from and holds it ~2 ms, and the policy sees LowStates at
250 Hz instead of 500: well inside the 0-20 ms of action delay the shipped policy was trained with (its
20 ms-delay evaluation has vx RMSE 0.175), so it must meet the same limit. Measured here: 0.11-0.14.
The walk is also the test of the rate: below 250 Hz of PD it tripped the monitor's joint-speed limit
(sim.gazebo.bridge_config).

Two stacks. `bridge_and_policy` (stand-in, bridge, policy node) is the bridge's contract with the
control path, at the package rates. `full_deployment` adds the estimator and the safety monitor, as the
demo runs it, and runs on 2 cores (CI's machine) at half the rate: at the package rates the five
real-time processes need 172 % of 2 cores (bench/results/rehearsal_cpu_share_standin_full.md, 5-6 % idle),
and Linux answers a saturated core by stopping its real-time threads for up to 50 ms a second
(bench/results/rt_stall_probe_saturated.md), which the monitor and the policy node rightly call faults
(it failed 2 of 5 CI runs so). For this test only, the stand-in publishes joint states at 250 Hz and the
bridge's PD runs at 250 Hz (MIN_CONTROL_RATE_HZ, sim.gazebo.bridge_config), and the estimator runs at
normal scheduling (the monitor trusts its height only while it says it is fresh, and uses the legs
otherwise): the stack then takes 146 % of the 2 cores, 124 % of it real-time
(bench/results/rehearsal_cpu_share_standin_full_2cores.md), and walked 5 of 5 runs with no fault on a
machine shared with other jobs (load average ~10). The package rates are tested by `bridge_and_policy`.

On the 2-core AMD EPYC that CI now runs on (Python about twice as slow), even the half-rate stack does not fit:
its real-time processes took 145-200 % of the 190 % Linux gives them (per second, from /proc), the policy node
was damped for a 43 ms silence in the landing CI of 2026-12-07 and in 1 of 5 runs here, with the stand-in at
normal scheduling its physics fell to 0.75 of real time, and LowStates at 125 Hz changed nothing (rehearsal log
2026-12-07 (4)). So `full_deployment` runs where there are MIN_CPUS_FULL_STANDIN_REHEARSAL (3) CPUs or more and is
skipped, saying why, on fewer: on 2 cores it is not tested, and a skip is not a pass.
"""

import time

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_rehearsal.harness.gazebo import MIN_CPUS_FULL_STANDIN_REHEARSAL, usable_cpus
from surrogait_rehearsal.harness.operator import SessionError
from surrogait_rehearsal.harness.session import Session, SessionConfig, walk_test_segments
from surrogait_rehearsal.report import fall_metrics, load_session, read_fault_log, tracking_metrics
from surrogait_rehearsal.sim.gazebo.bridge_config import DEFAULT_CONTROL_RATE_HZ, MIN_CONTROL_RATE_HZ

OWN_TARGET = "make test-gazebo: the Gazebo path's rehearsals, a target of their own (scripts/run_tests.py)"

DOMAIN = 59  # unused elsewhere in tests/
VX_RMSE_LIMIT = 0.2  # m/s over the walking segments, as the MuJoCo rehearsal (docstring)
SEGMENTS = walk_test_segments()
# 2 cores: half the Gazebo-side rate and an estimator at normal scheduling for the whole stack (docstring).
HALF_RATE = {"gz_standin": {"joint_state_rate_hz": MIN_CONTROL_RATE_HZ},
             "gazebo_bridge": {"control_rate_hz": MIN_CONTROL_RATE_HZ},
             "estimator_node": {"realtime_priority": 0}}
STACKS = {  # name: (deployment nodes beside the stand-in and the bridge, their parameters, the bridge's rate)
    "bridge_and_policy": (("policy_node",), {}, DEFAULT_CONTROL_RATE_HZ),
    "full_deployment": (("estimator_node", "safety_monitor", "policy_node"), HALF_RATE, MIN_CONTROL_RATE_HZ),
}


@pytest.mark.rehearsal
@pytest.mark.parametrize("stack", list(STACKS))
def test_shipped_policy_stands_up_and_walks_through_the_gazebo_bridge(tmp_path, stack):
    nodes, params, bridge_rate_hz = STACKS[stack]
    if stack == "full_deployment" and usable_cpus() < MIN_CPUS_FULL_STANDIN_REHEARSAL:
        pytest.skip(f"the full deployment beside the Gazebo stand-in needs {MIN_CPUS_FULL_STANDIN_REHEARSAL} CPUs "
                    f"and this process may use {usable_cpus()}: on 2 its real-time processes took 145-200 % of the "
                    "190 % Linux allows them (rehearsal log 2026-12-07 (4)); not tested here")
    # No session recorder: on 2 cores this test keeps to the processes it judges (the recorder's own tests:
    # tests/recorder; the demo's Gazebo stand-in session records).
    config = SessionConfig(tmp_path, domain=DOMAIN, simulator="gazebo-standin", nodes=nodes, params=params,
                           operator_name="surrogait_demo", record=False)
    with Session(config) as session:
        try:
            started = session.start()
            assert started == ["gz_standin", "gazebo_bridge", *nodes]
            session.run_session(SEGMENTS)
            time.sleep(1.5)  # the robot settles in damping: the forces Gazebo holds at the end are then damping's
        except SessionError as e:
            pytest.fail(f"the rehearsal session failed: {e}\nbridge: "
                        f"{session.operator.latest_statuses().get('gazebo_bridge')}\n{session.process_logs(25)}")
        bridge_status = session.operator.latest_statuses()["gazebo_bridge"]
    fault_log, standin_log = session.files.fault_log, session.files.sim_log
    recorded = load_session(session.files.session)
    states = [state for _, state in recorded["policy_states"]]
    assert states[:4] == ["PASSIVE", "STAND_UP", "READY", "WALK"], states
    assert states[-1] == "DAMP"

    falls = fall_metrics(recorded)
    assert not falls["fell"], f"the robot fell: {falls}"
    faults = [e for e in read_fault_log(fault_log) if e["event"] == "fault"] if "safety_monitor" in nodes else []
    assert not faults, f"the safety monitor raised a fault on a policy that honours its contract: {faults}"
    tracking = tracking_metrics(recorded)
    per_segment = {s["name"]: round(s["vx_mean"], 3) for s in tracking["segments"]}
    print(f"walking vx RMSE {tracking['walking_vx_rmse']:.3f} m/s; mean vx per segment {per_segment}; "
          f"bridge {bridge_status}")
    assert tracking["walking_vx_rmse"] <= VX_RMSE_LIMIT, (
        f"vx RMSE {tracking['walking_vx_rmse']:.3f} m/s over the walking segments (limit {VX_RMSE_LIMIT}); "
        f"mean vx per segment: {per_segment}")

    # The bridge judged every LowCmd (CRC, head, level flag) and dropped none, kept its rate, and never saw
    # Gazebo go silent. Its count is the status read after the final damp: at least the policy node's 500 Hz
    # stream from WALK to DAMP (a fixed 5000 failed a CI at 4410: the session is ~10 s of LowCmds in all).
    walking_s = (next(t for t, state in reversed(recorded["policy_states"]) if state == "DAMP")
                 - next(t for t, state in recorded["policy_states"] if state == "WALK"))
    assert bridge_status["lowcmd_dropped"] == "0", bridge_status
    assert int(bridge_status["lowcmd_accepted"]) > 0.8 * 500 * walking_s, (walking_s, bridge_status)
    assert float(bridge_status["loop_rate_hz"]) > 0.9 * bridge_rate_hz, bridge_status
    assert bridge_status["gazebo_state"] == "fresh" and bridge_status["input_errors"] == "0"
    with np.load(standin_log) as log:
        assert np.all(np.abs(log["joint_tau"]) <= load_robot_spec("go2").joint_torque_limit + 1e-9)
        # The last forces Gazebo holds are the damping the session ends with: small, not a stiff pose.
        assert np.abs(log["joint_tau"][-1]).max() < 5.0
