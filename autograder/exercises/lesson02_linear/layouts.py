"""Lesson 02's strided inputs as the layout clause states them: with bias=None as well as with a
bias, and each input strided alone. The domain's layout checks (autograder.properties) grade its
default values, a bias given and every input of one layout at once; a forward may branch on the
bias (x.view(-1, in) only on the path that adds none), and a product of two inputs of different
layouts can have a layout neither has (x1 transposed, x2 not: (a[:, :, None] * b[:, None, :])
then has no flat view)."""

from ...checks import case
from ...comparison import compare, fresh_leaves
from ...domain import Domain


def check_layouts(function, domain: Domain, device, rows: dict) -> None:
    """Each of the domain's layouts on its values with a bias, then with bias=None (the bias
    first, so an answer wrong both ways fails as the domain's own check names it); then on
    ``rows`` (one leading dimension, where a transposed input is a transposed matrix) each input
    but the bias alone in each layout, the others contiguous (a strided bias: the domain's)."""
    given = domain.values(device)
    for layout in domain.layouts:
        for values, bias in ((given, ""), ({k: v for k, v in given.items() if k != "bias"},
                                           ", bias=None")):
            with case(f"{layout} inputs{bias}; contract: {domain.layout_clause}"):
                compare(domain, function, fresh_leaves(values, layout, domain.layout_inputs))
    shapes = ", ".join(f"{name} of shape {tuple(value.shape)}" for name, value in rows.items())
    for layout in domain.layouts:
        for name in (n for n in rows if n != "bias"):
            with case(f"{layout} {name} alone, the other inputs contiguous ({shapes}); "
                      f"contract: {domain.layout_clause}"):
                compare(domain, function, fresh_leaves(rows, layout, (name,)))
