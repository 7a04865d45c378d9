"""The Go1's end of its low-level UDP link (unitree_legged_sdk 3.8), played by the simulator.

The Go1 has no publish rate of its own on this link: it answers each LowCmd it accepts with one
LowState, sent to the address the LowCmd came from (the vendor's examples send and receive once
per 2 ms). The SDK's socket is connect()ed to the robot's ip:port, so the answer must leave from
the socket the LowCmd arrived on. ROS-free: the simulator node polls `exchange` once per physics
step, before the step, so the LowState reports the state measured before the command acts.

Optionally every accepted LowCmd and every LowState sent is copied, raw, to a tap port on
127.0.0.1 for the rehearsal's scoring (614- and 807-byte datagrams: the lengths tell them apart).
"""

from __future__ import annotations

import socket

import numpy as np

from surrogait_core.wire import go1_wire
from surrogait_core.wire.go2_wire import Gamepad, LowStateView
from surrogait_rehearsal.sim.lowstate_writer import foot_force_counts, rpy_from_quat
from surrogait_rehearsal.sim.motor_driver import LowCmdGate
from surrogait_rehearsal.sim.mujoco.core import Go2Sim, RobotReadout

TAP_HOST = "127.0.0.1"
# Datagrams judged per physics step at most: a flood waits for the next steps rather than
# stalling the physics (a 500 Hz client leaves one or two per step).
MAX_DATAGRAMS_PER_STEP = 64
_NO_GAMEPAD = Gamepad(frozenset(), 0.0, 0.0, 0.0, 0.0)  # unused: the raw wirelessRemote bytes are sent


def lowstate_packet(readout: RobotReadout, tick_ms: int, wireless_remote: bytes) -> bytes:
    """A sealed Go1 LowState from the simulated robot's sensors (rpy and foot force as the Go2 reports them)."""
    view = LowStateView(
        tick_ms=tick_ms, quat_wxyz=readout.quat_wxyz, gyro_b=readout.gyro_b, accel_b=readout.accel_b,
        joint_pos=readout.joint_pos, joint_vel=readout.joint_vel, joint_tau_est=readout.joint_tau_est,
        foot_force=np.array(foot_force_counts(readout.foot_force_n), dtype=np.float64), gamepad=_NO_GAMEPAD)
    return go1_wire.encode_lowstate(view, np.array(rpy_from_quat(readout.quat_wxyz)),
                                    wireless_remote=wireless_remote)


class Go1UdpRobot:
    """A non-blocking UDP socket bound at `host`:`port`: takes LowCmds into `gate`, answers with LowStates.

    OSError if the address cannot be bound (in use, or not an address of this machine).
    """

    def __init__(self, gate: LowCmdGate, host: str = "127.0.0.1", port: int = go1_wire.ROBOT_PORT,
                 tap_port: int = 0) -> None:
        self.gate = gate
        self.send_errors = 0  # a LowState or tap copy the kernel refused (buffer full, peer gone)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._sock.bind((host, port))
        except OSError:
            self._sock.close()
            raise
        self._sock.setblocking(False)
        self.address: tuple[str, int] = self._sock.getsockname()
        # A separate, unconnected socket: copies never appear to come from the robot, and a tap
        # nobody listens on cannot turn into errors on the robot's socket.
        self._tap = None
        if tap_port:
            self._tap = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._tap.setblocking(False)
        self._tap_address = (TAP_HOST, tap_port)

    def exchange(self, sim: Go2Sim, lowstate_enabled: bool, wireless_remote: bytes) -> int:
        """Judge every waiting datagram; answer each accepted LowCmd with one LowState (only while
        `lowstate_enabled`) measured now, at tick = simulated ms. Returns the LowStates sent."""
        sent = 0
        lowstate = None  # one readout per step, however many LowCmds arrived in it
        for _ in range(MAX_DATAGRAMS_PER_STEP):
            try:
                # One byte more than a LowCmd, so a longer datagram still reads as too long.
                packet, source = self._sock.recvfrom(go1_wire.LOWCMD_LENGTH + 1)
            except BlockingIOError:
                break
            except OSError:
                continue  # an ICMP error queued by an earlier reply (Linux reports some): not a datagram
            if not self.gate.receive_go1_packet(packet):
                continue
            self._copy_to_tap(packet)
            if not lowstate_enabled:
                continue
            if lowstate is None:
                lowstate = lowstate_packet(sim.readout(), int(round(sim.time_s * 1000.0)), wireless_remote)
            if self._send(self._sock, lowstate, source):
                sent += 1
                self._copy_to_tap(lowstate)
        return sent

    def _copy_to_tap(self, packet: bytes) -> None:
        if self._tap is not None:
            self._send(self._tap, packet, self._tap_address)

    def _send(self, sock: socket.socket, packet: bytes, address: tuple[str, int]) -> bool:
        try:
            sock.sendto(packet, address)
            return True
        except OSError:
            self.send_errors += 1
            return False

    def close(self) -> None:
        self._sock.close()
        if self._tap is not None:
            self._tap.close()
