"""Lesson 05: the answers of review 57 not already catalogued in the same form, with the hint
each gets, or as passing. The reviewer's two answers that passed both checks: the random state
replayed only when run_fn holds an nn.Dropout (a module drawing with F.dropout is now graded),
and backward's fresh leaves (so their .grad) kept on ctx (now named, with the bytes they hold);
the gradients kept on ctx too. One was caught with the learner's own exception: run_fn dropped
from ctx by the first backward (now named as the second backward's failure). Unusual: bounds
int(i * (n / k)) with an exact final bound, and rounded bounds with the last group plain. Not
here: the reviewer's other answers, each already catalogued in the same form. Round C: a frozen
parameter (requires_grad=False) inside run_fn or f, now graded: autograd.grad over every
parameter raises there (review 57's r8; the same answer was catalogued as unusual before)."""

from .. import Mistake, Unusual, edit
from .answers import CORRECT_BACKWARD, RESTORE, _checkpoint
from .checkpoint_function import GRAPH_WALK
from .checkpoint_sequential import _sequential
from .reversible_coupling import INVERT, RECOMPUTE, _coupling

SOLUTION = _checkpoint(CORRECT_BACKWARD)
BACKWARD = "        torch.autograd.backward(output, grad_output)\n"

# CheckpointFunction: "only dropout draws random numbers": the state replayed only when run_fn
# is a function or a module holding an nn.Dropout; a module calling F.dropout gets new masks.
WRONG_01_ONLY_FOR_DROPOUT = "from torch import nn\n" + edit(
    SOLUTION, (RESTORE, RESTORE.replace(
        "        with torch.random.fork_rng(devices=ctx.devices):\n"
        "            torch.set_rng_state(ctx.cpu_state)\n",
        "        random = not isinstance(ctx.run_fn, nn.Module) or any(\n"
        "            isinstance(m, nn.modules.dropout._DropoutNd) for m in ctx.run_fn.modules())\n"
        "        with torch.random.fork_rng(devices=ctx.devices, enabled=random):\n"
        "            if random:\n                torch.set_rng_state(ctx.cpu_state)\n")))

# CheckpointFunction: the fresh leaves kept on ctx "to read their gradients later": each holds
# its .grad (an input's worth of bytes) for as long as the caller holds the output.
WRONG_02_LEAVES_ON_CTX = edit(SOLUTION, (BACKWARD, "        ctx.leaves = args\n" + BACKWARD))

# CheckpointFunction: the gradients it returns also kept on ctx.
WRONG_03_GRADS_ON_CTX = edit(
    SOLUTION, ("        return (None, *(a.grad", "        ctx.grads = [a.grad if isinstance("
               "a, torch.Tensor) else None for a in args]\n        return (None, *(a.grad"))

# CheckpointFunction: run_fn dropped from ctx once backward is done, "to free it early": a second
# backward (retain_graph=True) calls None.
WRONG_04_DROPS_RUN_FN = edit(SOLUTION, (BACKWARD, BACKWARD + "        ctx.run_fn = None\n"))

# ReversibleCoupling (review 57, r8): torch.autograd.grad over x1, x2 and every parameter of f
# and g, accumulated by hand: a frozen parameter among them makes autograd.grad raise.
_GRAD_ALL = (INVERT + RECOMPUTE + "        params = [*ctx.f.parameters(), *ctx.g.parameters()]\n"
             "        grads = torch.autograd.grad((z1, z2), [x1, x2, *params], (grad_y1, grad_y2))\n"
             "        for p, grad in zip(params, grads[2:]):\n"
             "            p.grad = grad if p.grad is None else p.grad + grad\n"
             "        return grads[0], grads[1], None, None")
PARAMS = "        params = [*ctx.f.parameters(), *ctx.g.parameters()]\n"
WRONG_05_GRAD_ALL_PARAMS = _coupling(_GRAD_ALL)

# CheckpointFunction: the graph walk for a function, but a module's run_fn.parameters() all
# listed for autograd.grad, the frozen one too.
OTHERS = "        others = [v for v in _leaves(out) if not any(v is m for m in mine)]\n"
WRONG_06_ALL_MODULE_PARAMS = "from torch import nn\n" + edit(GRAPH_WALK, (OTHERS, (
    "        others = (list(ctx.run_fn.parameters()) if isinstance(ctx.run_fn, nn.Module)\n"
    "                  else [v for v in _leaves(out) if not any(v is m for m in mine)])\n")))

