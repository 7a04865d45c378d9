"""The safety monitor's fault-injection suite: real processes on the robot's wire, one fault each, judged from outside.

Each scenario runs a fresh rehearsal `Session` (harness.session: the simulator and the robot's three nodes with
their packages' parameters files), brings it to READY or WALK, injects one fault and judges the result from an
*independent* observer of the wire in this process. By role:
- `observers`: the wire observers (`WireRecorder` on the Go2's DDS wire, `TapRecorder` on the Go1's UDP link);
- `injections`: the scenarios and what each injects (`SCENARIOS`, the Go1's subset `GO1_SCENARIOS`);
- `evaluation`: latency, limits, lying still, the fault log (`evaluate`);
- `margins`: with no fault, how close each rule came to firing;
- `run`: a scenario's session from start to judgement (`run_scenario`, `run_baseline`).
Used by bench/safety.py (the whole suite) and tests/safety (a representative subset).
"""
