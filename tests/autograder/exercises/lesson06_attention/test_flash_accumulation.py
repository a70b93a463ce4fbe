"""lesson06_attention.flash_accumulation: FlashAttention's long key and query loops in float16,
which tell a precision loss in an accumulator from a wrong formula."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises.lesson06_attention import flash_attention as flash
from autograder.exercises.lesson06_attention.flash_accumulation import check_accumulation
from autograder.properties import check_domain
from tests.autograder.catalogued import mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson06


def test_accumulation_case_separates_the_half_accumulators():
    """Does the domain's accumulation case alone (no battery) pass the solution and fail a
    running output kept in float16 and D = rowsum(dO * O) in float16, and does the battery's
    probe name each a precision loss, forward or backward?"""
    domain = flash.EXERCISES[0].domain
    case = type(domain)(domain.spec, domain.values, accumulation=domain.accumulation,
                        constants={}, dtypes=(), layouts=(), per_call=False)
    check_domain(case, solution("FlashAttention"), torch.device("cpu"))
    check_accumulation(solution("FlashAttention"), "cpu")
    for name, said in (("running output kept in float16", "keep the running output"),
                       ("D = rowsum(dO * O) in float16", "the output matches, but grad_Q and grad_K")):
        wrong = mistake("FlashAttention", name)
        with pytest.raises(GradingError, match="is wrong"):
            check_domain(case, wrong, torch.device("cpu"))
        with pytest.raises(GradingError, match=f"a precision loss, not a wrong formula; {said}"):
            check_accumulation(wrong, "cpu")


def test_long_query_case_names_dk_dv_kept_in_float16():
    """Is a dK, dV accumulated in float16 across the query blocks, which the long key loop
    passes (one query block), named a precision loss by the long query loop, and the
    solution passed?"""
    wrong = mistake("FlashAttention", "dK, dV accumulated in float16 across query blocks")
    domain = flash.EXERCISES[0].domain
    case = type(domain)(domain.spec, domain.values, accumulation=domain.accumulation,
                        constants={}, dtypes=(), layouts=(), per_call=False)
    check_domain(case, wrong, torch.device("cpu"))  # the key loop alone does not see it
    with pytest.raises(GradingError, match="grad_K and grad_V are sums over the query blocks") \
            as info:
        check_accumulation(wrong, "cpu")
    assert info.value.mistake == "FlashAttention/dk-dv-accumulated-in-half"
