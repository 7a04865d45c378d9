"""The rehearsal simulator as a Go1: `go2_sim_node`'s process, node name `go1_sim`, robot go1 by default.

    go1_sim --ros-args --params-file config/go1_sim.yaml

It plays the robot's end of unitree_legged_sdk's UDP link (go1_udp_robot); no DDS on the robot side.
"""

from __future__ import annotations

from surrogait_rehearsal.sim.mujoco.config import PARAMETERS, Go1SimNodeConfig  # noqa: F401  (PARAMETERS: launch test)
from surrogait_rehearsal.sim.mujoco.node import run_simulator

NODE_NAME = "go1_sim"


def main() -> None:
    """Console-script entry point (`go1_sim`)."""
    run_simulator(NODE_NAME, Go1SimNodeConfig)


if __name__ == "__main__":
    main()
