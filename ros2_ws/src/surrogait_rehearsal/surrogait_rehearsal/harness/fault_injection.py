"""Fault-injection tools for rehearsals (never for a robot with people near it).

- `make_nan_policy`: wraps a real exported policy so its action becomes NaN whenever the
  commanded forward velocity exceeds a trigger; the file keeps the original's contract, so the
  policy node loads it as any policy and walks normally below the trigger.
- `safety_fault_injector rogue ...`: a rogue LowCmd writer (a separate process, killed by the
  test): stiff commands with one joint's target beyond its limit, or NaN — on the Go2's DDS wire,
  or (`--robot go1 --udp-port P`) to the Go1 safety monitor's gateway where the policy node sends.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

import numpy as np

from surrogait_core.policy.contract import read_contract
from surrogait_core.robot_links import robot_link
from surrogait_core.robot_spec import load_robot_spec

NAN_TRIGGER_KEY = "surrogait.fault_injection"
FIRST_ROGUE_LINE = "first rogue LowCmd sent at monotonic"  # + the time (CLOCK_MONOTONIC, any process's)


def command_vx_index(contract) -> tuple[int, float]:
    """Column of the commanded vx in the observation, and the scale the builder applies to it."""
    offset = 0
    for term in contract.observation:
        if term.name == "command":
            return offset, term.scale
        offset += term.size
    raise ValueError("the policy's observation has no 'command' term: cannot trigger on the commanded velocity")


def make_nan_policy(src: str | Path, dst: str | Path, vx_trigger_mps: float) -> Path:
    """Copy `src` to `dst` with action = NaN whenever the commanded vx > vx_trigger_mps."""
    import onnx
    from onnx import helper, numpy_helper

    contract = read_contract(src)
    col, scale = command_vx_index(contract)
    model = onnx.load(str(src))
    graph = model.graph
    obs_name = graph.input[0].name
    out = graph.output[0]
    inner = out.name + "_before_fault"
    for node in graph.node:
        node.output[:] = [inner if o == out.name else o for o in node.output]
    graph.initializer.extend([
        numpy_helper.from_array(np.array([col], np.int64), "fault_vx_col"),
        numpy_helper.from_array(np.array(vx_trigger_mps * scale, np.float32), "fault_vx_trigger"),
        numpy_helper.from_array(np.array(np.nan, np.float32), "fault_nan"),
    ])
    graph.node.extend([
        helper.make_node("Gather", [obs_name, "fault_vx_col"], ["fault_vx"], axis=1),  # (batch, 1)
        helper.make_node("Greater", ["fault_vx", "fault_vx_trigger"], ["fault_on"]),
        helper.make_node("Where", ["fault_on", "fault_nan", inner], [out.name]),
    ])
    entry = model.metadata_props.add()
    entry.key, entry.value = NAN_TRIGGER_KEY, f"action = NaN when commanded vx > {vx_trigger_mps} m/s"
    onnx.checker.check_model(model)
    dst = Path(dst)
    onnx.save(model, str(dst))
    return dst


def rogue_lowcmd(robot: str, joint: str, target: float):
    """A stiff command holding the default pose except `joint` (SDK name), sent to `target`."""
    from surrogait_core.wire import go2_wire

    spec = load_robot_spec(robot)
    if joint not in spec.joint_names:
        raise ValueError(f"unknown joint {joint!r}; expected one of {', '.join(spec.joint_names)}")
    q = spec.default_joint_pos.copy()
    q[spec.joint_names.index(joint)] = target
    n = spec.num_joints
    return go2_wire.fill_motor_commands(go2_wire.new_lowcmd(), q, np.zeros(n), np.full(n, spec.nominal_kp),
                                        np.full(n, spec.nominal_kd), np.zeros(n))


def rogue_go1_packet(joint: str, target: float) -> bytes:
    """The Go1 form of `rogue_lowcmd`, packed as the SDK would (NaN allowed: it is the fault)."""
    from surrogait_core.wire import go1_wire

    spec = load_robot_spec("go1")
    if joint not in spec.joint_names:
        raise ValueError(f"unknown joint {joint!r}; expected one of {', '.join(spec.joint_names)}")
    q = spec.default_joint_pos.copy()
    q[spec.joint_names.index(joint)] = target
    n = spec.num_joints
    return go1_wire.encode_lowcmd(q, np.zeros(n), np.full(n, spec.nominal_kp), np.full(n, spec.nominal_kd),
                                  np.zeros(n), check=False)


def run_rogue_go1(udp_port: int, joint: str, target: float, rate_hz: float) -> int:
    import socket

    packet = rogue_go1_packet(joint, target)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print(f"rogue: sending stiff Go1 LowCmds with {joint} -> {target} rad at {rate_hz:g} Hz to 127.0.0.1:{udp_port}",
          flush=True)
    period, t_next = 1.0 / rate_hz, time.monotonic()
    first = True
    while not stop:
        sent_at = time.monotonic()
        sock.sendto(packet, ("127.0.0.1", udp_port))
        if first:
            print(f"{FIRST_ROGUE_LINE} {sent_at:.6f}", flush=True)
            first = False
        t_next += period
        time.sleep(max(0.0, t_next - time.monotonic()))
    return 0


def run_rogue(domain: int, iface: str, robot: str, joint: str, target: float, rate_hz: float) -> int:
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

    from surrogait_core.wire import go2_wire

    msg = rogue_lowcmd(robot, joint, target)
    ChannelFactoryInitialize(domain, iface)
    pub = ChannelPublisher(go2_wire.LOWCMD_TOPIC, LowCmd_)
    pub.Init()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print(f"rogue: writing stiff LowCmds with {joint} -> {target} rad at {rate_hz:g} Hz", flush=True)
    period, t_next = 1.0 / rate_hz, time.monotonic()
    while not stop:
        pub.Write(msg)
        t_next += period
        time.sleep(max(0.0, t_next - time.monotonic()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="safety_fault_injector", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="tool", required=True)
    nan = sub.add_parser("nan-policy", help="copy a policy so its output is NaN above a commanded vx")
    nan.add_argument("src")
    nan.add_argument("dst")
    nan.add_argument("--vx-trigger", type=float, default=0.75)
    rogue = sub.add_parser("rogue", help="write stiff LowCmds with an out-of-limit (or NaN) target until killed")
    rogue.add_argument("--domain", type=int, required=True)
    rogue.add_argument("--interface", default="lo")
    rogue.add_argument("--robot", default="go2")
    rogue.add_argument("--joint", default="FR_hip")
    rogue.add_argument("--target", type=float, default=1.5, help="rad (nan allowed)")
    rogue.add_argument("--rate", type=float, default=50.0)
    rogue.add_argument("--udp-port", type=int, default=0, help="go1: the safety monitor's policy port")
    args = parser.parse_args(argv)
    try:
        if args.tool == "nan-policy":
            print(make_nan_policy(args.src, args.dst, args.vx_trigger))
            return 0
        if robot_link(args.robot).monitor_is_gateway:  # the rogue sends to the gateway, where the policy node does
            if not args.udp_port:
                raise ValueError("--robot go1 needs --udp-port (the safety monitor's udp_policy_port)")
            return run_rogue_go1(args.udp_port, args.joint, args.target, args.rate)
        return run_rogue(args.domain, args.interface, args.robot, args.joint, args.target, args.rate)
    except (ValueError, OSError) as e:
        print(f"safety_fault_injector: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
