"""Lesson 05: the answers of review 57 not already catalogued in the same form, with the hint
each gets, or as passing. The reviewer's two answers that passed both checks: the random state
replayed only when run_fn holds an nn.Dropout (a module drawing with F.dropout is now graded),
and backward's fresh leaves (so their .grad) kept on ctx (now named, with the bytes they hold);
the gradients kept on ctx too. One was caught with the learner's own exception: run_fn dropped
from ctx by the first backward (now named as the second backward's failure). Unusual: bounds
int(i * (n / k)) with an exact final bound, and rounded bounds with the last group plain. Not
here: the reviewer's other answers, each already catalogued in the same form."""

from .. import Mistake, Unusual, edit
from .answers import CORRECT_BACKWARD, RESTORE, _checkpoint
from .checkpoint_sequential import _sequential

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

UNUSUAL = [
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
]
