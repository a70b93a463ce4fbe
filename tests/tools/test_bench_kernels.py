"""The lesson 13 benchmark: registered, its C++ source found in the lesson, its traffic count and
its table right, without building anything."""

import pytest
import torch

from tools import bench_kernels
from tools.bench import BENCHMARKS

pytestmark = pytest.mark.lesson13


def test_the_benchmark_is_registered():
    """Does `make bench` run the kernels benchmark?"""
    assert ("kernels (lesson 13)", "tools.bench_kernels") in BENCHMARKS


def test_the_cpp_source_is_the_lessons():
    """Is the benchmarked C++ the lesson's load_inline source, defining both operators the
    benchmark calls in the namespace it calls them from, with their CPU kernels?"""
    source = bench_kernels.cpp_source()
    assert "AT_DISPATCH_FLOATING_TYPES" in source and "at::parallel_for" in source
    assert "TORCH_LIBRARY(autograd_course_cpp, m)" in source
    assert "TORCH_LIBRARY_IMPL(autograd_course_cpp, CPU, m)" in source
    assert 'm.def("softsign(Tensor x) -> Tensor")' in source
    assert 'm.def("softsign_backward(Tensor grad, Tensor x) -> Tensor")' in source


def test_traffic_counts_arguments_and_results_of_each_op():
    """Does x * 2 on 1024 floats move 8 KiB (read 4, write 4), and an allocation nothing?"""
    x = torch.ones(1024)
    assert bench_kernels.mib_moved(lambda: x * 2) * 2 ** 20 == 8192
    assert bench_kernels.mib_moved(lambda: torch.empty(1024)) == 0


def test_table_has_one_line_per_row_and_the_ratio():
    """Does the table show both timings, their ratio and both traffic counts?"""
    rows = [{"device": "cpu", "ours": "C++ softsign", "theirs": "F.softsign", "ms ours": 1.0,
             "ms theirs": 4.0, "MiB ours": 128.0, "MiB theirs": 512.0}]
    table = bench_kernels.format_table(rows, "(note)")
    assert "0.25x" in table and "512" in table and table.endswith("(note)")
