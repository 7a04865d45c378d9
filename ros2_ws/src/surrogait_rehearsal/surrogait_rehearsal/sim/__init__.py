"""The rehearsal's simulators, one room each (`mujoco`: the Go2 and Go1 on their wires; `gazebo`: the bridge from
Gazebo to the Go2's wire and its MuJoCo stand-in), and the pieces they share beside them (the motor driver, the
LowState writer, the recorder, the video)."""
