"""surrogait's ROS-free core, in rooms: `policy` (contract, observations, ONNX runtime, policy logic),
`wire` (Go2 DDS codec, CRC, motor-driver law), `estimator`, `safety`, `runtime` (parameter tables,
rclpy glue, loop pacing); at top level the robot spec and the ROS 2 interface names everyone shares."""
