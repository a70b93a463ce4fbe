"""The random grad_output a check draws: seeded, from a stream of its own, so that it never
repeats the values an input of the same seed and shape was drawn with (where grad_output equals
x, a backward that reads x in place of grad_output agrees, and a failure quotes one number as
both)."""

import torch

STREAM = 2 ** 31 - 1  # added to a check's seed: far from the seeds inputs are drawn with (the
# generator keeps 32 bits of a seed)


def grad_output_generator(seed: int = 0) -> torch.Generator:
    """The generator the grad_outputs of a check with ``seed`` are drawn from."""
    return torch.Generator().manual_seed(STREAM + seed)
