"""The simulators' ground truth as a nav_msgs/Odometry (pose in the world frame, twist in the body frame)."""

from __future__ import annotations

from nav_msgs.msg import Odometry

from surrogait_rehearsal.sim.mujoco.core import GroundTruth


def fill_odometry(msg: Odometry, gt: GroundTruth) -> None:
    """Write `gt`'s base pose and twist into `msg` (its header and frames are the caller's)."""
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z = (float(v) for v in gt.base_pos_w)
    q.w, q.x, q.y, q.z = (float(v) for v in gt.base_quat_wxyz)
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    lin.x, lin.y, lin.z = (float(v) for v in gt.base_lin_vel_b)
    ang.x, ang.y, ang.z = (float(v) for v in gt.base_ang_vel_b)
