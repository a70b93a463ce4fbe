"""Lesson 05: answers with known verdicts for checkpoint_sequential, built on the lesson's
CheckpointFunction (not on torch.utils.checkpoint's own reentrant Function): the split into
groups (counts, remainders, float bounds), late-binding closures, the caller's layers (their
list, modes, .grad and requires_grad), state kept between calls, and random layers."""

from .. import Mistake, Unusual, edit
from .answers import FORWARD, RESTORE
from .checkpoint_function import MISTAKES as MISTAKES_CHECKPOINT_FUNCTION

# the CheckpointFunction checkpoint_sequential builds on, the lesson's: it passes its own check
# (a failing one makes every failure of an answer built on it uses-failing-exercise)
HELPER = f"""

class CheckpointFunction(torch.autograd.Function):{FORWARD}
    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = [next(saved).detach().requires_grad_(needs) if is_tensor else other
                for is_tensor, other, needs in zip(ctx.is_tensor, ctx.others,
                                                   ctx.needs_input_grad[1:])]
{RESTORE}        if output.requires_grad:
            torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""


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
]

# review 05e once catalogued layer.forward(h) as correct; review 74c (S5): it skips the hooks the
# caller registered on its layers, so with a hook that changes an output it gives another output
# than the plain stack
FORWARD_CALLED = HELPER + """


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
"""

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
            "output (backward would re-enter itself without end)", "calls your CheckpointFunction, "
            "which fails its own check", """

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
            "checkpoint_sequential's forward changed the caller's "
            "layers[0].linear.bias.requires_grad from False to True",
            _sequential("    for layer in layers:\n        layer.requires_grad_()\n" + SPLIT)),
]


# checkpoint_sequential: bounds floor(i * n / k), so the longer groups come last (7 in 3:
# 2, 2, 3), each segment a functools.partial over its own tuple of layers; the last segment
# runs without a checkpoint, as torch's does.
UNUSUAL_02_SEQ_FLOOR_BOUNDS_PARTIAL = """
import functools

def _run(group, h):
    for layer in group:
        h = layer(h)
    return h

def checkpoint_sequential(layers, segments, x):
    layers = tuple(layers)
    n = len(layers)
    bounds = [i * n // segments for i in range(segments + 1)]
    for i, (start, end) in enumerate(zip(bounds, bounds[1:])):
        run = functools.partial(_run, layers[start:end])
        x = run(x) if i == segments - 1 else CheckpointFunction.apply(run, x)
    return x
"""


# checkpoint_sequential: binds start as a default argument, but reads end late.
WRONG_06_SEQ_HALF_LATE_BINDING = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, extra = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < extra)
        x = CheckpointFunction.apply(
            lambda h, s=start: nn.Sequential(*layers[s:end])(h), x)
        start = end
    return x
"""


# checkpoint_sequential: round(n / k) layers per segment, the rest in the last.
WRONG_07_SEQ_ROUND = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size = max(1, round(len(layers) / segments))
    bounds = [min(i * size, len(layers)) for i in range(segments)] + [len(layers)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""


SEQ = HELPER + "from torch import nn\n\n\n"


# checkpoint_sequential: bounds int(i * (n / k)), which for 15 layers in 11 or 13 groups end at
# layer 14 (11 * (15 / 11) is 14.999999999999998): the last layer never runs.
WRONG_03_SEQ_FLOAT_BOUNDS = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    step = len(layers) / segments
    bounds = [int(i * step) for i in range(segments + 1)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""


# checkpoint_sequential: the same with bounds from a running sum of n / k (15 layers, 7 groups).
WRONG_04_SEQ_RUNNING_SUM = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    step = len(layers) / segments
    bound, bounds = 0.0, [0]
    for _ in range(segments):
        bound += step
        bounds.append(int(bound))
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""


# checkpoint_sequential: bounds int(i / k * n): 26 layers in 26 groups make one group of 2 and
# one of none (15 / 26 * 26 is 14.999999999999998).
WRONG_05_SEQ_DIVIDE_FIRST = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    bounds = [int(i / segments * len(layers)) for i in range(segments + 1)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""


# checkpoint_sequential: the whole stack run plainly when x requires no grad (data), so the
# memory a checkpoint saves is spent on every model's first block.
WRONG_06_SEQ_PLAIN_ON_DATA = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    if not x.requires_grad:
        return nn.Sequential(*layers)(x)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
        start = end
    return x
"""