# ReversibleCoupling: torch.autograd.backward with inputs= listing every parameter (catalogued
# as unusual before the frozen parameter was graded): a frozen one among them makes it raise.
_INPUTS_ALL = (INVERT + RECOMPUTE + "        torch.autograd.backward((z1, z2), (grad_y1, grad_y2), "
               "inputs=[x1, x2, *ctx.f.parameters(), *ctx.g.parameters()])\n"
               "        return x1.grad, x2.grad, None, None")
WRONG_07_INPUTS_ALL_PARAMS = _coupling(_INPUTS_ALL)

UNUSUAL = [
    Unusual("ReversibleCoupling", "torch.autograd.backward with inputs= listing the parameters "
            "that require grad", _coupling(edit(_INPUTS_ALL, (
                "*ctx.f.parameters(), *ctx.g.parameters()]",
                "*(p for m in (ctx.f, ctx.g) for p in m.parameters() if p.requires_grad)]")))),
    Unusual("ReversibleCoupling", "autograd.grad over the inputs and the parameters that "
            "require grad, accumulated by hand",
            _coupling(edit(_GRAD_ALL, (PARAMS, PARAMS.replace(
                "]\n", "]\n        params = [p for p in params if p.requires_grad]\n"))))),
    Unusual("checkpoint_sequential", "bounds int(i * (n / k)) with the last bound n itself",
            _sequential("    layers = list(layers)\n    n = len(layers)\n"
                        "    bounds = [int(i * (n / segments)) for i in range(segments)] + [n]\n"
                        "    for a, b in zip(bounds, bounds[1:]):\n"
                        "        x = CheckpointFunction.apply(nn.Sequential(*layers[a:b]), x)\n"
                        "    return x\n")),
    Unusual("checkpoint_sequential", "rounded bounds, functools.partial, the last group plain "
            "when x requires grad",
            _sequential("    import functools\n\n    def run(chunk, h):\n"
                        "        for layer in chunk:\n            h = layer(h)\n        return h\n\n"
                        "    layers = tuple(layers)\n    n = len(layers)\n"
                        "    bounds = [round(i * n / segments) for i in range(segments + 1)]\n"
                        "    for i, (a, b) in enumerate(zip(bounds, bounds[1:])):\n"
                        "        fn = functools.partial(run, layers[a:b])\n"
                        "        last = i == segments - 1 and x.requires_grad\n"
                        "        x = fn(x) if last else CheckpointFunction.apply(fn, x)\n"
                        "    return x\n")),
]

MISTAKES = [
    Mistake("CheckpointFunction", "restores the random state only when run_fn holds an "
            "nn.Dropout", "does your backward decide whether to restore the random state",
            WRONG_01_ONLY_FOR_DROPOUT),
    Mistake("CheckpointFunction", "the fresh leaves (and so their .grad) kept on ctx",
            "a fresh leaf of the graph it rebuilt", WRONG_02_LEAVES_ON_CTX),
    Mistake("CheckpointFunction", "the gradients it returns kept on ctx as well",
            "left ctx.grads[0] on ctx, a tensor it computed", WRONG_03_GRADS_ON_CTX),
    Mistake("CheckpointFunction", "run_fn dropped from ctx by the first backward "
            "(ctx.run_fn = None)", "raised TypeError when it ran a second time on one graph",
            WRONG_04_DROPS_RUN_FN),
    Mistake("ReversibleCoupling", "autograd.grad over x1, x2 and every parameter of f and g, "
            "frozen ones too", "when f holds a frozen parameter", WRONG_05_GRAD_ALL_PARAMS),
    Mistake("CheckpointFunction", "autograd.grad over a module run_fn's every parameter, "
            "frozen ones too", "when run_fn holds a frozen parameter", WRONG_06_ALL_MODULE_PARAMS),
    Mistake("ReversibleCoupling", "torch.autograd.backward with inputs= listing every "
            "parameter, frozen ones too", "when f holds a frozen parameter",
            WRONG_07_INPUTS_ALL_PARAMS),
]
