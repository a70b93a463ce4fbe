"""Lesson 02: a backward that returns None for every input when grad_output is all zeros ("no
signal: skip the products"): rule 2 gives each input that requires grad a tensor, zeros here
(with None, torch.autograd.grad raises and .grad stays None, so an optimiser's weight decay
skips the weight). A fresh review's answers, which passed in all three exercises."""

from .. import Mistake, edit
from .bias_passed_as_none import BILINEAR, FUSED, LINEAR

SHORTCUT = ("        if grad_output.numel() and not grad_output.any():  # nothing flows back\n"
            "            return {nones}\n")

MISTAKES = [
    Mistake(exercise, "None for every input when grad_output is all zeros",
            f"returned None for {first}, which requires grad, with a grad_output of zeros",
            edit(code, (read, read + SHORTCUT.format(nones=", ".join(["None"] * inputs)))))
    for exercise, code, read, first, inputs in (
        ("MyLinearFunction", LINEAR, "        x, weight = ctx.saved_tensors\n", "x", 3),
        ("FusedLinearReLU", FUSED, "        x, weight, mask = ctx.saved_tensors\n", "x", 3),
        ("Bilinear", BILINEAR, "        x1, x2, weight = ctx.saved_tensors\n", "x1", 4))]
