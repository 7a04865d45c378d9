"""The onnxruntime wrapper used by evaluation and by the policy node alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from surrogait_core.policy.contract import (
    PolicyContract,
    PolicyFileError,
    open_session,
    read_contract,
    session_metadata,
)


class OnnxPolicy:
    """An exported policy: its contract, and `act(obs) -> action` with onnxruntime."""

    def __init__(self, path: Path | str, robot: str | None = None, threads: int = 1):
        self.path = Path(path)
        self.session = open_session(self.path, threads)  # the file is opened once: its contract is in its metadata
        self.contract: PolicyContract = read_contract(self.path, robot=robot, metadata=session_metadata(self.session))
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        if len(inputs) != 1 or len(outputs) < 1:
            raise PolicyFileError(f"{self.path}: expected one input (obs) and an action output")
        self.input_name, self.output_name = inputs[0].name, outputs[0].name
        obs_dim, act_dim = inputs[0].shape[-1], outputs[0].shape[-1]
        if obs_dim != self.contract.obs_size or act_dim != self.contract.action_size:
            raise PolicyFileError(
                f"{self.path}: network maps {obs_dim} -> {act_dim}, but its contract says "
                f"{self.contract.obs_size} -> {self.contract.action_size}"
            )
        action = self.contract.action
        self._scale = np.asarray(action.scale, dtype=np.float64)
        self._offset = np.asarray(action.offset, dtype=np.float64)
        self._clip = action.clip

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Raw network output for one observation (obs_size,) or a batch (N, obs_size)."""
        batch = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        out = self.session.run([self.output_name], {self.input_name: batch})[0]
        return out[0] if np.ndim(obs) == 1 else out

    def clip_action(self, action: np.ndarray) -> np.ndarray:
        return np.clip(action, -self._clip, self._clip)

    def joint_targets(self, action: np.ndarray) -> np.ndarray:
        """Joint position targets (rad, SDK order) for an action."""
        return self._offset + self._scale * self.clip_action(action)
