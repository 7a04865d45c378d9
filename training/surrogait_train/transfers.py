"""Counting the host<->device transfers and waits of a block of torch and JAX code, also on a CPU-only machine.

On a GPU every such transfer stalls the pipeline (the host waits for the device, or the device for a copy);
on the CPU, where host and "device" are one memory, they cost nothing and so go unseen. `TransferCounter`
makes them visible on both, by what the code asks for rather than by what it costs:

torch (a TorchDispatchMode, plus the three tensor methods that read memory without dispatching on the CPU):
- a read of a tensor's value on the host: `.item()`, `float(t)`, `bool(t)`, `if t.any():`
  (`aten._local_scalar_dense`), `.tolist()`, `.numpy()`, `np.asarray(t)`;
- an operation whose result size depends on values, which waits for the device to know it: boolean-mask
  indexing (`t[mask]`, `t[mask] = v`), `nonzero`, `masked_select`, and the error check of
  `torch.linalg.solve`/`inv` (`_linalg_check_errors`; the `_ex` variants skip it);
- a tensor made from host data (`torch.tensor(list)`, `torch.as_tensor(ndarray)`: `aten.lift_fresh`) with
  at least one dimension; a 0-dim one is not counted, since a CPU scalar enters a GPU kernel as an argument;
- a copy between devices (`.to(device)`, `.cuda()`, `.cpu()`, `copy_` across devices).
JAX:
- a read of an array's value on the host (`np.asarray`, `float`, `.tolist()`, `.item()`: counted through
  `ArrayImpl._value`, where every such read goes);
- any transfer from the host or between devices raises while the counter is active
  (`jax.transfer_guard("disallow_explicit")`; on a GPU this also catches reads the host makes).

DLPack exchanges (torch <-> JAX on one device) share memory and are not transfers.
"""

from __future__ import annotations

import contextlib
from collections import Counter

import jax
import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
_WAITS = {
    aten._local_scalar_dense.default: "host read (item/float/bool)",
    aten.nonzero.default: "nonzero",
    aten.masked_select.default: "masked_select",
    aten._linalg_check_errors.default: "linalg error check",
}
_INDEX = {aten.index.Tensor, aten.index_put.default, aten.index_put_.default, aten._index_put_impl_.default}
_COPIES = {aten._to_copy.default, aten.copy_.default}


class TransferCounter(TorchDispatchMode):
    """`with TransferCounter() as c: ...`; then `c.events` (a Counter of what happened) and `c.total`."""

    def __init__(self, guard_jax: bool = True):
        super().__init__()
        self.events: Counter[str] = Counter()
        self.guard_jax = guard_jax
        self._stack = contextlib.ExitStack()

    @property
    def total(self) -> int:
        return sum(self.events.values())

    def __enter__(self):
        counter = self
        for name in ("tolist", "numpy", "__array__"):
            original = getattr(torch.Tensor, name)

            def counted(tensor, *args, _original=original, _name=name, **kwargs):
                counter.events[f"torch host read (.{_name})"] += 1
                return _original(tensor, *args, **kwargs)

            self._stack.callback(setattr, torch.Tensor, name, original)
            setattr(torch.Tensor, name, counted)
        from jax._src.array import ArrayImpl

        value = ArrayImpl.__dict__.get("_value")
        if isinstance(value, property):

            def jax_read(array):
                counter.events["jax host read"] += 1
                return value.fget(array)

            self._stack.callback(setattr, ArrayImpl, "_value", value)
            ArrayImpl._value = property(jax_read)
        if self.guard_jax:
            self._stack.enter_context(jax.transfer_guard("disallow_explicit"))
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self._stack.close()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in _WAITS:
            self.events[f"torch wait: {_WAITS[func]}"] += 1
        elif func is aten.lift_fresh.default and out.dim() > 0:
            self.events["torch tensor from host data"] += 1
        elif func in _INDEX and _has_bool_index(args):
            self.events["torch wait: boolean mask"] += 1
        elif func in _COPIES and _devices_differ(func, args, kwargs, out):
            self.events["torch copy between devices"] += 1
        return out


def _has_bool_index(args) -> bool:
    indices = args[1] if len(args) > 1 else ()
    return any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in indices or ())


def _devices_differ(func, args, kwargs, out) -> bool:
    if func is aten.copy_.default:
        return args[0].device != args[1].device
    return isinstance(args[0], torch.Tensor) and args[0].device != out.device

