"""Lesson 05: answers with known verdicts for checkpoint_sequential, built on the lesson's
CheckpointFunction (not on torch.utils.checkpoint's own reentrant Function)."""

from .. import Mistake, Unusual, edit
from .answers import CORRECT_BACKWARD, _checkpoint

HELPER = _checkpoint(CORRECT_BACKWARD)  # the CheckpointFunction checkpoint_sequential builds on


def _sequential(body: str) -> str:
    return HELPER + "\nfrom torch import nn\n\n\ndef checkpoint_sequential(layers, segments, x):\n" \
        + body


# the lesson's split: the first len(layers) % segments groups one layer longer
SPLIT = ("    layers = list(layers)\n    size, longer = divmod(len(layers), segments)\n"
         "    start = 0\n    for i in range(segments):\n"
         "        end = start + size + (i < longer)\n"
         "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)\n"
         "        start = end\n    return x\n")


UNUSUAL = [
    Unusual("checkpoint_sequential", "closures with bound defaults, the longer groups last",
            _sequential(
                "    layers = list(layers)\n    n, k = len(layers), segments\n"
                "    for i in range(k):\n"
                "        def run(h, start=i * n // k, end=(i + 1) * n // k):\n"
                "            for layer in layers[start:end]:\n                h = layer(h)\n"
                "            return h\n"
                "        x = CheckpointFunction.apply(run, x)\n    return x\n")),
    Unusual("checkpoint_sequential", "last segment run plainly, as torch.utils.checkpoint does",
            _sequential(
                "    layers = list(layers)\n"
                "    sizes = [len(layers) // segments + (i < len(layers) % segments)\n"
                "             for i in range(segments)]\n"
                "    start = 0\n"
                "    for size in sizes[:-1]:\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:start + size]),"
                " x)\n        start += size\n"
                "    for layer in layers[start:]:\n        x = layer(x)\n"
                "    return x\n")),
    Unusual("checkpoint_sequential", "functools.partial over a module list, ceil-sized groups "
            "while the rest still fills the others", _sequential(
                "    import functools\n\n    def run(block, h):\n        for layer in block:\n"
                "            h = layer(h)\n        return h\n\n"
                "    layers = list(layers)\n    start = 0\n"
                "    for left in range(segments, 0, -1):\n"
                "        size = -(-(len(layers) - start) // left)\n"
                "        x = CheckpointFunction.apply(functools.partial(run, layers[start:start + "
                "size]), x)\n        start += size\n"
                "    return x\n")),
    Unusual("checkpoint_sequential", "numpy.array_split spreads the remainder over the first "
            "segments", _sequential(
                "    import numpy as np\n    layers = list(layers)\n"
                "    for chunk in np.array_split(np.arange(len(layers)), segments):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*[layers[i] for i in chunk]), x)"
                "\n    return x\n")),
    # review 05e: layer.forward(h), not layer(h): module forward hooks never see it, and the
    # grader once told it "recomputed segments of [] layers"; calls are now recorded by wrapping
    # each layer's forward
    Unusual("checkpoint_sequential", "each layer called as layer.forward(h)", HELPER + """


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)

        def run(h, group=tuple(layers[start:end])):
            for layer in group:
                h = layer.forward(h)
            return h

        x = CheckpointFunction.apply(run, x)
        start = end
    return x
"""),
]

