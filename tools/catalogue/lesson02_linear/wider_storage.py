"""Lesson 02, review 59d: memory counted by the storage behind a tensor: a saved mask that is a
view of a tensor twice its size, an output that is a view into cat([relu(z), z]) (the
pre-activation kept inside the returned tensor); a grad_weight gated on x.requires_grad, named
as requires_grad read in backward. Unusual: the output as torch.relu_(z) (z's own storage)."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_WEIGHT = "grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None"
_LATE = "grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] and x.requires_grad else None"

MISTAKES = [
    Mistake("FusedLinearReLU", "mask a view of cat([z > 0, z < 0]) (review 59d)",
            "saved mask is a view of a",
            edit(_FUSED, ("mask = z > 0",
                          "mask = torch.cat([z > 0, z < 0], -1)[..., :z.shape[-1]]"))),
    Mistake("FusedLinearReLU", "output a view into cat([relu(z), z]) (review 59d)",
            "output is a view of a",
            edit(_FUSED, ("return z.clamp(min=0)",
                          "return torch.cat([z.clamp(min=0), z], -1)[..., :z.shape[-1]]"))),
    Mistake("MyLinearFunction", "grad_weight gated on x.requires_grad too (review 59d)",
            "read x.requires_grad at backward time to decide grad_weight",
            edit(_LINEAR, (_WEIGHT, _LATE))),
    Mistake("FusedLinearReLU", "grad_weight gated on x.requires_grad too (review 59d)",
            "read x.requires_grad at backward time to decide grad_weight",
            edit(_FUSED, (_WEIGHT, _LATE))),
]

UNUSUAL = [
    Unusual("FusedLinearReLU", "output as torch.relu_(z), z's own storage (review 59d)",
            edit(_FUSED, ("return z.clamp(min=0)", "return torch.relu_(z)"))),
]
