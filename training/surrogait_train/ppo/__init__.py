"""PPO baseline (rsl_rl) on the differentiable trainer's environment, for the sample-efficiency comparison."""
