"""Lesson 00's Outer answers that only issue 37's checks separate: work done for a gradient
nobody needs (returning None for it is not enough), and state shared between calls."""

from tools.catalogue import Mistake

from .lesson00 import READ_UV, _outer

UNUSUAL = []

MISTAKES = [
    # the right gradients, with None where none is needed: only what backward reads shows that
    # it computed both every time
    Mistake("Outer", "both gradients computed, None returned for the unneeded one",
            "Outer.backward used the values of u (in aten.mm) when only u requires grad",
            _outer(READ_UV + "        grad_u = grad_output @ v\n        grad_v = u @ grad_output\n"
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return grad_u if need_u else None, grad_v if need_v else None")),
    Mistake("Outer", "u and v kept in a module global", "Outer's backward used another call's inputs",
            "\n_saved = {}\n" + _outer("        u, v = _saved['uv']\n"
                                         "        need_u, need_v = ctx.needs_input_grad\n"
                                         "        return (grad_output @ v if need_u else None,\n"
                                         "                u @ grad_output if need_v else None)",
                                         "        _saved['uv'] = (u, v)\n"
                                         "        return torch.outer(u, v)")),
]
