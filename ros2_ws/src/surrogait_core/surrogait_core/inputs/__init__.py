"""What the robot's wire gives, checked: the stack never walks on inputs it cannot use.

ROS-free, clock-free (callers pass times), cheap enough for the 50 Hz and 500 Hz paths (running
statistics, no per-sample allocations beyond a few small arrays):

- `sample_clock`: the robot's time for each LowState; its `tick` while it advances, this computer's clock
  (the sample's stamp) when it does not, with the cause named;
- `stream_stats`: the LowState rate and jitter over windows of the source's own time;
- `sanity`: run-time input checks (stream rate, foot sensors stuck while the legs move, IMU quaternion
  norm, gravity norm and direction), each issue named by cause;
- `foot_force`: foot-force units (newtons, raw sensor counts, none) and the per-robot calibration of raw counts;
- `preflight`: the checks `policy/stand_up` runs before the motors get stiff, as a table with fixes;
- `frozen`: the policy's observation must change while walking.
"""
