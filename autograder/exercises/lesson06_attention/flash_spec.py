"""Lesson 06: FlashAttention's spec, its reference, and the backward the checks run."""

import torch

from ...checks import Spec
from ...explain import _explain_runtime_error
from .attention import attention_reference
from .flash_probes import NAME


def flash_reference(Q, K, V, scale, causal=False):
    """Attention by autograd's own ops; causal: query i sees keys j <= i + (Lk - Lq)."""
    mask = None
    if causal:
        Lq, Lk = Q.shape[-2], K.shape[-2]
        mask = torch.ones(Lq, Lk, dtype=torch.bool, device=Q.device).tril(Lk - Lq)
    return attention_reference(Q, K, V, scale, mask)


FLASH = Spec(NAME, ("Q", "K", "V", "scale", "causal"), flash_reference)


def describe(values: dict, block: int) -> str:
    """The case's shapes, dtype, causal and BLOCK, as a failure message quotes them."""
    Q, K, V = values["Q"], values["K"], values["V"]
    dtype = str(Q.dtype).removeprefix("torch.")
    return (f"Q {tuple(Q.shape)}, K {tuple(K.shape)}, V {tuple(V.shape)}, {dtype}, "
            f"causal={values['causal']}, BLOCK={block}")


def flash_backward(output, inputs: dict, grad_output) -> tuple:
    """The gradients of the inputs that require grad, without the probes' op and FLOP logs
    (slow on hundreds of tile ops; the accounting sees every op itself)."""
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        return torch.autograd.grad(output, wanted, grad_output, allow_unused=True)
    except RuntimeError as error:
        raise _explain_runtime_error(FLASH, "backward", error, inputs) from error
