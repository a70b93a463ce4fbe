"""Lesson 06: state kept outside ctx, in a module global, a closure or a global object rather
than on the class (Function contract, rule 4): P, the masked scores or L in a module dict
keyed by id(ctx), popped in backward or never; each fails the Function contract's one-call
check of what forward leaves in the module's globals, its closures and its classes
(autograder/outside_ctx.py). And one correct answer: a module-level -inf constant, which is no
state."""

from .. import Mistake, Unusual, edit
from .answers import FA, FLASH, MEMORY, SDPA, M, S

_GLOBAL = "kept state outside ctx: _KEPT in a module global"


def _sdpa_p_in(place: str, take: str, prelude: str = "") -> str:
    """SDPA with P kept in ``place`` (keyed by id(ctx)) and read back by ``take``."""
    return prelude + edit(
        SDPA, ("ctx.save_for_backward(Q, K, V, P)",
               f"ctx.save_for_backward(Q, K, V)\n        {place}[id(ctx)] = P"),
        ("Q, K, V, P = ctx.saved_tensors", f"Q, K, V = ctx.saved_tensors\n        P = {take}"))


# the masked scores kept between the passes, the one thing Exercise 2 exists to forbid
_SCORES_KEPT = edit(
    MEMORY, ("output = (scores - lse).exp() @ V",
             "output = (scores - lse).exp() @ V\n        _KEPT[id(ctx)] = scores"),
    ("scores = (Q @ K.transpose(-2, -1)) * ctx.scale\n"
     "        if mask is not None:\n"
     "            scores = scores.masked_fill(~mask, float(\"-inf\"))\n"
     "        P = (scores - lse.unsqueeze(-1)).exp()",
     "P = (_KEPT[id(ctx)] - lse.unsqueeze(-1)).exp()"))

MISTAKES = [
    Mistake(S, "P kept in a module dict keyed by id(ctx), never popped", _GLOBAL,
            _sdpa_p_in("_KEPT", "_KEPT[id(ctx)]", "_KEPT = {}\n")),
    Mistake(S, "P kept in a closure's dict keyed by id(ctx)",
            "kept state outside ctx: kept in a variable the method closes over",
            "def _make():\n    kept = {}\n"
            + _sdpa_p_in("kept", "kept.pop(id(ctx))").replace("\n", "\n    ")
            + "\n    return ScaledDotProductAttention\n\n\n"
            "ScaledDotProductAttention = _make()\n"),
    Mistake(M, "masked scores kept in a module dict, P rebuilt from them and L", _GLOBAL,
            "_KEPT = {}\n" + _SCORES_KEPT),
    Mistake(M, "masked scores kept on a global SimpleNamespace",
            "kept state outside ctx: _BOX in a module global",
            "import types\n_BOX = types.SimpleNamespace()\n"
            + edit(_SCORES_KEPT, ("_KEPT[id(ctx)] = scores", "setattr(_BOX, str(id(ctx)), scores)"),
                   ("_KEPT[id(ctx)]", "getattr(_BOX, str(id(ctx)))"))),
    Mistake(M, "P kept in a module dict, popped in backward", _GLOBAL, "_KEPT = {}\n" + edit(
        MEMORY, ("output = (scores - lse).exp() @ V",
                 "P = (scores - lse).exp()\n        _KEPT[id(ctx)] = P\n        output = P @ V"),
        ("P = (scores - lse.unsqueeze(-1)).exp()", "P = _KEPT.pop(id(ctx))"))),
    Mistake(FA, "L kept in a module dict, popped in backward", _GLOBAL, "_KEPT = {}\n" + edit(
        FLASH, ("ctx.save_for_backward(Q, K, V, O, L)",
                "ctx.save_for_backward(Q, K, V, O)\n        _KEPT[id(ctx)] = L"),
        ("Q, K, V, O, L = ctx.saved_tensors",
         "Q, K, V, O = ctx.saved_tensors\n        L = _KEPT.pop(id(ctx))"))),
]

UNUSUAL = [
    # a tensor made once at import is no call's state: the one-call check counts only what a
    # call adds
    Unusual(S, "masked scores by torch.where against a module-level -inf tensor",
            "_NEG_INF = torch.tensor(float(\"-inf\"))\n" + edit(
                SDPA, ("scores = scores.masked_fill(~mask, float(\"-inf\"))",
                       "scores = torch.where(mask, scores, _NEG_INF)"))),
]
