"""The policy side of the core: what a trained policy is and how it is run.

The policy contract stored in every ONNX file (`contract`) and the default one for a robot
(`locomotion_contract`); the observation builder, gait clock and onnxruntime wrapper that
training, evaluation and the policy node share (`observation`, `gait`, `onnx_policy`); one policy
step from robot state to joint targets (`policy_runner`); and the policy node's decision logic:
its state machine (`policy_fsm`), operator input (`command_input`) and the controller that joins
them (`policy_controller`). Import each module by its full path.
"""
