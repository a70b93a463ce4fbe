"""Lesson 04, review 60: SwishFunctions that treat a tiny beta apart (sigma linearised around 0
below a threshold on |beta|), wrong wherever beta is tiny and beta * x is not, which the
contract allows (|beta x| <= 800, beta any real value): a threshold of 1e-200 passed both checks
while the battery's smallest beta was 6e-159, and one of 1e-6 was named as an x * x overflow.
Both are named as the tiny-beta branch now. A CubeOnce keeping x's dtype and device (no tensor)
on ctx: the contract refuses tensors on ctx attributes, not metadata."""

from .. import Mistake, Unusual, edit
from .review56 import CUBE
from .swish import READ, SCALED, _swish

SOLUTION = _swish(READ + SCALED)
TINY = "treat a tiny beta apart"


def _tiny_branch(threshold: str) -> str:
    """The solution with sigma linearised around 0 where |beta| < threshold."""
    return edit(SOLUTION, (
        "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n",
        f"        if abs(beta.item()) < {threshold}:  # 'beta is about 0': linearise sigma\n"
        "            s = 0.5 + beta * x / 4\n            ds = torch.full_like(x, 0.25)\n"
        "        else:\n            s = torch.sigmoid(beta * x)\n            ds = s * (1 - s)\n"))


MISTAKES = [
    Mistake("SwishFunction", "sigma linearised where |beta| < 1e-6 (once named as x * x "
            "overflowing)", TINY, _tiny_branch("1e-6")),
]

CTX_META = edit(CUBE, ("        return x ** 3",
                      "        ctx.dtype, ctx.device = x.dtype, x.device\n        return x ** 3"),
                ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)",
                 "torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, dtype=ctx.dtype, "
                 "device=ctx.device)"))
MISTAKES.append(Mistake(
    "CubeOnce", "x's dtype kept in a global: the last call's dtype rounds an earlier call's 3x^2",
    "wrong when a float32 call ran its forward before",
    edit(CTX_META, ("        ctx.dtype, ctx.device = x.dtype, x.device\n",
                    "        global _DTYPE\n        _DTYPE, ctx.device = x.dtype, x.device\n"),
         ("dtype=ctx.dtype", "dtype=_DTYPE"))))

UNUSUAL = [
    Unusual("CubeOnce", "keeps x's dtype and device on ctx (metadata, no tensor)", CTX_META),
]

# Correct over the domain a model meets (issue 69 item 4): each was wrong only at x = 1e160 with
# beta = 6e-159, or at betas from 1e-17 down to float64's subnormals (float32's 1e-36), which the
# grader no longer tries. Once mistakes.
UNUSUAL += [
    Unusual("SwishFunction", "sigma linearised where |beta| < 1e-200 (passed both checks)",
            _tiny_branch("1e-200")),
]
