"""The Go1's low-level link: unitree_legged_sdk 3.8 UDP (`robot_interface.UDP`), as the SDK's examples use it.

In this stack the peer is the safety monitor on 127.0.0.1 (the only process with a socket to the robot),
which forwards accepted LowCmds to the robot and each LowState back; the node talks to it exactly as to the
robot. The SDK's socket is connect()ed to the peer, so it only takes datagrams from that ip:port.

- `write` fills the SDK's LowCmd (12 motors, servo mode 0x0A as `InitCmdData` sets it) only when the targets
  object changed, and sends the SDK's sealed packet every time (the stream re-sends between policy steps).
  Targets the packet's fixed point cannot carry raise `Go1WireError` before anything is sent, so the control
  loop damps instead of sending other values than it meant.
- `take` drains the socket (`Recv` until none waits) and returns the newest LowState. UDP carries no sender
  stamp: `source_time_s` is this host's clock when the link took it (at most one command period after it
  arrived, as the robot answers every LowCmd).
- `protection_trip` runs the SDK's `Safety.PowerProtect` with the newest state (level 1..10 = 10..100 % of its
  limit). Measured with this build: the limit is 100 W × level on any motor's |tauEst · dq|, and the SDK
  counts calls over it, returning -1 from the sixth on; it does not change the command, so the node damps
  through its controller.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from surrogait_core.policy.policy_controller import MotorTargets
from surrogait_core.wire import go1_wire, go2_wire
from surrogait_core.wire.go2_wire import LowStateView
from surrogait_core.wire.latest_lowstate import LowStateSample
from surrogait_policy.robot_link import LinkError

if TYPE_CHECKING:
    from surrogait_policy.params import PolicyNodeParams

LOW_LEVEL = 0xFF  # the SDK's LOWLEVEL
RECV_TOOK = 0  # UDP.Recv(): a datagram was taken (its CRC good)
RECV_NONE = -1  # none waits
MAX_RECV_PER_TAKE = 1000  # bounds the drain should a peer flood the socket
REMOTE_LOW_LEVEL = "L2+A, L2+B, then L1+L2+start"  # the Go1 remote's way into low-level mode


def view_from_sdk(state) -> LowStateView:
    """The SDK's LowState struct as the robot-independent LowStateView (motors in SDK order)."""
    motors = state.motorState  # one conversion of the 20 slots; index it, do not re-read the attribute
    rows = np.array([(m.q, m.dq, m.tauEst) for m in motors[: go1_wire.NUM_MOTORS]], dtype=np.float64)
    imu = state.imu
    return LowStateView(
        tick_ms=int(state.tick),
        quat_wxyz=np.array(imu.quaternion, dtype=np.float64),
        gyro_b=np.array(imu.gyroscope, dtype=np.float64),
        accel_b=np.array(imu.accelerometer, dtype=np.float64),
        joint_pos=rows[:, 0].copy(),
        joint_vel=rows[:, 1].copy(),
        joint_tau_est=rows[:, 2].copy(),
        foot_force=np.array(state.footForce, dtype=np.float64),
        gamepad=go2_wire.decode_gamepad(bytes(state.wirelessRemote)),
    )