# checkpoint_sequential: groups cached by (number of layers, segments) across calls, so a second
# stack of the same length runs the first stack's layers.
WRONG_07_SEQ_CACHED_GROUPS = """
_groups = {}

def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    key = (len(layers), segments)
    if key in _groups:
        for group in _groups[key]:
            x = CheckpointFunction.apply(group, x)
        return x
    _groups[key] = []
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        _groups[key].append(nn.Sequential(*layers[start:end]))
        x = CheckpointFunction.apply(_groups[key][-1], x)
        start = end
    return x
"""


# checkpoint_sequential: the whole stack run once under no_grad first, as a shape check: every
# layer runs twice in forward, and a dropout layer draws a mask the plain stack never draws.
WRONG_03_SEQ_NO_GRAD_RUN_FIRST = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    with torch.no_grad():  # a quick run first: shapes fit before anything is checkpointed
        nn.Sequential(*layers)(x)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
        start = end
    return x
"""


# checkpoint_sequential: the generator seeded before the groups "for reproducibility", so the
# dropout layers draw other masks than the plain stack run from the caller's seed.
WRONG_04_SEQ_SEEDS = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    torch.manual_seed(0)  # reproducible dropout in every run
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
        start = end
    return x
"""


# spread remainder, each group a closure over its layers
SOLUTION = edit(FORWARD_CALLED, ("h = layer.forward(h)", "h = layer(h)"))


LIST = "    layers = list(layers)\n    size, longer"


def _first(body: str) -> str:
    return edit(SOLUTION, (LIST, body + LIST))


# review 58b, s5: the caller's nn.Sequential set to training "to be sure dropout is on"
WRONG_01_TRAIN = _first("    if isinstance(layers, torch.nn.Module):\n        layers.train()\n")


# every layer set to eval() "so that the recomputation draws no other dropout mask"
WRONG_02_EVAL = _first("    for layer in layers:\n        layer.eval()\n")


# review 58b, s7: every layer's gradients set to None "to start each step clean"
WRONG_03_ZERO_GRAD = _first("    for layer in layers:\n        layer.zero_grad(set_to_none=True)\n")


# the same with zeros kept in .grad
WRONG_04_ZERO_GRAD_ZEROS = _first(
    "    for layer in layers:\n        layer.zero_grad(set_to_none=False)\n")


OVERWRITE = next(m.code for m in MISTAKES_CHECKPOINT_FUNCTION
                 if m.name == "overwrites the parameters' .grad")


# built on a CheckpointFunction whose backward assigns each group's parameter gradients to
# .grad: with .grad cleared first (as the main check does) it is right, after a micro-batch not
WRONG_05_OVERWRITING_FUNCTION = OVERWRITE + """

def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(torch.nn.Sequential(*layers[start:end]), x)
        start = end
    return x
"""


# review 59, u2: bounds round(i * n / k), each group a functools.partial over one run function
UNUSUAL_02_ROUND_BOUNDS = _sequential("""\
    import functools
    layers = list(layers)
    n = len(layers)
    bounds = [round(i * n / segments) for i in range(segments + 1)]

    def run(lo, hi, h):
        for layer in layers[lo:hi]:
            h = layer(h)
        return h

    for lo, hi in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(functools.partial(run, lo, hi), x)
    return x
""")


# review 59, s6: groups built once per (id(layers), segments) and run again on the next call
CACHE = """_GROUPS = {}


def checkpoint_sequential(layers, segments, x):
    key = (id(layers), segments)
    if key not in _GROUPS:
        layers = list(layers)
        size, longer = divmod(len(layers), segments)
        groups, start = [], 0
        for i in range(segments):
            end = start + size + (i < longer)
            groups.append(nn.Sequential(*layers[start:end]))
            start = end
        _GROUPS[key] = groups
    for group in _GROUPS[key]:
        x = CheckpointFunction.apply(group, x)
    return x
"""


WRONG_04_ID_CACHE = HELPER + "\nfrom torch import nn\n\n\n" + CACHE


STATE_HINT = "kept state outside ctx: _GROUPS in a module global"


# its twin: the cache kept for an nn.Sequential only ("a module does not change")
WRONG_05_MODULE_CACHE = edit(WRONG_04_ID_CACHE, (
    "    if key not in _GROUPS:\n",
    "    if not isinstance(layers, nn.Module):\n        _GROUPS.pop(key, None)\n"
    "    if key not in _GROUPS:\n"))


# review 59, s3: slices of the list handed to CheckpointFunction as they are (a list)
WRONG_06_SLICE = _sequential(edit(SPLIT, ("    layers = list(layers)\n", ""), (
    "nn.Sequential(*layers[start:end])", "layers[start:end]")))


