"""Do tensors, bytes and shapes read the way the lessons write them?"""

import torch

from widgets.markup import describe_tensor, format_bytes, format_shape, table


def test_bytes():
    assert format_bytes(12) == "12 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(3 * 2**20) == "3.0 MiB"


def test_shapes():
    assert format_shape(torch.Size([])) == "()"
    assert format_shape((3,)) == "(3,)"
    assert format_shape(torch.Size([2, 3])) == "(2, 3)"


def test_tensors_small_by_value_large_by_norm():
    assert describe_tensor(None) == "None"
    assert describe_tensor(torch.tensor(0.5)) == "0.5"
    assert describe_tensor(torch.tensor([1.0, -2.0])) == "[1, -2]"
    assert describe_tensor(torch.ones(2, 2)) == "[1, 1, 1, 1] shape (2, 2)"
    assert describe_tensor(torch.ones(3, 4)) == "shape (3, 4), norm 3.464"


def test_table_right_aligns_numeric_columns():
    html = table(["a", "n"], [["x", "1"]], numeric={1})
    assert html.count("text-align:right") == 2
