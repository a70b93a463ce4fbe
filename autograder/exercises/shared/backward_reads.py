"""What backward reads: the values of inputs no wanted gradient needs, and inputs forward did not
save."""

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import (Spec, make_inputs,
                      run_backward)
from ...errors import GradingError


# ops that read a tensor's shape, dtype or device, never its values
SHAPE_ONLY = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "new_empty",
                         "new_empty_strided", "new_zeros", "new_ones", "new_full", "sym_size",
                         "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous",
                         "is_same_size"})


class ReadsOf(TorchDispatchMode):
    """The ops run inside the block that read the values of the watched tensors, or of any
    view of their memory (a view itself reads nothing), as (name, op) pairs."""

    def __init__(self, watched: dict):
        super().__init__()
        self.watched = {t.untyped_storage().data_ptr(): n for n, t in watched.items()}
        self.reads: list[tuple[str, str]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        op = func.overloadpacket.__name__
        if not func.is_view and op not in SHAPE_ONLY:
            for value in (*args, *kwargs.values()):
                for tensor in value if isinstance(value, (list, tuple)) else (value,):
                    if isinstance(tensor, torch.Tensor):
                        name = self.watched.get(tensor.untyped_storage().data_ptr())
                        if name is not None:
                            self.reads.append((name, op))
        return func(*args, **kwargs)


def backward_reading(spec: Spec, inputs: dict, output, grad_output, needs: dict, *,
                     count_flops: bool = False):
    """run_backward, watching the inputs whose values no wanted gradient depends on (``needs``:
    each input's gradient -> the inputs its formula reads). Returns (trace, unneeded reads)."""
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    allowed = set().union(*(needs[n] for n in wanted))
    watched = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor) and n not in allowed}
    with ReadsOf(watched) as reads:
        backward = run_backward(spec, output, inputs, grad_output, count_flops=count_flops)
    return backward, reads.reads


def raise_unneeded_read(spec: Spec, inputs: dict, backward, reads: list) -> None:
    """Name the first read of an input that no gradient asked for depends on: a backward that
    writes its gradients by hand did work for one nobody needs, however it wrote the products
    (FLOP counts see matmuls only). One that asks autograd (a recomputed forward) is left to
    check_backward_by_hand, which rejects it."""
    if not reads or backward.reentered_autograd:
        return
    name, op = reads[0]
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    entries = " and ".join(f"entry {list(inputs).index(n)} ({n})" for n in wanted)
    raise GradingError(
        f"{spec.name}.backward used the values of {name} (in aten.{op}) when only "
        f"{' and '.join(wanted)} {'requires' if len(wanted) == 1 else 'require'} grad, yet no "
        f"gradient asked for depends on {name}'s values: compute each gradient only when its own "
        f"entry of ctx.needs_input_grad is True; here only {entries} "
        f"{'is' if len(wanted) == 1 else 'are'}", mistake=f"{spec.name}/computes-unneeded-gradient")


@contextlib.contextmanager
def unsaved_input_named(function, make_values, needs: dict, wanted_names, advice: str,
                        exercise: str):
    """A backward that failed on a None is told what its forward left out, when a probe with
    one input requiring grad proves it: a None was saved and an input that gradient reads
    (``needs``) is not kept, or the inputs rightly not kept are still used by backward (a
    ``weight.shape``, say)."""
    try:
        yield
    except Exception as error:
        hint = (_none_read(function, make_values, needs, wanted_names, advice)
                if "None" in str(error) else None)  # opt_einsum: "the shape of None"
        if hint is None:
            raise
        ids = {"did not save": f"{exercise}/drops-needed-input",  # the probes' two hints
               "but backward still uses": f"{exercise}/reads-unsaved-input"}
        raise GradingError(hint, str(error), mistake=ids) from error


def _none_read(function, make_values, needs: dict, wanted_names, advice: str) -> str | None:
    read_by_some = set().union(*needs.values())
    for wanted in wanted_names:
        inputs = make_inputs(make_values(), requires_grad={wanted})
        try:
            output = function.apply(*inputs.values())
            saved = output.grad_fn.saved_tensors
        except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
            return None
        if None not in saved:
            continue
        kept = {t.untyped_storage().data_ptr() for t in saved if isinstance(t, torch.Tensor)}
        dropped = [n for n, v in inputs.items() if n in read_by_some and isinstance(
            v, torch.Tensor) and v.untyped_storage().data_ptr() not in kept]
        missing = [n for n in dropped if n in needs[wanted]]
        if missing:
            return (f"with only {wanted} requiring grad, your forward did not save {missing[0]}, "
                    f"and grad_{wanted} reads it: {advice}")
        try:
            output.grad_fn.apply(torch.ones_like(output))  # the user's backward, unchecked
        except Exception as error:  # noqa: BLE001 - only a failure on None proves it
            if isinstance(error, (AttributeError, TypeError)) and "NoneType" in str(error):
                them = "it" if len(dropped) == 1 else "them"
                names = " and ".join([", ".join(dropped[:-1]), dropped[-1]] if dropped[:-1]
                                     else dropped)
                return (f"with only {wanted} requiring grad, your forward saved None in place of "
                        f"{names}, as it may (grad_{wanted} does not read {them}), "
                        f"but backward still uses {them} ({error}): read each saved tensor only "
                        "in the branch that needs it, and take sizes from grad_output")
    return None
