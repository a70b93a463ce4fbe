"""shared.backward_reads: the probe of what backward reads."""

import torch

from autograder.exercises.shared.backward_reads import ReadsOf


def test_the_read_probe_sees_values_read_through_a_view_and_nothing_else():
    """Does ReadsOf ignore views and ops that read only a shape, yet see a product that reads a
    watched tensor's values through a view of it?"""
    x, other = torch.randn(2, 3), torch.randn(3, 4)
    with ReadsOf({"x": x}) as probe:
        rows = x.reshape(-1, 3).t()
        torch.zeros_like(x), x.new_ones(2), other @ other.T
    assert probe.reads == []
    with ReadsOf({"x": x}) as probe:
        rows.t() @ other
    assert [name for name, _ in probe.reads] == ["x"]
