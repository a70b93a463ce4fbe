"""Lesson 05: the answers of review 58b (a second fresh review) not already catalogued in the
same form. The reviewer's two answers that passed both checks change the caller's stack in ways
the old check of "leave `layers` as it was given" (the list's length and order) never saw: an
nn.Sequential set to train() "to be sure dropout is on", and every layer's gradients wiped with
zero_grad "to start clean". The grader now runs an nn.Sequential in mixed modes whose parameters
already hold gradients (an earlier micro-batch's), and requires every mode kept and the gradients
added to. Their twins: eval() on every layer, zero_grad(set_to_none=False), and a stack built on a
CheckpointFunction that overwrites the parameters' .grad in backward."""

from .. import Mistake, edit
from .checkpoint_function import MISTAKES as FUNCTION_MISTAKES
from .checkpoint_sequential import UNUSUAL as SEQUENTIAL_UNUSUAL

SOLUTION = SEQUENTIAL_UNUSUAL[4].code  # spread remainder, each group a closure over its layers
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

OVERWRITE = next(m.code for m in FUNCTION_MISTAKES
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

MISTAKES = [
    Mistake("checkpoint_sequential", "sets the caller's nn.Sequential to train()",
            "changed the mode of the caller's layers: the nn.Sequential was in eval() mode and "
            "is training", WRONG_01_TRAIN),
    Mistake("checkpoint_sequential", "sets every layer to eval()",
            "changed the mode of the caller's layers: layer 0 was training", WRONG_02_EVAL),
    Mistake("checkpoint_sequential", "zero_grad(set_to_none=True) on every layer",
            "set to None the .grad that parameter 0.weight already held", WRONG_03_ZERO_GRAD),
    Mistake("checkpoint_sequential", "zero_grad(set_to_none=False) on every layer",
            "changed the .grad that parameter 0.weight already held", WRONG_04_ZERO_GRAD_ZEROS),
    Mistake("checkpoint_sequential", "built on a CheckpointFunction that overwrites .grad",
            "was replaced, not added to", WRONG_05_OVERWRITING_FUNCTION),
]
