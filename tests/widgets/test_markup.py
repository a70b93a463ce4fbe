"""Do tensors, bytes and shapes read the way the lessons write them?"""

import torch

from widgets.markup import describe_tensor, format_bytes, format_number, format_shape, table


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


def test_a_negative_zero_reads_0_unless_its_sign_is_the_point():
    """Lessons ask the learner to watch x = 0, where a gradient is often -0.0 (ReLU's mask times
    a negative grad_output): every view shows 0 there; the straight-through readout, where
    round(-0.4) = -0 is the lesson, opts in to the sign."""
    assert describe_tensor(torch.tensor([0.0, -0.0, -0.5])) == "[0, 0, -0.5]"
    assert format_number(-1e-30) == "-1e-30"
    assert format_number(-0.0, zero_sign=True) == "-0"


def test_table_right_aligns_numeric_columns():
    html = table(["a", "n"], [["x", "1"]], numeric={1})
    assert html.count("text-align:right") == 2
