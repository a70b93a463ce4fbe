"""Does lesson 10's benchmark put each Function beside PyTorch's, with the time ratio and the
bytes each keeps for backward?"""

import pytest
import torch

from tools import bench_norms
from tools.bench import BENCHMARKS

pytestmark = pytest.mark.lesson10


def test_is_the_benchmark_registered_with_make_bench():
    assert ("norms (lesson 10)", "tools.bench_norms") in BENCHMARKS


def test_does_the_table_show_ratio_and_bytes_side_by_side():
    rows = [{"device": "cpu", "ours": "RMSNormFunction", "theirs": "F.rms_norm",
             "ms ours": 3.0, "ms theirs": 2.0, "kept ours": 16_384, "kept theirs": 16_793_600}]
    table = bench_norms.format_table(rows)
    assert "1.50x" in table and "16,384" in table and "16,793,600" in table


def test_does_the_lessons_solution_keep_one_number_per_row(monkeypatch):
    """Measured on a small input: RMSNormFunction keeps one float32 rstd per row."""
    monkeypatch.setattr(bench_norms, "ROWS", 8)
    monkeypatch.setattr(bench_norms, "D", 16)
    inputs = bench_norms._inputs(torch.device("cpu"))
    (_, rms_call), = [(ours, call) for ours, call, _, _ in bench_norms._pairs()
                      if ours == "RMSNormFunction"]
    assert bench_norms._kept(rms_call, inputs) == 8 * 4
