"""Lesson 05: the answers of review 55b not already catalogued in the same form, with the hint
each gets. The reviewer's one answer that passed both checks restores the CPU generator only:
it breaks the contract's GPU bullet, which only a grader with a GPU grades (a ``gpu`` entry,
skipped on CPU). Two were caught with a partial message: the rebuilt graph kept on ctx (now
named, with the memory it holds after backward) and ReversibleCoupling's leaves cast to float32
(now named as the cast, not the dtype error it raises). Not here: the reviewer's unusual answers,
each already catalogued in the same form (the generator put back by hand, the state through
save_for_backward, RevNet's one-call backward, autograd.grad accumulated by hand)."""

from .. import Mistake, edit
from .answers import CORRECT_BACKWARD, _checkpoint
from .reversible_coupling import INVERT, RECOMPUTE, RETURN, RIGHT, _coupling

SOLUTION = _checkpoint(CORRECT_BACKWARD)
COUPLING = _coupling(INVERT + RECOMPUTE + RIGHT + RETURN)

# CheckpointFunction: "dropout draws from the CPU generator": no CUDA device noted, so a CUDA
# tensor's recomputation draws from its device's generator where the caller left it.
WRONG_01_CPU_STATE_ONLY = edit(
    SOLUTION, ("        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})\n",
               "        ctx.devices = []  # dropout draws from the CPU generator\n"))

# CheckpointFunction: the rebuilt graph kept on ctx "so a second backward need not recompute":
# it keeps every activation run_fn saved alive after backward, as long as the caller's output.
WRONG_02_KEEPS_REBUILT_GRAPH = edit(
    SOLUTION,
    ("        torch.autograd.backward(output, grad_output)\n",
     "        ctx.rebuilt = output  # a second backward can reuse it\n"
     "        torch.autograd.backward(output, grad_output)\n"))

# ReversibleCoupling: the rebuilt inputs cast to float32 "for speed" before the recomputation.
WRONG_03_COUPLING_LEAVES_FLOAT32 = edit(
    COUPLING, ("        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n",
               "        x1, x2 = x1.float().requires_grad_(), x2.float().requires_grad_()\n"))

MISTAKES = [
    Mistake("CheckpointFunction", "restores the CPU random state only, never a CUDA device's",
            "the CPU random state was restored, but not the CUDA device's",
            WRONG_01_CPU_STATE_ONLY, gpu=True),
    Mistake("CheckpointFunction", "the rebuilt graph kept on ctx for a second backward",
            "a tensor of the graph it rebuilt", WRONG_02_KEEPS_REBUILT_GRAPH),
    Mistake("ReversibleCoupling", "fresh leaves cast to float32 (.float()) in backward",
            "the rebuilt inputs were cast before the recomputation",
            WRONG_03_COUPLING_LEAVES_FLOAT32),
]
