"""The Go1's low-level link: unitree_legged_sdk 3.8's UDP packets, sent and read by this module through the
project's own codec (`surrogait_core.wire.go1_wire`, tested byte for byte against the SDK), on a plain socket.
No SDK binary is needed, so the Go1 runs wherever Python does (3.12, arm64); the SDK stays the tests' oracle.

In this stack the peer is the safety monitor on 127.0.0.1 (the only process with a socket to the robot),
which forwards accepted LowCmds to the robot and each LowState back; the node talks to it exactly as to the
robot. The socket is connect()ed to the peer, as the SDK's is, so the kernel hands it only that ip:port's
datagrams.

- `write` encodes the LowCmd (12 motors in servo mode 0x0A, the other 8 slots as the SDK's `InitCmdData`
  leaves them) only when the targets object changed, and sends the sealed packet every time (the stream
  re-sends between policy steps). Targets the packet's fixed point cannot carry raise `Go1WireError` before
  anything is sent, so the control loop damps instead of sending other values than it meant.
- `take` drains the socket and returns the newest LowState the SDK would accept (length, CRC, head: as its
  `Recv`); the others are counted in `refused`. UDP carries no sender stamp: `source_time_s` is this host's
  clock when the link took it (at most one command period after it arrived, as the robot answers every
  LowCmd).
- `protection_trip` runs the SDK's power protection (`go1_power_protect.PowerProtect`, the SDK's
  `Safety.PowerProtect` re-implemented and compared with it call by call) on the newest state: level
  1..10 = 100..1000 W on any motor's |tauEst · dq|, tripping from the sixth step over it; it does not change
  the command, so the node damps through its controller.
"""

from __future__ import annotations

import errno
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from surrogait_core.policy.policy_controller import MotorTargets
from surrogait_core.wire import go1_wire
from surrogait_core.wire.go1_power_protect import PowerProtect
from surrogait_core.wire.go2_wire import LowStateView
from surrogait_core.wire.latest_lowstate import LowStateSample
from surrogait_policy.robot_link import LinkError

if TYPE_CHECKING:
    from surrogait_policy.params import PolicyNodeParams

MAX_RECV_PER_TAKE = 1000  # bounds the drain should a peer flood the socket
RECV_BUFFER_BYTES = 2048  # above both packet lengths: a longer datagram is refused by its length
REMOTE_LOW_LEVEL = "L2+A, L2+B, then L1+L2+start"  # the Go1 remote's way into low-level mode


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


class Go1Link:
    """A UDP socket to `peer_ip:peer_port` from `local_port`, speaking the Go1's LowCmd and LowState packets."""

    def __init__(self, peer_ip: str, peer_port: int, local_port: int, power_protect_level: int = 0):
        if (problem := local_port_problem(local_port)) is not None:
            raise LinkError(problem)
        self.peer = f"{peer_ip}:{peer_port}"
        self.local_port = local_port
        self._socket: socket.socket | None = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._socket.bind(("", local_port))
            self._socket.connect((peer_ip, peer_port))  # the kernel then delivers only the peer's datagrams
        except OSError as e:
            self._socket.close()
            raise LinkError(f"cannot open the UDP link from local port {local_port} to {self.peer}: "
                            f"{e.strerror or e}") from e
        self._socket.setblocking(False)
        self._power = PowerProtect(power_protect_level) if power_protect_level else None
        self._filled: MotorTargets | None = None  # the targets encoded in `_packet`
        self._packet = b""
        self._state: LowStateView | None = None  # the newest LowState the peer sent
        self._pending: LowStateSample | None = None  # taken while waiting for the link, not yet handed out
        self.refused = 0  # datagrams the SDK would refuse (length, CRC, head)

    # ---- commands -------------------------------------------------------------------------------
    def write(self, targets: MotorTargets) -> None:
        """Servo targets for the 12 motors, encoded once; the same object again re-sends the sealed packet."""
        if targets is not self._filled:
            self._packet = go1_wire.encode_lowcmd(targets.q, targets.dq, targets.kp, targets.kd, targets.tau)
            self._filled = targets
        # A send that fails (peer not listening yet: the kernel reports its ICMP "port unreachable" on this
        # connected socket) is not an error here: no state comes back, and the controller damps on stale
        # state as for any silent robot.
        try:
            self._socket.send(self._packet)
        except (ConnectionRefusedError, BlockingIOError):
            pass

    # ---- state ----------------------------------------------------------------------------------
    def take(self) -> LowStateSample | None:
        sample = self._receive()
        if sample is None:
            sample = self._pending
        self._pending = None
        return sample

    def _receive(self) -> LowStateSample | None:
        newest = None
        took = 0
        for _ in range(MAX_RECV_PER_TAKE):
            try:
                packet = self._socket.recv(RECV_BUFFER_BYTES)
            except (BlockingIOError, InterruptedError):
                break
            except ConnectionRefusedError:
                continue  # an earlier send found no listener; nothing was received
            if go1_wire.lowstate_drop_reason(packet) is None:
                newest = packet
                took += 1
            else:
                self.refused += 1
        if newest is None:
            return None
        self._state = go1_wire.decode_lowstate(newest)
        # A packet whose length or CRC fails is refused (counted in `refused`); the ones taken are sealed.
        return LowStateSample(self._state, time.time(), received=took)

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
        if self._power is None or self._state is None:
            return None
        if self._power.over_limit(self._state.joint_tau_est, self._state.joint_vel):
            level = self._power.level
            return (f"unitree_legged_sdk power protection (PowerProtect level {level}: a motor's power over "
                    f"{10 * level} % of the SDK's limit, {self._power.limit_w:g} W, six policy steps running)")
        return None

    def close(self) -> None:
        if self._socket is None:
            return
        self._socket.close()  # the port is free again
        self._socket = None


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
