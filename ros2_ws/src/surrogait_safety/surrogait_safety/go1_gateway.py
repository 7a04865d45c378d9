"""The Go1's safety gateway: the one socket to the robot, with the safety monitor deciding what passes.

On the Go2 the monitor listens to a shared DDS wire and writes damping beside the policy node. The
Go1's low-level link is point-to-point UDP (unitree_legged_sdk): nobody else sees the packets, and
a second writer would interleave with the policy's stream rather than override it. So on the Go1
the monitor owns the link:

    policy node --LowCmd--> [policy port] gateway [robot socket] --LowCmd--> robot 192.168.123.10:8007
    policy node <-LowState-                       <-LowState--
    estimator   <-LowState- (a copy, to the estimator port)
    recorder    <-LowState and LowCmd- (a copy of what the robot sent and was sent, to the recorder port)

Every LowCmd from the policy node is judged before it is forwarded (`judge`, given by the node):
the packet itself or a damping packet instead. LowStates are forwarded at once, before anything
else looks at them. The node also sends through `send_to_robot` (its damping, a keep-alive).

Why a thread that blocks in select(): forwarding latency is added to every command the robot
gets; a poll at the check rate (5 ms) would add up to a period. The thread wakes on arrival.
"""

from __future__ import annotations

import dataclasses
import select
import socket
import threading
import time
from collections.abc import Callable

from surrogait_core.wire import go1_wire

RECV_BUFFER_BYTES = 2048  # above both packet lengths: a longer datagram is refused, not truncated silently


@dataclasses.dataclass(frozen=True)
class GatewayAddresses:
    robot_ip: str = go1_wire.ROBOT_IP
    robot_port: int = go1_wire.ROBOT_PORT
    robot_local_port: int = go1_wire.LOCAL_PORT  # the gateway's socket towards the robot
    policy_port: int = go1_wire.MONITOR_POLICY_PORT  # where the policy node sends (127.0.0.1)
    estimator_port: int = go1_wire.ESTIMATOR_LOWSTATE_PORT  # 0 = forward no LowState to an estimator
    # Nobody else sees a point-to-point link: the session recorder (surrogait_recorder) gets a copy of every
    # LowState from the robot and every LowCmd sent to it, after they went on (0 = none; nobody listening costs
    # one local datagram each, no error: an unconnected UDP socket is not told of a closed port).
    recorder_port: int = go1_wire.RECORDER_PORT


@dataclasses.dataclass
class GatewayCounts:
    lowcmd_forwarded: int = 0
    lowcmd_replaced: int = 0  # judged unsafe: damping went to the robot instead
    lowcmd_refused: int = 0  # not a LowCmd the robot would take (length, CRC, head, level): nothing forwarded
    lowstate_forwarded: int = 0
    own_sent: int = 0  # the monitor's own packets (damping, keep-alive)


class Go1Gateway:
    """The two sockets and the forwarding thread. `judge(packet, arrival_s)` returns the bytes to send
    to the robot (the packet, or damping) or None to send nothing; `on_lowstate(packet, arrival_s)` sees
    each LowState after it was forwarded. Both run on the gateway's thread."""

    def __init__(self, addresses: GatewayAddresses, judge: Callable[[bytes, float], bytes | None],
                 on_lowstate: Callable[[bytes, float], None], fail_safe_packet: bytes, bind_ip: str = "") -> None:
        """`fail_safe_packet`: sent in place of a command whose judgement raised (damping);
        `bind_ip`: the local address towards the robot ("" = any; the interface's address on a robot)."""
        self.addresses = addresses
        self._fail_safe_packet = fail_safe_packet
        self.errors: list[str] = []  # judgement errors (each one answered with the fail-safe packet)
        self._judge, self._on_lowstate = judge, on_lowstate
        self.counts = GatewayCounts()
        self._policy = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._robot = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._policy.bind(("127.0.0.1", addresses.policy_port))
            self._robot.bind((bind_ip, addresses.robot_local_port))
            # connect(): the kernel then delivers only the robot's datagrams to this socket.
            self._robot.connect((addresses.robot_ip, addresses.robot_port))
        except OSError as e:
            self.close()
            raise OSError(f"Go1 gateway: cannot open its sockets (policy side 127.0.0.1:{addresses.policy_port}, "
                          f"robot side port {addresses.robot_local_port} -> {addresses.robot_ip}:"
                          f"{addresses.robot_port}): {e.strerror or e}; is another safety monitor (or the "
                          "vendor's SDK example) running?") from e
        self._policy.setblocking(False)
        self._robot.setblocking(False)
        self._policy_peer: tuple[str, int] | None = None  # the policy node's address: LowStates go back there
        self._recorder = ("127.0.0.1", addresses.recorder_port) if addresses.recorder_port else None
        self._send_lock = threading.Lock()
        self.last_robot_send_s: float | None = None  # monotonic
        self.last_lowstate_s: float | None = None
        self._running = threading.Event()
        self._thread = threading.Thread(target=self._run, name="go1_gateway", daemon=True)

    def start(self) -> None:
        self._running.set()
        self._thread.start()

    def stop(self) -> None:
        self._running.clear()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
        self.close()

    def close(self) -> None:
        self._policy.close()
        self._robot.close()

    def send_to_robot(self, packet: bytes, own: bool = True) -> None:
        with self._send_lock:
            try:
                self._robot.send(packet)
            except OSError:
                return  # ECONNREFUSED from an earlier datagram (no robot yet): the next one is tried anew
            self.last_robot_send_s = time.monotonic()
            if own:
                self.counts.own_sent += 1
            self._copy_to_recorder(packet)

    def _copy_to_recorder(self, packet: bytes) -> None:
        if self._recorder is not None:
            try:
                self._policy.sendto(packet, self._recorder)
            except OSError:
                pass  # a full socket buffer: the recording misses a packet, the robot misses nothing

    def _run(self) -> None:
        sockets = [self._robot, self._policy]
        estimator = ("127.0.0.1", self.addresses.estimator_port) if self.addresses.estimator_port else None
        while self._running.is_set():
            ready, _, _ = select.select(sockets, [], [], 0.05)
            if self._robot in ready:  # states first: the policy node is waiting for them
                self._drain_robot(estimator)
            if self._policy in ready:
                self._drain_policy()

    def _drain_robot(self, estimator: tuple[str, int] | None) -> None:
        while True:
            try:
                packet = self._robot.recv(RECV_BUFFER_BYTES)
            except (BlockingIOError, ConnectionRefusedError):
                return
            now = time.monotonic()
            if self._policy_peer is not None:
                self._policy.sendto(packet, self._policy_peer)
            if estimator is not None:
                self._policy.sendto(packet, estimator)
            self._copy_to_recorder(packet)
            self.counts.lowstate_forwarded += 1
            self.last_lowstate_s = now
            self._on_lowstate(packet, now)

    def _drain_policy(self) -> None:
        while True:
            try:
                packet, source = self._policy.recvfrom(RECV_BUFFER_BYTES)
            except BlockingIOError:
                return
            self._policy_peer = source
            try:
                out = self._judge(packet, time.monotonic())
            except Exception as e:  # a bug in judging must not let the command through, nor stop the link
                self.errors.append(f"{type(e).__name__}: {e}")
                out = self._fail_safe_packet
            if out is None:
                self.counts.lowcmd_refused += 1
                continue
            self.send_to_robot(out, own=False)
            if out is packet:
                self.counts.lowcmd_forwarded += 1
            else:
                self.counts.lowcmd_replaced += 1