# review 59b, s3: k - 1 groups of one layer, the rest in the last (the right count, the last
# group too long)
WRONG_02_SINGLETONS_FIRST = _sequential(
    "    layers = list(layers)\n"
    "    bounds = list(range(segments)) + [len(layers)]\n"
    "    for start, end in zip(bounds, bounds[1:]):\n"
    "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)\n"
    "    return x\n")


# review 59c, s11: deep copies of the caller's layers, "to leave them as given"
WRONG_04_DEEP_COPIES = "import copy\n" + _sequential(edit(SPLIT, (
    "layers = list(layers)", "layers = copy.deepcopy(list(layers))")))


# review 59c, s7: the split cached in a module dict keyed by segments only
WRONG_05_SPLIT_BY_SEGMENTS = "_SPLIT = {}\n" + _sequential(
    "    layers = list(layers)\n    if segments not in _SPLIT:\n"
    "        size, longer = divmod(len(layers), segments)\n"
    "        _SPLIT[segments] = [size + (i < longer) for i in range(segments)]\n"
    "    start = 0\n    for n in _SPLIT[segments]:\n"
    "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:start + n]), x)\n"
    "        start += n\n    return x\n")


MISTAKES += [
    Mistake('checkpoint_sequential',
            'late-binding closure: start bound as a default, end read late',
            'the recomputation ran different code than forward',
            HELPER + "from torch import nn\n\n\n" + WRONG_06_SEQ_HALF_LATE_BINDING),
    Mistake('checkpoint_sequential', 'round(n / k) layers per segment, the rest in the last',
            'made a segment of 3 layers ([1, 1, 1, 1, 3] recomputed)',
            HELPER + "from torch import nn\n\n\n" + WRONG_07_SEQ_ROUND),
    Mistake("checkpoint_sequential", "bounds int(i * (n / k)), computed in floating point",
            "11 * (15 / 11) is 14.999999999999998, which int() truncates to 14",
            SEQ + WRONG_03_SEQ_FLOAT_BOUNDS),
    Mistake("checkpoint_sequential", "bounds from a running sum of n / k",
            "adding 15 / 7 7 times gives 14.999999999999998", SEQ + WRONG_04_SEQ_RUNNING_SUM),
    Mistake("checkpoint_sequential", "bounds int(i / k * n)",
            "15 / 26 * 26 is 14.999999999999998", SEQ + WRONG_05_SEQ_DIVIDE_FIRST),
    Mistake("checkpoint_sequential", "the stack run plainly when x requires no grad",
            "ran layers 0 to 3 with grad on, outside every checkpoint",
            SEQ + WRONG_06_SEQ_PLAIN_ON_DATA),
    Mistake("checkpoint_sequential", "groups cached by (number of layers, segments) across calls",
            "without running any of the 7 layers it was given", SEQ + WRONG_07_SEQ_CACHED_GROUPS),
    Mistake("checkpoint_sequential", "the whole stack run once under no_grad before the groups",
            "more than once in forward", SEQ + WRONG_03_SEQ_NO_GRAD_RUN_FIRST),
    Mistake("checkpoint_sequential", "the generator seeded before the groups",
            "dropout layers drew other masks", SEQ + WRONG_04_SEQ_SEEDS),
    Mistake("checkpoint_sequential", "sets the caller's nn.Sequential to train()",
            "changed the mode of the caller's layers: the nn.Sequential was in eval() mode and "
            "is training", WRONG_01_TRAIN),
    Mistake("checkpoint_sequential", "sets every layer to eval()",
            "changed the mode of the caller's layers: layer 0 was training", WRONG_02_EVAL),
    Mistake("checkpoint_sequential", "zero_grad(set_to_none=True) on every layer",
            "set to None the .grad that parameter 0.weight already held", WRONG_03_ZERO_GRAD),
    Mistake("checkpoint_sequential", "zero_grad(set_to_none=False) on every layer",
            "changed the .grad that parameter 0.weight already held", WRONG_04_ZERO_GRAD_ZEROS),
    # its CheckpointFunction fails its own check: the loop's probes prove nothing through it
    Mistake("checkpoint_sequential", "built on a CheckpointFunction that overwrites .grad",
            "calls your CheckpointFunction, which fails its own check",
            WRONG_05_OVERWRITING_FUNCTION),
    Mistake("checkpoint_sequential", "groups cached by id(layers) across calls", STATE_HINT,
            WRONG_04_ID_CACHE),
    Mistake("checkpoint_sequential", "groups cached by id(layers) for an nn.Sequential only",
            STATE_HINT, WRONG_05_MODULE_CACHE),
    Mistake("checkpoint_sequential", "slices of the list handed to CheckpointFunction as lists",
            "'list' object is not callable", WRONG_06_SLICE),
    Mistake("checkpoint_sequential", "k - 1 groups of one layer, the rest in the last",
            "which sizes of", WRONG_02_SINGLETONS_FIRST),
    Mistake("checkpoint_sequential", "deep copies of the caller's layers",
            "copies of them", WRONG_04_DEEP_COPIES),
    Mistake("checkpoint_sequential", "the split cached by segments across calls",
            "kept from an earlier call", WRONG_05_SPLIT_BY_SEGMENTS),
]


