"""How long each view takes to redraw after a learner moves a control (target: 100 ms).

The stand-in Functions here are deliberately not the graded exercises: plain autograd
compositions, or an op no lesson asks for.
"""

import statistics
import time

import torch
import torch.utils.checkpoint

from .attention import attention_explorer
from .checkpointing import checkpointing_explorer
from .flow import backward_flow
from .gradcheck_explorer import explore_gradients
from .inspector import inspect_saved
from .ste import ste_explorer

TARGET_MS = 100.0


class Softplus(torch.autograd.Function):
    """log(1 + e^x), a Function no lesson grades."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)  # d/dx log(1 + e^x) = sigmoid(x)


def straight_through_sign(x):
    """sign(x) forward, identity backward, by the detach trick (no Function)."""
    return x + (torch.sign(x) - x).detach()


def composed_attention(Q, K, V, scale, mask=None):
    """Attention by autograd through PyTorch's softmax (no Function)."""
    scores = Q @ K.transpose(-2, -1) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


def reentrant_checkpoint_sequential(layers, segments, x):
    """PyTorch's own checkpoint_sequential, whose Function saves with save_for_backward."""
    return torch.utils.checkpoint.checkpoint_sequential(torch.nn.Sequential(*layers), segments,
                                                        x, use_reentrant=True)


def mlp(width: int = 256, depth: int = 8) -> torch.nn.Sequential:
    """The lesson-sized model for the checkpointing view."""
    return torch.nn.Sequential(*[m for _ in range(depth)
                                 for m in (torch.nn.Linear(width, width), torch.nn.Tanh())])


def _flow_output():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(8, 3, generator=generator, requires_grad=True)
    w = torch.randn(4, 3, generator=generator, requires_grad=True)
    return (Softplus.apply(x @ w.T) * 2).sum(), {"x": x, "w": w}


def _views(tiny: bool = False) -> dict:
    """name -> (view, control name, two values to alternate between)."""
    generator = torch.Generator().manual_seed(0)
    width, depth, batch = (8, 2, 4) if tiny else (256, 8, 64)
    output, names = _flow_output()
    return {
        "inspector: toggle requires_grad": (
            inspect_saved(Softplus, torch.randn(batch, 32, generator=generator)), "x",
            (False, True)),
        "backward flow: step": (backward_flow(output, names=names), "step", (2, 3)),
        "gradient explorer: eps": (
            explore_gradients(Softplus, torch.randn(5, 3, generator=generator)), "eps",
            (1e-4, 1e-6)),
        "STE: move x": (ste_explorer(straight_through_sign), "x", (0.3, -0.7)),
        # the slider only redraws, so counted FLOPs (no timing runs) time the same update
        "checkpointing: segments": (checkpointing_explorer(
            reentrant_checkpoint_sequential, lambda: mlp(width, depth),
            torch.randn(batch, width, generator=generator), cost="flops"), "segments", (4, 2)),
        "attention: query": (attention_explorer(composed_attention), "query", (3, 6)),
        "attention: mask toggle": (attention_explorer(composed_attention), "causal",
                                   (True, False)),
    }


def measure_updates(repeats: int = 5, *, tiny: bool = False) -> dict[str, float]:
    """Median milliseconds per control change (``repeats`` changes each way, the slower way
    reported), for each view on lesson-sized tensors (``tiny=True`` shrinks the checkpointed
    model, for a quick smoke test)."""
    results = {}
    for name, (view, control, values) in _views(tiny).items():
        widget = view.controls[control]
        times: dict = {value: [] for value in values}
        for k in range(2 * repeats):
            start = time.perf_counter()
            widget.value = values[k % 2]
            times[values[k % 2]].append(1000 * (time.perf_counter() - start))
        results[name] = max(statistics.median(t) for t in times.values())  # the slower way
    return results


def report(results: dict[str, float]) -> str:
    """One line per view, flagged when over the target."""
    return "\n".join(f"{name:34s} {ms:7.1f} ms {'ok' if ms <= TARGET_MS else 'SLOW'}"
                     for name, ms in results.items())


def run() -> str:
    """The table `make bench` prints."""
    return (f"Update time per control change, median of 5 each way (target <= {TARGET_MS:.0f} ms)\n"
            + report(measure_updates()))


if __name__ == "__main__":
    print(run())
