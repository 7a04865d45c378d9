"""surrogait's ROS-free core: robot spec, policy contract, observations, ONNX runtime, wire codec."""
