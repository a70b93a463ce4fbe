"""Lesson 03: answers with known verdicts for RoundSTE, among them roundings that differ from
torch.round only at halves, at float32's precision or at -0."""

from .. import Mistake, Unusual
from .answers import _round

UNUSUAL = [
    Unusual("RoundSTE", "x.round() and a cloned grad_output",
            _round("        return x.round()", "        return grad_output.clone()")),
    Unusual("RoundSTE", "torch.round(x, decimals=0)",
            _round("        return torch.round(x, decimals=0)", "        return 1.0 * grad_output")),
    Unusual("RoundSTE", "needs_input_grad checked",
            _round("        return torch.round(x)",
                   "        return grad_output if ctx.needs_input_grad[0] else None")),
    # np.asarray: at 0-d np.rint returns a NumPy scalar, which torch.from_numpy refuses
    Unusual("RoundSTE", "NumPy's rint, halves to even as well",
            _round("        import numpy as np\n"
                   "        return torch.from_numpy(np.asarray(np.rint(x.detach().cpu().numpy())))"
                   ".to(x.device)")),
]

MISTAKES = [
    Mistake("RoundSTE", "round of x.nan_to_num(): finite at NaN and ±inf",
            "RoundSTE.apply(nan) gives 0 but round(nan) = nan",
            _round("        return torch.round(torch.nan_to_num(x))")),
    Mistake("RoundSTE", "saves a copy of x it never reads", "forward saved a copy of x",
            _round("        ctx.save_for_backward(x.clone())\n        return torch.round(x)")),
    Mistake("RoundSTE", "floor", "RoundSTE's forward is floor(x), not round(x)",
            _round("        return torch.floor(x)"), nbgrader=True),
    Mistake("RoundSTE", "x.long() truncates", "RoundSTE's forward is trunc(x)",
            _round("        return x.long().to(x.dtype)"), named=True),
    Mistake("RoundSTE", "floor(x + 0.5) rounds halves up", "RoundSTE does not round halves to "
            "even", _round("        return torch.floor(x + 0.5)"), named=True),
    Mistake("RoundSTE", "no rounding", "RoundSTE's forward returns x unchanged",
            _round("        return x.clone()")),
    Mistake("RoundSTE", "smooth look-alike", "RoundSTE's output is not all integers",
            _round("        return x - torch.sin(2 * torch.pi * x) / (2 * torch.pi)"),
            named=True),
    Mistake("RoundSTE", "zero gradient", "RoundSTE's gradient is zero everywhere",
            _round("        return torch.round(x)", "        return grad_output * 0"),
            named=True),
    Mistake("RoundSTE", "gradient built in the default dtype", "RoundSTE's gradient is "
            "grad_output rounded to float32",
            _round("        return torch.round(x)",
                   "        grad = torch.zeros(grad_output.shape, device=grad_output.device)\n"
                   "        grad[:] = grad_output\n        return grad")),
    Mistake("RoundSTE", "wrong sign", "your gradient for x is the expected one times -1",
            _round("        return torch.round(x)", "        return -grad_output")),
    Mistake("RoundSTE", "floor(x + 0.5) with halves sent to even", "RoundSTE's output is "
            "floor(x + 0.5) where it is not round(x)",
            _round("        fl = x.floor()\n        return torch.where(x - fl == 0.5, "
                   "fl + torch.remainder(fl, 2), torch.floor(x + 0.5))")),
    Mistake("RoundSTE", "floor(x + 0.5), then odd ties moved down", "RoundSTE's output is "
            "floor(x + 0.5) where it is not round(x)",
            _round("        r = torch.floor(x + 0.5)\n        tie = (r - x) == 0.5\n"
                   "        return torch.where(tie & (torch.remainder(r, 2) != 0), r - 1, r)")),
    Mistake("RoundSTE", "rounded in float32, no detach trick",
            "RoundSTE's output is round of x rounded to float32 (at x = 4503599627370497 it gives "
            "4503599627370496, expected 4503599627370497)",
            _round("        return torch.round(x.float()).to(x.dtype)")),
    Mistake("RoundSTE", "magic-number rounding (x + 1.5 * 2^52) - 1.5 * 2^52",
            "RoundSTE's output is round(x) only up to rounding (at x = 4503599627370497 it gives "
            "4503599627370496, expected 4503599627370497)",
            _round("        magic = 1.5 * 2.0 ** (52 if x.dtype == torch.float64 else 23)\n"
                   "        return (x + magic) - magic")),
    # x kept where it is an integer already (|x| >= 2^52): every wrong entry is then x itself,
    # below -2^51, which is no early exit for large values (review 8)
    Mistake("RoundSTE", "magic-number rounding, x kept from 2^52 on",
            "RoundSTE's output is round(x) only where |x| < 2^51: at x = -2251799813685248.5 it "
            "gives -2251799813685248.5 (x itself)",
            _round("        bits = 52 if x.dtype == torch.float64 else 23\n"
                   "        magic = 1.5 * 2.0 ** bits\n"
                   "        return torch.where(x.abs() < 2.0 ** bits, (x + magic) - magic, x)")),
    # review 8: the grader's own request for a gradient then fails, not backward
    Mistake("RoundSTE", "output passed to ctx.mark_non_differentiable",
            "RoundSTE.forward passes its output to ctx.mark_non_differentiable",
            _round("        y = torch.round(x)\n        ctx.mark_non_differentiable(y)\n"
                   "        return y")),
    Mistake("RoundSTE", "round(x) + 0.0: -0 turned into 0",
            "RoundSTE's output is 0 at x = -0.5, where round(x) is -0: equal values, but not the "
            "same zero; return the quantiser's own result (adding 0",
            _round("        return torch.round(x) + 0.0")),
    # keeps -0.0 at -0.0 itself, so the hint names no cause (adding 0 turns that one into 0)
    Mistake("RoundSTE", "halves to even by hand from floor: 0 for x in [-0.5, 0)",
            "RoundSTE's output is 0 at x = -0.5, where round(x) is -0: equal values, but not the "
            "same zero; return the quantiser's own result (with",
            _round("        f = torch.floor(x)\n        d = x - f\n"
                   "        return torch.where(d > 0.5, f + 1, torch.where(d < 0.5, f, "
                   "f + torch.remainder(f, 2)))")),
]
