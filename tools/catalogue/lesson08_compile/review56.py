"""Lesson 08, review 56: the reviewer's two answers that passed (softplus's value and slope
replaced by e^z below beta * x = -10, a relative 2.3e-5 and 4.5e-5 at the switch; a batching
rule that calls the operator once when the batch dim is first and loops over the samples
otherwise), each half of the first alone, the same switch at -5 (caught before, unnamed), a
clamp at 19 under a switch at 20 (a mutant the dense sweep kills), and the reviewer's unusual
answers not already here."""

from .. import Mistake, Unusual
from .answers import SOFTPLUS, SQUARED_NORM, _edit

_VALUE = ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
          "    exact = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))\n"
          "    return torch.where(z < -10, torch.exp(z), exact) / beta")
_SLOPE = ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
          "    z = ctx.beta * x\n"
          "    return grad_output * torch.where(z < -10, torch.exp(z), torch.sigmoid(z)), None")

UNUSUAL = [
    Unusual("softplus", "fake computes beta * x on the fake tensor, slope -expm1(-beta s) from "
            "the saved output",
            _edit(SOFTPLUS, ("    return torch.empty_like(x)", "    return beta * x"),
                  ("    x, beta = inputs\n    ctx.save_for_backward(x)",
                   "    x, beta = inputs\n    ctx.save_for_backward(output)"),
                  ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
                   "    return grad_output * -torch.expm1(-ctx.beta * x), None"))),
    Unusual("softplus", "forward F.softplus(x, beta), fake x.clone(), slope torch.special.expit",
            "import torch.nn.functional as F\n"
            + _edit(SOFTPLUS, ("    z = beta * x\n" + _VALUE[0],
                               "    return F.softplus(x, beta=beta)"),
                    ("    return torch.empty_like(x)", "    return x.clone()"),
                    ("torch.sigmoid(ctx.beta * x)", "torch.special.expit(ctx.beta * x)"))),
    Unusual("softplus", "forward logaddexp in float64, cast back to x's dtype",
            _edit(SOFTPLUS, ("    z = beta * x\n" + _VALUE[0] + "\n",
                             "    z = beta * x.double()\n"
                             "    return (torch.logaddexp(z, torch.zeros_like(z)) / beta)"
                             ".to(x.dtype)\n"))),
    Unusual("softplus", "slope 1 / (1 + exp(-beta x)) by hand",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "(1 / (1 + torch.exp(-ctx.beta * x)))"))),
    Unusual("softplus", "a float64 gradient for a float32 x (the engine casts it back)",
            _edit(SOFTPLUS, ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
                             "    return grad_output.double() * torch.sigmoid(ctx.beta * "
                             "x.double()), None"))),
    Unusual("squared_norm", "rule leaves the batch dim in place, computes (x * x).sum, counts "
            "out_dims",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n"
                                 "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                                 "    d = dim % (x.dim() - 1)\n"
                                 "    d_b = d + 1 if d >= x_bdim else d\n"
                                 "    return (x * x).sum(d_b), (x_bdim - 1 if d < x_bdim "
                                 "else x_bdim)"))),
    Unusual("squared_norm", "forward linalg.vecdot, rule moves the batch dim last, out_dims -1",
            _edit(SQUARED_NORM, ("    return (x * x).sum(dim)",
                                 "    return torch.linalg.vecdot(x, x, dim=dim)"),
                  ("    x = x.movedim(x_bdim, 0)\n"
                   "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                   "    x = x.movedim(x_bdim, -1)\n"
                   "    return squared_norm(x, dim if dim >= 0 else dim - 1), -1"))),
]

MISTAKES = [
    Mistake("softplus", "value and slope e^z below beta * x = -10 (the reviewer's answer)",
            "softplus's output switches to e^z below a threshold in the left tail",
            _edit(SOFTPLUS, _VALUE, _SLOPE)),
    Mistake("softplus", "slope e^z below beta * x = -10, the value exact",
            "softplus's slope (its backward) switches to e^z below a threshold",
            _edit(SOFTPLUS, _SLOPE)),
    Mistake("softplus", "value e^z below beta * x = -10.5, the slope exact",
            "softplus's output switches to e^z below a threshold in the left tail",
            _edit(SOFTPLUS, (_VALUE[0], _VALUE[1].replace("-10", "-10.5")))),
    Mistake("softplus", "value and slope e^z below beta * x = -5 (the reviewer's, named now)",
            "softplus's output switches to e^z below a threshold in the left tail",
            _edit(SOFTPLUS, (_VALUE[0], _VALUE[1].replace("-10", "-5")),
                  (_SLOPE[0], _SLOPE[1].replace("-10", "-5")))),
    # an uncapped mutant of the unusual 'logaddexp, switching to z itself above z = 20'
    Mistake("softplus", "logaddexp of z clamped at 19 under a switch to z at 20",
            "softplus's output is wrong in float64: at beta * x = 20",
            _edit(SOFTPLUS, (_VALUE[0],
                             "    small = torch.logaddexp(z.clamp(max=19), torch.zeros_like(z))\n"
                             "    return torch.where(z > 20, z, small) / beta"))),
    Mistake("squared_norm", "one call when the batch dim is first, a loop over the samples "
            "otherwise",
            "calls the operator once per sample (5 calls for a batch of 5 with x's batch dim at 1",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n"
                                 "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                                 "    if x_bdim == 0:\n"
                                 "        return squared_norm(x, dim + 1 if dim >= 0 else dim), 0\n"
                                 "    return torch.stack([squared_norm(s, dim) "
                                 "for s in x.unbind(x_bdim)]), 0"))),
    # review 56b: another namespace was blamed on a re-run that never happened
    Mistake("softplus", "registered as mylib::softplus", "is the custom operator mylib::softplus",
            _edit(SOFTPLUS, ('"autograd_course::softplus"', '"mylib::softplus"'))),
    Mistake("squared_norm", "registered as mylib::squared_norm",
            "is the custom operator mylib::squared_norm",
            _edit(SQUARED_NORM, ('"autograd_course::squared_norm"', '"mylib::squared_norm"'))),
]
