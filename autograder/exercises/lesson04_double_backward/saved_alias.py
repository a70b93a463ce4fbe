"""CubeOnce's saving clause as it means it: what forward saves of x (or of the output) is that
tensor itself, which autograd's version counter guards. A tensor made from its memory
(``torch.from_numpy(x.numpy())``, ``x.data``) shares the numbers but not the counter, so an
in-place change after forward goes unseen and backward silently uses the changed values. The
probe makes that change (to a non-leaf x, then to the output) and expects either autograd's
"modified by an inplace operation" error or the gradient of the values forward saw."""

import torch

from ...checks import Spec
from ...errors import GradingError
from ...exercise import sample

_MODIFIED = "modified by an inplace operation"


def check_saved_guarded(function, spec: Spec, device) -> None:
    for which in ("x", "the output"):
        leaf = sample((4,), device, seed=13).requires_grad_()
        x = leaf * 1  # a non-leaf: in-place changes to it are allowed
        output = function.apply(x)
        changed = x if which == "x" else output
        memory = changed.untyped_storage().data_ptr()
        if not any(t.untyped_storage().data_ptr() == memory and t is not changed
                   for t in getattr(output.grad_fn, "saved_tensors", ())):
            continue  # nothing saved from its memory (a tensor kept elsewhere is named later)
        with torch.no_grad():
            (x if which == "x" else output).add_(1.0)
        grad_output = torch.linspace(0.5, 1.5, 4, dtype=leaf.dtype, device=device)
        try:
            grad, = torch.autograd.grad(output, leaf, grad_output)
        except RuntimeError as error:
            if _MODIFIED in str(error):
                continue
            return  # the battery's other checks explain it
        truth = 3 * leaf.detach() ** 2 * grad_output
        if isinstance(grad, torch.Tensor) and grad.shape == truth.shape \
                and not torch.allclose(grad, truth):
            raise GradingError(
                f"{spec.name} saved a tensor that shares {which}'s memory but is not {which} "
                "(a torch.from_numpy of its .numpy(), or its .data): an in-place change to "
                f"{which} after forward went unseen, and backward used the changed values "
                f"instead of raising autograd's \"{_MODIFIED}\" error; what guards a tensor "
                "passed to save_for_backward, and does a tensor made from its memory share it?",
                f"gradient: {grad.tolist()}\nof the values forward saw: {truth.tolist()}",
                mistake=f"{spec.name}/saves-unguarded-alias")
