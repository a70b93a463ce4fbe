"""Lesson 08: rule 1's device clause inside a custom operator. The shared default-device check
(``autograder.default_device``) watches the factory calls of what runs while its mode is active;
the dispatcher runs an operator's body with that mode popped, so a buffer made there without
``device=`` would only show on a GPU. Here the body itself runs inside the mode. And an operator
registered for the CPU alone (``device_types="cpu"``) has no kernel a CUDA tensor can reach."""

import torch
from torch._library.custom_ops import _maybe_get_opdef

from ...default_device import ELSEWHERE, elsewhere
from ...errors import GradingError
from ...function_contract import rule_reference

_TRIED = ("the operator's own body on CPU inputs with the default device another one, as on a "
          "GPU, where the inputs are on cuda and the default device is the CPU")


def check_kernel_for_every_device(name: str, qualname: str) -> None:
    """The operator has a kernel a CUDA tensor reaches: the default registration (no
    ``device_types``, CompositeExplicitAutograd) or one for CUDA."""
    opdef = _maybe_get_opdef(qualname)
    if opdef is None:
        return
    if any(torch._C._dispatch_has_kernel_for_dispatch_key(qualname, key)
           for key in ("CompositeExplicitAutograd", "CompositeImplicitAutograd", "CUDA")):
        return
    devices = sorted(str(device) for device in opdef._backend_fns if device is not None)
    raise GradingError(
        f"{name} is registered for {' and '.join(devices) or 'no device'} only (custom_op(..., "
        f"device_types={chr(34) + devices[0] + chr(34) if len(devices) == 1 else devices}) registers its body for "
        "those devices alone): called on a CUDA tensor, it finds no kernel and raises; leave "
        "device_types out, so that one body serves every device " + rule_reference("values"),
        f"registered for: {', '.join(devices) or 'none'}",
        mistake=f"{name}/registered-for-cpu-only")


def check_body_device(name: str, qualname: str, *inputs) -> None:
    """The operator's body, the kernel a CUDA call runs, makes no tensor on the default device
    that meets its inputs, and returns its output on theirs."""
    opdef = _maybe_get_opdef(qualname)
    if opdef is None:
        return
    body = opdef._backend_fns.get("cuda", opdef._backend_fns.get(None))
    if body is None:
        return  # no kernel for CUDA: check_kernel_for_every_device names it
    mode = elsewhere()
    made = lambda: (f" ({', '.join(dict.fromkeys(mode.made))} without device=)"  # noqa: E731
                    if mode.made else "")
    try:
        with torch.no_grad(), mode:
            output = body(*inputs)
    except Exception as error:  # noqa: BLE001 - judged only where the default device shows
        said = (str(error).splitlines() or [""])[0]
        if ELSEWHERE.type not in said:
            return  # another error: the battery names what raises
        raise GradingError(
            f"{name}'s operator body made a tensor on the default device{made()} and used it "
            f"with its inputs: it raised {type(error).__name__}: {said} (tried {_TRIED}) "
            + rule_reference("values"), mistake=f"{name}/tensor-on-default-device") from error
    if isinstance(output, torch.Tensor) and output.device != inputs[0].device:
        raise GradingError(
            f"{name}'s operator body returned its output on the default device{made()}, not on "
            f"its inputs' device (tried {_TRIED}) " + rule_reference("values"),
            mistake=f"{name}/tensor-on-default-device")