UNUSUAL += [
    Unusual('checkpoint_sequential',
            'floor bounds, functools.partial over a tuple, the last segment plain',
            HELPER + "\n\n" + UNUSUAL_02_SEQ_FLOOR_BOUNDS_PARTIAL),
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
    Unusual("checkpoint_sequential", "bounds round(i * n / k), functools.partial groups",
            UNUSUAL_02_ROUND_BOUNDS),
]


# the caller's state: its random stream, its batch, and what its layers are
FORK_RNG_AROUND_LOOP = _sequential(
    "    with torch.random.fork_rng(devices=[]):\n"
    + "".join("    " + line + "\n" for line in SPLIT.splitlines()))

LAYERS_FROM_MODULES = _sequential(
    "    if isinstance(layers, nn.Module):\n"
    "        layers = [m for m in layers.modules() if not isinstance(m, nn.Sequential)]\n"
    + SPLIT)

REQUIRES_GRAD_ON_CALLERS_X = _sequential(
    "    if not x.requires_grad:\n        x.requires_grad_()\n" + SPLIT)

MISTAKES += [
    Mistake("checkpoint_sequential", "the whole loop inside torch.random.fork_rng",
            "after the call the caller's random stream is not where the plain stack leaves it",
            FORK_RNG_AROUND_LOOP),
    Mistake("checkpoint_sequential", "layers taken from .modules(), nn.Sequential left out",
            "the stack's 4 layers are residual blocks", LAYERS_FROM_MODULES),
    Mistake("checkpoint_sequential", "requires_grad_() on the caller's batch",
            "after the call the caller's x requires grad", REQUIRES_GRAD_ON_CALLERS_X),
]

# a fresh review's S4: "a finer split", every nn.Sequential among the layers flattened into its
# children; a block that subclasses nn.Sequential with a forward of its own loses its skip
MISTAKES.append(Mistake(
    "checkpoint_sequential", "nn.Sequential blocks flattened into their children",
    "flattening a block drops its skip", _sequential(
        "    flat = []\n    for layer in layers:\n"
        "        flat += list(layer) if isinstance(layer, nn.Sequential) else [layer]\n"
        "    layers = flat\n" + SPLIT)))

MISTAKES.append(Mistake("checkpoint_sequential", "each layer called as layer.forward(h)",
                        "but the hook the caller registered on it never did", FORWARD_CALLED))

# review 74c, S8: an nn.Sequential flattened into the modules without children "to get the real
# layers": the residual blocks never run, only their parts
MISTAKES.append(Mistake(
    "checkpoint_sequential", "the layers taken as the stack's modules without children "
    "(.modules())", "never one of the 4 layers themselves", _sequential(
        "    if isinstance(layers, nn.Sequential):\n"
        "        layers = [m for m in layers.modules() if not list(m.children())]\n" + SPLIT)))

# review 74c, W17: built on a CheckpointFunction that backpropagates only when the rebuilt output
# has a grad_fn: a layer that returns its input itself (nn.Identity, an eval-mode Dropout) in a
# group of its own stops the gradient
MISTAKES.append(Mistake(
    "checkpoint_sequential", "built on a CheckpointFunction that backpropagates only when the "
    "rebuilt output has a grad_fn", "calls your CheckpointFunction, which fails its own check",
    edit(_sequential(SPLIT), ("        if output.requires_grad:\n",
                              "        if output.grad_fn is not None:\n"))))

# grad mode switched on "because checkpointing needs autograd" and never put back: under the
# caller's torch.no_grad() every later op records a graph (review 80, ws1; rule 6)
MISTAKES.append(Mistake(
    "checkpoint_sequential", "torch.set_grad_enabled(True) at the top, never put back",
    "called under torch.no_grad(), returned with grad mode on",
    _sequential("    torch.set_grad_enabled(True)\n" + SPLIT)))
