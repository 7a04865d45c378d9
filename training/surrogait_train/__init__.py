"""surrogait trainer: differentiable simulation (MuJoCo forward, torch surrogate backward)."""