MISTAKES = [
    # a newcomer instructor's planted slip, once named as layers cached by an earlier call
    Mistake("checkpoint_sequential", "segments - 1 groups checkpointed, the last never run",
            "returned x as it was given, without running any of the", edit(
                UNUSUAL[1].code, ("    for layer in layers[start:]:\n        x = layer(x)\n", ""))),
    Mistake("checkpoint_sequential", "no checkpoints", "checkpointed nothing", _sequential(
        "    for layer in layers:\n        x = layer(x)\n    return x\n"), nbgrader=True),
    Mistake("checkpoint_sequential", "len // segments chunks make too many segments",
            "made 3 checkpointed segments: split the layers into exactly 2", _sequential(
                "    layers = list(layers)\n    size = max(len(layers) // segments, 1)\n"
                "    for start in range(0, len(layers), size):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:start + size]),"
                " x)\n    return x\n")),
    Mistake("checkpoint_sequential", "drops the remainder", "ran only the first",
            _sequential(
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    for i in range(segments):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[i * size:(i + 1) * "
                "size]), x)\n    return x\n")),
    Mistake("checkpoint_sequential", "late-binding closure in the loop", "the recomputation ran "
            "different code than forward", _sequential(
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    bounds = [i * size for i in range(segments)] + [len(layers)]\n"
                "    for start, end in zip(bounds, bounds[1:]):\n"
                "        def run(h):\n            for layer in layers[start:end]:\n"
                "                h = layer(h)\n            return h\n"
                "        x = CheckpointFunction.apply(run, x)\n    return x\n"), named=True),
    Mistake("checkpoint_sequential", "torch's split: n // k each, the remainder in the last",
            "where no segment needs more than 2", _sequential(
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    starts = [i * size for i in range(segments)] + [len(layers)]\n"
                "    for start, end in zip(starts, starts[1:]):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)\n"
                "    return x\n"), named=True),
    Mistake("checkpoint_sequential", "ceil(n / k) layers per segment", "ceil(n / k) layers per "
            "segment", _sequential(
                "    layers = list(layers)\n    size = math.ceil(len(layers) / segments)\n"
                "    for start in range(0, len(layers), size):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:start + size]),"
                " x)\n    return x\n"), named=True),
    Mistake("checkpoint_sequential", "built on a CheckpointFunction that backpropagates its saved "
            "output (backward would re-enter itself without end)", "re-entered a "
            "CheckpointFunction's own backward", """

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, x):
        output = run_fn(x)
        ctx.save_for_backward(x, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        x, output = ctx.saved_tensors
        torch.autograd.backward(output, grad_output)
        return None, None


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size = len(layers) // segments
    bounds = [i * size for i in range(segments)] + [len(layers)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(torch.nn.Sequential(*layers[start:end]), x)
    return x
"""),
    # the contract's clause: "built on" the CheckpointFunction above
    Mistake("checkpoint_sequential", "built on torch.utils.checkpoint(use_reentrant=True)",
            "checkpointed its segments with PyTorch's own Function", _sequential(
                "    from torch.utils.checkpoint import checkpoint\n"
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    for i in range(segments):\n"
                "        end = len(layers) if i == segments - 1 else (i + 1) * size\n"
                "        x = checkpoint(nn.Sequential(*layers[i * size:end]), x, "
                "use_reentrant=True)\n    return x\n")),
    # torch's non-reentrant checkpoint leaves no Function node: named from the recomputation it
    # runs in backward, before the split is judged (review 05: once "segments not the ones asked")
    Mistake("checkpoint_sequential", "built on torch.utils.checkpoint(use_reentrant=False)",
            "that is PyTorch's non-reentrant checkpoint", _sequential(
                "    from torch.utils.checkpoint import checkpoint\n"
                "    layers = list(layers)\n    size, longer = divmod(len(layers), segments)\n"
                "    start = 0\n    for i in range(segments):\n"
                "        end = start + size + (i < longer)\n"
                "        x = checkpoint(nn.Sequential(*layers[start:end]), x, "
                "use_reentrant=False)\n        start = end\n    return x\n")),
    # the groups popped off the caller's list: right on the first call, and the caller's list
    # is left empty (review 05b: the grader's own segment check once crashed on it, range(0, 0,
    # 0), blamed on the learner; the grader now passes a fresh copy and names the change)
    Mistake("checkpoint_sequential", "takes the groups off the caller's list with pop(0)",
            "changed the caller's list of layers", _sequential(
                "    if isinstance(layers, nn.Sequential):\n        layers = list(layers)\n"
                "    size, longer = divmod(len(layers), segments)\n"
                "    for i in range(segments):\n"
                "        group = [layers.pop(0) for _ in range(size + (i < longer))]\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*group), x)\n"
                "    return x\n")),
    # review 05c: "one group may run without a checkpoint" read as the first: its activations
    # are kept for the whole step (once "the segments are not the ones asked for")
    Mistake("checkpoint_sequential", "the first group run plainly, the rest checkpointed",
            "the first group ran without a checkpoint", HELPER + """
from torch import nn


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        block = nn.Sequential(*layers[start:end])
        x = block(x) if i == 0 else CheckpointFunction.apply(block, x)
        start = end
    return x
"""),
    # review 05c: a late-binding closure in a loop that ends with `start = end`: in backward
    # every segment reads start == end == n and recomputes no layer (once "your gradient for x
    # is wrong")
    Mistake("checkpoint_sequential", "late-binding closure, the loop ending with start = end",
            "but none of them ran again in backward", HELPER + """


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)

        def run_segment(h):
            for layer in layers[start:end]:
                h = layer(h)
            return h

        x = CheckpointFunction.apply(run_segment, x)
        start = end
    return x
"""),
    # review 05c: the late-binding closure over a zip of boundaries i * n // k
    Mistake("checkpoint_sequential", "late-binding closure over zip(bounds, bounds[1:])",
            "the recomputation ran different code than forward", HELPER + """


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    n = len(layers)
    bounds = [i * n // segments for i in range(segments + 1)]
    for start, end in zip(bounds, bounds[1:]):
        def run_segment(h):
            for layer in layers[start:end]:
                h = layer(h)
            return h
        x = CheckpointFunction.apply(run_segment, x)
    return x
"""),
    # review 05e: layer 0 run plainly, layers[1:] cut into `segments` checkpointed groups (once
    # "the segments are not the ones asked for; cut the layers into exactly k groups")
    Mistake("checkpoint_sequential", "layer 0 run plainly before the checkpointed groups",
            "layer 0 ran in forward outside every checkpoint", HELPER + """
from torch import nn


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    x = layers[0](x)
    rest = layers[1:]
    size, longer = divmod(len(rest), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        if end > start:
            x = CheckpointFunction.apply(nn.Sequential(*rest[start:end]), x)
        start = end
    return x
"""),
    # review 05e: one-layer groups run plainly, the split right (once "made 2 checkpointed
    # segments: split the layers into exactly 5 consecutive groups")
    Mistake("checkpoint_sequential", "one-layer groups run without a checkpoint",
            "layers 4 to 6 ran in forward outside every checkpoint", HELPER + """
from torch import nn


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        group = nn.Sequential(*layers[start:end])
        x = group(x) if end - start == 1 else CheckpointFunction.apply(group, x)
        start = end
    return x
"""),
    # review 52: each segment fed x.detach().requires_grad_() "so it keeps only its own input":
    # backward stops at the first cut and x gets nothing (once "backward returned None for x,
    # which requires grad: return grad_x", the generic message)
    Mistake("checkpoint_sequential", "each segment fed a detached copy of its input",
            "the output's graph does not reach x", HELPER + """
from torch import nn


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, extra = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < extra)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]),
                                     x.detach().requires_grad_())
        start = end
    return x
"""),
    # groups built in order, run in reverse (issue 69: once told only "the output is wrong")
    Mistake("checkpoint_sequential", "groups run in reverse order", "ran its groups out of order",
            _sequential(
                "    layers = list(layers)\n    size, longer = divmod(len(layers), segments)\n"
                "    groups, start = [], 0\n    for i in range(segments):\n"
                "        end = start + size + (i < longer)\n"
                "        groups.append(nn.Sequential(*layers[start:end]))\n"
                "        start = end\n"
                "    for group in reversed(groups):\n"
                "        x = CheckpointFunction.apply(group, x)\n    return x\n")),
    # requires_grad_() on every layer "so the gradients flow through the checkpoints": a layer
    # the caller froze is trained again (issue 69, the caller's state)
    Mistake("checkpoint_sequential", "requires_grad_() on every layer, frozen ones too",
            "unfroze the caller's frozen parameter",
            _sequential("    for layer in layers:\n        layer.requires_grad_()\n" + SPLIT)),
]
