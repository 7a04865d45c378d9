"""The demo (the README's main command). Placeholder until the rehearsal exists."""

from surrogait_core.robot_spec import ROBOTS, load_robot_spec


def main() -> int:
    print("surrogait — what works so far:")
    for robot in ROBOTS:
        spec = load_robot_spec(robot)
        print(f"  {robot}: {spec.total_mass_kg:.2f} kg, stands at {spec.standing_base_height_m:.3f} m, "
              f"joints {', '.join(spec.joint_names[:3])}, ...")
    print("The trainer, the rehearsal and the ROS 2 nodes are not built yet.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
