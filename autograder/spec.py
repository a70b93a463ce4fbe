"""What an exercise is, as every check sees it."""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    """What an exercise is: its name, the forward's inputs, and a differentiable reference."""

    name: str
    input_names: tuple[str, ...]
    reference: Callable
