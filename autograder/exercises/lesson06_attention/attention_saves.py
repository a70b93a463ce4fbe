"""Lesson 06: what the attention Functions save is what they were given or computed, never a
copy of an input or of the output. A copy is a second tensor as big as the one the caller
already holds, kept until backward: Q.clone() "to be safe", Q.contiguous() on the multi-head
layout (a copy there, the tensor itself elsewhere), O.double() "for accuracy" on float32,
K.transpose(-2, -1).contiguous() "for backward's products"."""

import math

import torch

from ...errors import GradingError
from ...function_contract import rule_reference

GIVEN = ("Q", "K", "V", "bias", "mask")


def _described(saved, original: torch.Tensor, what: str) -> str:
    if saved.dtype != original.dtype:
        return f"a {str(saved.dtype)[6:]} copy of its {str(original.dtype)[6:]} {what}"
    return f"a copy of its {what}"


def check_saves_no_copy(name: str, forward, values: dict) -> None:
    """No saved tensor (other than the inputs and the output themselves, or views of them) has
    the shape and the very values of an input or of the output, or of one transposed (a
    ``K.mT.contiguous()`` kept for backward's products), in its dtype or another."""
    originals = [(f"input {n}", values[n]) for n in GIVEN
                 if isinstance(values.get(n), torch.Tensor)]
    if isinstance(forward.output, torch.Tensor):
        originals.append(("output", forward.output))
    for saved in forward.saved:
        if saved.role != "intermediate":
            continue
        for what, original in originals:
            views = [("", original)] + ([("transposed ", original.mT)] if original.dim() >= 2
                                        else [])
            copied = next((kind for kind, view in views
                           if tuple(view.shape) == saved.shape and torch.equal(
                               view.detach().to(saved.tensor.device, saved.dtype),
                               saved.tensor.detach())), None)
            if copied is not None:
                raise GradingError(
                    f"{name} saved {_described(saved, original, copied + what)} "
                    f"({saved.nbytes} bytes), "
                    "a second tensor kept until backward besides the one the caller holds "
                    f"(.clone(), .to(), or .contiguous() on a strided tensor make one): save "
                    f"{what.removeprefix('input ') if what != 'output' else 'the output'} itself",
                    mistake=f"{name}/saves-a-copy")


def check_not_a_new_mask(name: str, saved, mask) -> None:
    """A bool tensor forward made and saved (``~mask``, a mask built though ``mask`` is None):
    the mask given is the caller's and costs nothing, a new one is kept until backward."""
    if saved.role != "intermediate" or saved.dtype != torch.bool:
        return
    if mask is None:
        raise GradingError(
            f"{name} saved a bool tensor of shape {saved.shape} ({saved.nbytes} bytes) "
            "that forward made though mask is None: a new mask kept until backward; save "
            "the mask as given, None included, and skip masking in backward when it is None",
            mistake=f"{name}/saves-a-new-mask")
    raise GradingError(
        f"{name} saved a bool tensor of shape {saved.shape} ({saved.nbytes} bytes) "
        "that forward made, besides the mask it was given: a new tensor kept until "
        "backward; save the mask as given and derive what backward needs from it there",
        mistake=f"{name}/saves-a-new-mask")


def check_saves_one_score_tensor(name: str, forward, values: dict) -> None:
    """Besides the tensors given and the output, forward keeps at most 8 bytes of floats per
    query-key pair (P, or the scores, even in float64) and nothing of an input's size: Q * scale saved in place of Q is a second
    Q-sized tensor kept until backward, a copy of Q scaled. Floats only: a mask made in forward
    costs a byte an entry, and the mask given is the caller's."""
    Q, K = values["Q"], values["K"]
    scores = math.prod(Q.shape[:-1]) * K.shape[-2]
    extra = [s for s in forward.saved if s.role == "intermediate" and s.dtype.is_floating_point]
    budget = scores * max(Q.element_size(), 8)  # P in the inputs' dtype, or in float64
    total = sum(s.nbytes for s in extra)
    if total <= budget:
        return
    odd = [s for s in extra if math.prod(s.shape) != scores] or extra[1:]
    shapes = {tuple(values[n].shape): n for n in GIVEN if isinstance(values.get(n), torch.Tensor)}
    what = (f"a tensor of {shapes[odd[0].shape]}'s shape {odd[0].shape}" if odd[0].shape in shapes
            else f"a tensor of shape {odd[0].shape}")
    note = _scale_note(odd[0], values)
    why = ("a number backward needs goes on ctx as itself " + rule_reference("ctx") if note
           else "P and the scores each give backward the other: keep one of them"
           if math.prod(odd[0].shape) == scores
           else "a tensor computed from an input alone, such as Q * scale, is a copy of it "
           "kept until backward: save the input itself and apply the scale in backward")
    raise GradingError(
        f"{name} saves {what} ({odd[0].nbytes} bytes){note} besides the inputs and the "
        f"output: {total} bytes where the contract allows {budget}, 8 bytes of floats per "
        f"query-key pair; {why}", mistake=f"{name}/saves-more-than-the-scores")


def _scale_note(saved, values: dict) -> str:
    """", the scale rounded to float32" where a 0-d tensor saved holds the scale given, rounded
    to its dtype (``torch.tensor(scale)`` makes float32), or ", the scale as a 0-d tensor"."""
    scale = values.get("scale")
    if saved.shape != () or not saved.dtype.is_floating_point or not isinstance(scale, float):
        return ""
    kept = saved.tensor.detach().item()
    if kept == scale:
        return ", the scale as a 0-d tensor,"
    if kept == torch.tensor(scale, dtype=saved.dtype).item():
        return f", the scale rounded to {str(saved.dtype).removeprefix('torch.')},"
    return ""