def local_port_problem(port: int) -> str | None:
    """None when UDP `port` is free here. The SDK only prints a failed bind and carries on, deaf to replies."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind(("", port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return (f"udp_local_port {port} is already in use on this machine (another policy node? the "
                        "safety monitor's own socket?): choose a free port")
            return f"cannot bind udp_local_port {port}: {e}"
    return None


def sdk_socket_fd(port: int) -> int | None:
    """The descriptor of this process's UDP socket bound to `port`: the SDK keeps its socket to itself and
    never closes it (its destructor only prints "Closing UDP."), so `Go1Link.close` closes it by number."""
    for fd in (int(name) for name in os.listdir("/proc/self/fd")):
        try:
            copy = os.dup(fd)  # a socket object owns its descriptor: give it a copy
        except OSError:
            continue  # gone meanwhile (e.g. the listing's own)
        try:
            s = socket.socket(fileno=copy)  # family and type read from the descriptor
        except OSError:
            os.close(copy)  # not a socket
            continue
        with s:
            if s.family == socket.AF_INET and s.type == socket.SOCK_DGRAM and s.getsockname()[1] == port:
                return fd
    return None


class Go1Link:
    """The SDK's UDP socket to `peer_ip:peer_port` from `local_port`, its LowCmd, LowState and Safety."""

    def __init__(self, peer_ip: str, peer_port: int, local_port: int, power_protect_level: int = 0):
        if (problem := local_port_problem(local_port)) is not None:
            raise LinkError(problem)
        from unitree_legged_sdk import robot_interface as ri

        self.peer = f"{peer_ip}:{peer_port}"
        self.local_port = local_port
        self._udp = ri.UDP(LOW_LEVEL, local_port, peer_ip, peer_port)
        self._fd = sdk_socket_fd(local_port)
        self._cmd, self._state = ri.LowCmd(), ri.LowState()
        self._udp.InitCmdData(self._cmd)  # 20 slots in servo mode, the SDK's header and level flag
        self._safety = ri.Safety(ri.LeggedType.Go1)
        self._power_level = power_protect_level
        self._filled: MotorTargets | None = None  # the targets in the SDK's send buffer
        self._has_state = False  # the SDK's LowState holds one the robot sent
        self._pending: LowStateSample | None = None  # taken while waiting for the link, not yet handed out
        self.refused = 0  # datagrams the SDK refused (bad CRC)

    # ---- commands -------------------------------------------------------------------------------
    def write(self, targets: MotorTargets) -> None:
        """Servo targets for the 12 motors, sent once; the same object again re-sends the sealed packet."""
        if targets is not self._filled:
            go1_wire.check_command_values(targets.q, targets.dq, targets.kp, targets.kd, targets.tau)
            motors = self._cmd.motorCmd
            for i, (q, dq, kp, kd, tau) in enumerate(zip(targets.q.tolist(), targets.dq.tolist(),
                                                         targets.kp.tolist(), targets.kd.tolist(),
                                                         targets.tau.tolist(), strict=True)):
                m = motors[i]
                m.q, m.dq, m.Kp, m.Kd, m.tau = q, dq, kp, kd, tau
            self._udp.SetSend(self._cmd)  # the SDK packs and seals (CRC) its packet here
            self._filled = targets
        # A send that fails (peer not listening yet) is not an error here: no state comes back, and the
        # controller damps on stale state as for any silent robot.
        self._udp.Send()

    # ---- state ----------------------------------------------------------------------------------
    def take(self) -> LowStateSample | None:
        sample = self._receive()
        if sample is None:
            sample = self._pending
        self._pending = None
        return sample

    def _receive(self) -> LowStateSample | None:
        took_s = None
        took = 0
        for _ in range(MAX_RECV_PER_TAKE):
            code = self._udp.Recv()
            if code == RECV_NONE:
                break
            if code == RECV_TOOK:
                took_s = time.time()
                took += 1
            else:
                self.refused += 1  # -3: bad CRC; the SDK keeps the last good state
        if took_s is None:
            return None
        self._udp.GetRecv(self._state)
        self._has_state = True
        # The SDK refuses a packet whose CRC fails (counted in `refused`); the ones it took are sealed.
        return LowStateSample(view_from_sdk(self._state), took_s, received=took)

    def wait_until_up(self, damping: MotorTargets, timeout_s: float, period_s: float) -> None:
        """Stream `damping` every `period_s` until the first LowState comes back (kept for `take`);
        LinkError naming the peer and what to check if none does within `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.write(damping)
            sample = self._receive()
            if sample is not None:
                self._pending = sample
                return
            if time.monotonic() >= deadline:
                raise LinkError(self._silence_message(timeout_s))
            time.sleep(period_s)

    def _silence_message(self, timeout_s: float) -> str:
        via_monitor = self.peer.startswith("127.")
        return (f"no LowState from {self.peer} within {timeout_s:g} s of damping LowCmds sent from local port "
                f"{self.local_port}. Check: "
                + ("the safety monitor is running (it is the robot's only peer and forwards its LowState here; "
                   "udp_peer_port must be its port for the policy node); " if via_monitor else "")
                + f"the robot is on and in low-level mode (on the Go1's remote: {REMOTE_LOW_LEVEL}); the cable "
                "and the network interface wired to the robot (an address in 192.168.123.x)")

    # ---- the SDK's protection -------------------------------------------------------------------
    def protection_trip(self) -> str | None:
        if not self._power_level or not self._has_state:
            return None
        if self._safety.PowerProtect(self._cmd, self._state, self._power_level) < 0:
            return (f"unitree_legged_sdk power protection (PowerProtect level {self._power_level}: a motor's "
                    f"power over {10 * self._power_level} % of the SDK's limit, {100 * self._power_level} W)")
        return None

    def close(self) -> None:
        if self._udp is None:
            return
        self._udp = None
        if self._fd is not None:
            os.close(self._fd)  # the port is free again (the SDK's object is gone and would not close it)


def open_go1_link(params: PolicyNodeParams, damping: MotorTargets, command_period_s: float,
                  log: Callable[[str], None]) -> Go1Link:
    """The Go1 link, up: damping streamed until the first LowState; logs the link line once it is."""
    link = Go1Link(params.udp_peer_ip, params.udp_peer_port, params.udp_local_port, params.power_protect_level)
    try:
        link.wait_until_up(damping, params.robot_reply_timeout_s, command_period_s)
    except BaseException:
        link.close()
        raise
    log(f"unitree_legged_sdk UDP link to {params.udp_peer_ip}:{params.udp_peer_port} up "
        f"(local port {params.udp_local_port})")
    return link
