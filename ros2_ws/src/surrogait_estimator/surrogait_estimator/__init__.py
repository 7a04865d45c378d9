"""State-estimator node (a thin ROS shell over surrogait_core.estimator)."""
