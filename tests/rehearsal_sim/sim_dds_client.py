"""A tiny robot-side client for the simulator tests, run as its own process (one DDS domain each).

    python sim_dds_client.py --domain 11 --mode monitor --duration 2.0
    python sim_dds_client.py --domain 11 --mode stand --duration 3.0 [--bad-crc] [--rate-hz 500]

monitor: only listens to rt/lowstate, for `duration` seconds from the first message (0: until
stdin closes).
stand: also writes LowCmd at `--rate-hz` (default 50 Hz, a policy's rate), interpolating from the
first joint positions it sees to the default pose over 1 s with the nominal PD gains, then
holding (as a stand-up sequence does), for `duration` seconds of simulated time (lowstate ticks);
--bad-crc corrupts every message's CRC. Prints "receiving" once the stream is up, then one JSON
line with what it saw: per message wall time, tick, CRC validity, gamepad keys; last joints.

Every rt/lowstate is read as CDR bytes on a thread that waits on a DDS WaitSet (dds_raw_reader), decoded
by the byte image (go2_wire_image) and its CRC checked by go2_lowstate_layout (bit for bit the SDK's:
tests/core/test_lowstate_crc.py): ~0.05 ms a sample. The SDK's listener deserialised each one generically
and computed its CRC in Python (~0.8 ms): 40 % of a core at 250 Hz, in real time, which beside the Gazebo
stand-in and bridge passed Linux's real-time budget on 2 cores (rehearsal log 2026-12-07 (2)).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import numpy as np

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.realtime import enter_realtime
from surrogait_core.wire import go2_wire
from surrogait_core.wire.dds_raw_reader import RawReader
from surrogait_core.wire.go2_lowstate_layout import LowStateCrc
from surrogait_core.wire.go2_wire_image import LowStateDecoder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--mode", choices=("monitor", "stand"), default="monitor")
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--bad-crc", action="store_true")
    ap.add_argument("--rate-hz", type=float, default=50.0, help="LowCmd rate in stand mode (and the loop's)")
    ap.add_argument("--realtime-priority", type=int, default=20,
                    help="SCHED_FIFO priority where permitted (0: normal)")
    args = ap.parse_args()
    from cyclonedds.core import ReadCondition, WaitSet
    from cyclonedds.domain import DomainParticipant
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

    spec = load_robot_spec("go2")
    # Like the simulator in these tests: on a busy 2-core machine a normal-priority receiver
    # falls behind a 500 Hz stream and would measure its own lag, not the simulator's rate.
    # After the imports (a second of CPU that real time need not take), before DDS starts its threads.
    enter_realtime(args.realtime_priority)
    ChannelFactoryInitialize(args.domain, "lo")
    participant = DomainParticipant(args.domain)
    reader = RawReader(participant, go2_wire.LOWSTATE_TOPIC, LowState_, depth=64)
    waitset = WaitSet(participant)
    waitset.attach(ReadCondition(reader.reader, reader.any_state))
    decoder, crc = LowStateDecoder(), LowStateCrc()
    lock = threading.Lock()
    seen: list[dict] = []
    latest: dict = {}
    receiving = threading.Event()  # cleared when the session is over

    def receive() -> None:
        while receiving.is_set():
            if waitset.wait(50_000_000) <= 0:  # 50 ms, to notice the end
                continue
            wall = time.monotonic()
            for data, _ in reader.take():
                view = decoder.decode(data)
                row = {"wall": wall, "tick": view.tick_ms, "crc_ok": crc.check(data),
                       "keys": sorted(view.gamepad.keys), "lx": view.gamepad.lx}
                with lock:
                    seen.append(row)
                    latest["q"] = view.joint_pos
                    latest["view"] = view

    receiving.set()
    receiver = threading.Thread(target=receive, name="lowstate", daemon=True)
    receiver.start()
    pub = None
    if args.mode == "stand":
        pub = ChannelPublisher(go2_wire.LOWCMD_TOPIC, LowCmd_)
        pub.Init()
    kp = np.full(12, spec.nominal_kp)
    kd = np.full(12, spec.nominal_kd)
    zeros = np.zeros(12)

    # The clock starts at the first rt/lowstate, so a slow start-up on a loaded machine does not
    # shorten the session; "receiving" tells a waiting test that the stream is up.
    deadline = time.monotonic() + 30.0
    while not seen and time.monotonic() < deadline:
        time.sleep(0.005)
    print("receiving" if seen else "no lowstate", flush=True)
    if not seen:
        print(json.dumps({"rows": [], "lowcmds_written": 0}), flush=True)
        return
    t_start = time.monotonic()
    stdin_closed = threading.Event()
    if args.duration <= 0:  # run until the test closes our stdin
        threading.Thread(target=lambda: (sys.stdin.read(), stdin_closed.set()), daemon=True).start()
    q_start = tick0 = None
    written = 0
    k = 0

    def session_over() -> bool:
        if stdin_closed.is_set():
            return True
        if args.duration <= 0:
            return False
        if args.mode == "stand":  # in simulated time (the tick), so a slow machine still stands it up
            with lock:
                tick = seen[-1]["tick"]
            return tick0 is not None and tick - tick0 >= 1000.0 * args.duration
        return time.monotonic() - t_start >= args.duration

    while not session_over():
        if pub is not None:
            with lock:
                q_now, tick = latest.get("q"), seen[-1]["tick"]
            if q_start is None:
                q_start, tick0 = q_now.copy(), tick
            alpha = min(1.0, (tick - tick0) / 1000.0)  # 1 s ramp of simulated time
            q_target = (1.0 - alpha) * q_start + alpha * spec.default_joint_pos
            cmd = go2_wire.fill_motor_commands(go2_wire.new_lowcmd(), q_target, zeros, kp, kd, zeros)
            if args.bad_crc:
                cmd.crc = (cmd.crc ^ 0x1) & 0xFFFFFFFF
            pub.Write(cmd)
            written += 1
        k += 1
        time.sleep(max(0.0, t_start + k / args.rate_hz - time.monotonic()))

    receiving.clear()
    receiver.join(timeout=2.0)
    with lock:
        rows = list(seen)
        view = latest.get("view")
    out = {
        "t_start": t_start,
        "rows": rows,
        "lowcmds_written": written,
        "last_joint_pos": None if view is None else view.joint_pos.tolist(),
        "last_foot_force": None if view is None else view.foot_force.tolist(),
        "last_accel": None if view is None else view.accel_b.tolist(),
        "last_quat": None if view is None else view.quat_wxyz.tolist(),
    }
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
    # The report is out; skip interpreter teardown, where cyclonedds-python with a live listener
    # thread occasionally crashes (as the simulator does, see surrogait_rehearsal.sim.mujoco.node.main).
    sys.stdout.flush()
    os._exit(0)
