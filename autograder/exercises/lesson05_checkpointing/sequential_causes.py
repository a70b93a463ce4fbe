"""Lesson 05, checkpoint_sequential: causes confirmed before they are named. Copies of the
caller's layers run instead of the layers (copy.deepcopy: the copies' parameters get the
gradients), and a split kept from an earlier call (the same layers run whatever the number
given), each told apart from a wrong split by a probe of its own."""

import torch

from ...errors import GradingError
from ...exercise import sample
from .checkpoint_blocks import WIDTH, layer_stack
from .segment_calls import _recording_calls


def check_runs_given_layers(checkpoint_sequential, device, n: int = 4,
                            segments: int = 2) -> None:
    """Forward hooks on the caller's layers see which module objects run (a deep copy carries
    the hook along, so it reports the copy): modules that are not the caller's, and none of
    the caller's, are copies."""
    layers = layer_stack(device, n, seed=70)
    ran: list = []
    handles = [layer.register_forward_hook(lambda module, _, __: ran.append(module))
               for layer in layers]
    x = sample((3, WIDTH), device, seed=71).requires_grad_()
    try:
        output = checkpoint_sequential(list(layers), segments, x)
    except Exception:  # noqa: BLE001  (the main check calls it again and says why)
        return
    finally:
        for handle in handles:
            handle.remove()
    others = [m for m in ran if not any(m is layer for layer in layers)]
    if output is not None and others and len(others) == len(ran):
        raise GradingError(
            f"checkpoint_sequential(layers, segments={segments}, x) with {n} layers ran "
            f"{len({id(m) for m in others})} modules that are not the caller's layers but copies "
            "of them (copy.deepcopy?): none of the caller's layers ran, so their parameters "
            "would receive no gradient and the caller's optimizer would train nothing; which "
            "objects must the groups hold?", mistake="checkpoint_sequential/runs-copies")


def first_layers_note(checkpoint_sequential, layers, segments: int, k: int,
                      x: torch.Tensor) -> tuple[str, str]:
    """Why only the first k of n layers ran: a second call with another number of layers
    (n + segments, a fresh stack) that again runs exactly k is a split kept from an earlier
    call; k = (n // segments) * segments is the remainder dropped; else no cause is named."""
    n = len(layers)
    other = layer_stack(x.device, n + segments, seed=97)
    with _recording_calls(other) as calls, torch.no_grad():
        try:
            checkpoint_sequential(list(other), segments, x.detach())
        except Exception:  # noqa: BLE001  (the probe proves nothing then)
            calls = []
    count = len({i for i, _ in calls})
    if count == k:
        return (f"a second call with {n + segments} layers ran the first {k} too: the split "
                "does not follow the layers given, it is kept from an earlier call (state kept "
                "between calls, keyed by segments?); compute it from this call's layers every "
                "time", "checkpoint_sequential/stale-split")
    if k == n // segments * segments:
        return ("every layer must run once, in order (the layers left over after n // k per "
                "segment belong to segments too)", "checkpoint_sequential/drops-remainder")
    return ("every layer must run once, in order: which layers does your split leave out for "
            "these two numbers?", "checkpoint_sequential/drops-layers")
