"""Where backward finds what forward kept: ctx.saved_tensors, not a copy kept aside (lessons 00
and 04). Where state sits cannot be enumerated (a global keyed by id(ctx), an attribute, a
closure); what backward does with doctored saved tensors can."""

import torch

from ...checks import Spec, make_inputs, reference_gradients
from ...errors import GradingError
from ...function_contract import rule_reference

# what the saved-tensor hooks below hand backward for each floating tensor forward saved:
# that tensor times a factor of its own, 2 for the first saved, 3 for the second, 5, 7, ...
# (exact in floating point). A gradient built from what was saved then changes (doubles, where
# it is linear in one saved tensor, as Square's is); one that stays the true gradient was built
# from values kept elsewhere. One factor for all would leave a ratio of two saved tensors
# (2 * y / x from a saved x and y) unchanged, and blame a backward that reads only them
SCALE = 2.0
FACTORS = (2.0, 3.0, 5.0, 7.0, 11.0, 13.0)


def doubled_saved_tensors():
    """Saved-tensor hooks whose unpack hands backward each saved floating tensor times a factor
    of its own (2 for the first saved, then 3, 5, ...): what is saved inside the block comes
    back doctored, whenever backward reads it, and no two saved tensors by the same factor."""
    count = [0]

    def pack(tensor):
        factor = FACTORS[count[0] % len(FACTORS)]
        count[0] += 1
        return tensor, factor

    def unpack(packed):
        tensor, factor = packed
        return tensor * factor if tensor.is_floating_point() else tensor

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


def stayed(grad, truth: torch.Tensor) -> bool:
    """Whether a gradient computed from doctored saved tensors is still the true one (and the
    true one is not a fixed point of the doctoring, as zero is)."""
    return (isinstance(grad, torch.Tensor) and grad.shape == truth.shape
            and torch.allclose(grad, truth) and not torch.allclose(grad, SCALE * truth))


def check_backward_reads_saved(function, spec: Spec, values: dict, kept: str) -> None:
    """Under saved-tensor hooks whose unpack hands backward each saved floating tensor times a
    factor of its own (2, 3, ...), every gradient must change. One that stays the true gradient came from values backward
    kept elsewhere: a copy in a global keyed by id(ctx), on an attribute, a closure."""
    inputs = make_inputs(values)
    with doubled_saved_tensors():
        output = function.apply(*inputs.values())
    grad_output = 0.5 + torch.rand(output.shape, dtype=output.dtype,
                                   generator=torch.Generator().manual_seed(3)).to(output.device)
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    grads = torch.autograd.grad(output, [inputs[n] for n in wanted], grad_output,
                                allow_unused=True)
    truth = reference_gradients(spec, inputs, grad_output)
    for name, grad in zip(wanted, grads):
        if stayed(grad, truth[name]):
            raise GradingError(
                f"{spec.name}'s backward reads {kept} from somewhere other than "
                "ctx.saved_tensors: handed other values for what forward saved (saved-tensor "
                "hooks may give backward a tensor moved to the CPU and back, or recomputed), "
                f"your gradient for {name} stayed the one of the values forward saw, so "
                "backward used a copy kept aside (on the class, in a global, in a dict keyed by "
                f"id(ctx)); read {kept} from ctx.saved_tensors, and keep no other copy "
                f"{rule_reference('ctx')}",
                mistake=f"{spec.name}/bypasses-saved-tensors")
