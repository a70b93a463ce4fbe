"""Lesson 06: FlashAttention, tiled, with the online softmax and FlashAttention-2's backward.

Graded on values and gradients (float64 against the composed reference, float32 and float16 /
bfloat16 against F.scaled_dot_product_attention), on what it allocates (the largest tensor and
the peak of live tensors, forward and backward, by ``autograder.memory``), and on the score
tiles it computes under ``causal``. ``FlashAttention.BLOCK`` is set to small sizes while
grading, so that small inputs span several tiles.
"""

import torch

from .flash_memory import check_allocations, check_cuda_peak
from ...checks import (case, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_forward)
from ...diagnose import diagnose_values
from ...domain import Case, Domain, Tolerance
from ...errors import GradingError
from ...outside_ctx import check_no_state_outside_ctx
from ...contract import check_each_input_alone, covers
from ...tiled import recognise_backward, recognise_forward
from .attention import _attention_example, check_against_sdpa
from .attention_inputs import MULTIHEAD, SDPA_SCALE, OneThreadExercise
from .attention_double import check_second_derivative
from .attention_layout import check_grad_output_layout, check_multihead_layout
from .attention_recompute import check_backward_reads_lse
from .flash_saves import check_flash_saves
from .attention_scale import check_any_scale, scale_ignored
from .attention_work import DV, D, LK, LQ, check_no_gradient_unasked
from .flash_low_precision import (check_low_precision, check_row_sum_in_float32,
                                  low_precision_values)
from .flash_magnitude import MAGNITUDES, check_magnitudes
from .flash_accumulation import ACCUMULATION, check_accumulation, long_key_loop
from .flash_probes import (NAME, ScoreTiles, block_size, flash_domain_values, flash_values,
                           recognise_hidden_diagonal, recognise_masked_first_tile,
                           recognise_tail_dropped, recognise_tile_mask_without_offset,
                           recognise_top_left, recognise_top_left_skip, tagged_values)
from .flash_blocks import check_block_rows, later_maximum_values
from .flash_skip import recognise_skip_backward, recognise_skip_forward
from .flash_spec import FLASH, describe, flash_backward as _backward, flash_reference


# the ids of the hints check_flash's probes give, by a phrase of each
NAMED = {"ignores the scale it is given": f"{NAME}/scale-ignored",
         "causal mask hides the diagonal": f"{NAME}/causal-mask-hides-diagonal",
         "nan under causal only": f"{NAME}/all-masked-first-tile",
         "causal mask is top-left": f"{NAME}/causal-mask-top-left",
         "visits end at its last query's own position": f"{NAME}/causal-skip-top-left",
         "shorter than BLOCK": f"{NAME}/tail-block-dropped",
         "leaves out each tile's offset": f"{NAME}/tile-mask-without-offset",
         "leaves tiles it visits unmasked": f"{NAME}/off-diagonal-tiles-unmasked",
         "does not rescale the running output": f"{NAME}/running-output-not-rescaled",
         "rescales with the wrong maximum": f"{NAME}/rescales-with-wrong-maximum",
         "takes D from dP": f"{NAME}/row-sum-from-one-tile",
         "forward skips a key tile": f"{NAME}/causal-skip-bound-off-by-one-in-forward",
         "backward leaves out a tile": f"{NAME}/causal-skip-bound-off-by-one-in-backward"}


def check_flash(function, values: dict, block: int, *, rtol=1e-5, atol=1e-7):
    """Values and gradients against the reference, with the named mistakes recognised."""
    with block_size(function, block), case(describe(values, block)):
        try:
            forward, backward = check_values_and_gradients(function, FLASH, values,
                                                           rtol=rtol, atol=atol)
        except GradingError as error:
            try:
                hint = (scale_ignored(function, NAME, values, flash_reference)
                        or recognise_hidden_diagonal(function, values)
                        or recognise_masked_first_tile(function, values)
                        or recognise_top_left(function, values)
                        or recognise_tile_mask_without_offset(function, values, block)
                        or recognise_skip_forward(function, values, block)
                        or recognise_skip_backward(function, values, block)
                        or recognise_top_left_skip(function, values, block)
                        or recognise_tail_dropped(function, values, block)
                        or recognise_forward(function, values, block, flash_reference)
                        or recognise_backward(function, values, block))
            except Exception:  # the learner's code may raise anything: keep the first hint
                hint = None
            if hint is None:
                raise
            raise GradingError(hint, str(error), mistake=NAMED) from error
        check_no_ctx_tensors(FLASH, forward)
        check_flash_saves(forward, values)
        if any("scaled_dot_product" in op for op in backward.ops):
            raise GradingError(f"{NAME}.backward calls PyTorch's attention: write it by tiles")


def check_not_causal_by_default(function, device) -> None:
    """``apply(Q, K, V, scale)``, causal left out, is the unmasked attention: the contract's
    default is causal=False."""
    values = flash_values((2,), 6, 6, 3, 2, device, seed=75)
    inputs = make_inputs({name: values[name] for name in ("Q", "K", "V", "scale")},
                         requires_grad=False)
    with block_size(function, 4), case(describe(values, 4).replace(
            "causal=False", "causal left out")):
        output = function.apply(*inputs.values())
        causal = flash_reference(**inputs, causal=True)
        if isinstance(output, torch.Tensor) and output.shape == causal.shape and torch.allclose(
                output, causal):
            raise GradingError(f"{NAME}.apply(Q, K, V, scale), with causal left out, masks "
                               "like causal=True: the signature's default is causal=False",
                               mistake="FlashAttention/causal-by-default")
        diagnose_values(f"{NAME}'s output", output, flash_reference(**inputs))


def check_causal_tiles(function, device) -> None:
    """Under causal, no score tile whose every key lies after every query's last visible key,
    in forward or in backward: the contract's quantity, counted on the tiles themselves (a
    backward that computes each needed tile twice, in a dK/dV pass and a dQ pass, is fine).
    Lk - Lq = 3, 0, 1 and 2 (mod BLOCK = 4), ragged last query blocks and full ones: at 0 (a
    square problem) a key block starts right after a query block's last visible key, the
    tile that a skip bound off by one (j > end, j <= end) computes."""
    for seed, (Lq, Lk) in enumerate(((10, 13), (8, 8), (7, 12), (6, 8))):
        _causal_tiles(function, tagged_values((2,), Lq, Lk, 5, 3, device, causal=True,
                                              seed=90 + seed), Lq, Lk, 4)


def _causal_tiles(function, values: dict, Lq: int, Lk: int, block: int) -> None:
    inputs = make_inputs(values)
    with block_size(function, block), case(describe(values, block)):
        with ScoreTiles(Lq, Lk, 5) as tiles:
            output = run_forward(function, FLASH, inputs).output
            tiles.phase = "backward"
            _backward(output, inputs, torch.ones_like(output))
        for phase in ("forward", "backward"):
            above = tiles.above_diagonal(phase)
            if above:
                queries, keys = above[0]
                raise GradingError(
                    f"{NAME}'s {phase} computes score tiles entirely above the causal diagonal: "
                    f"{len(above)} tiles in which no query sees any key (the first: queries "
                    f"{min(queries)}..{max(queries)} against keys {min(keys)}..{max(keys)}, "
                    f"where query i sees keys j <= i + {Lk - Lq}); skip a key block that starts "
                    "after the query block's last visible key")


def flash_full(FlashAttention, device) -> None:
    function = check_is_function(FlashAttention, FLASH)
    if hasattr(function, "BLOCK") and function.BLOCK != 64:  # a missing one: flash_probes
        raise GradingError(f"{NAME}.BLOCK is {function.BLOCK!r}: the "
                           "contract's default block size is 64 (the grader sets smaller ones "
                           "itself)", mistake="FlashAttention/block-default-not-64")
    # rule 4's generic check first: L kept in a global would be named a second normalisation
    with block_size(function, 3), case("one call, forward then backward"):
        check_no_state_outside_ctx(function, NAME, flash_values(
            (2,), 5, 6, 3, 2, device, causal=True, seed=13))
    # (lead, Lq, Lk, d, dv, causal, BLOCK): several blocks, ragged edges, Lq != Lk both ways,
    # diagonal tiles in which some rows see no key (5 x 11 in blocks of 4); causal with full
    # query blocks at Lk - Lq = 0, 1 and BLOCK - 1 (mod BLOCK): at 1, the key block starting at
    # a query block's last visible key is the one an off-by-one skip bound drops
    for seed, (lead, Lq, Lk, d, dv, causal, block) in enumerate([
            ((2,), 6, 9, 3, 2, False, 4), ((2, 3), 7, 7, 4, 5, True, 3),
            ((3,), 5, 11, 3, 3, True, 4), ((2,), 9, 4, 2, 3, False, 3),
            ((), 1, 5, 3, 2, True, 2), ((2,), 5, 1, 2, 2, False, 4),
            ((2, 1, 2), 8, 8, 3, 3, True, 8), ((2,), 8, 9, 3, 2, True, 4),
            ((2,), 8, 11, 3, 2, True, 4), ((2,), 8, 12, 3, 2, True, 4)]):
        check_flash(function, flash_values(lead, Lq, Lk, d, dv, device, causal=causal,
                                           seed=seed + 60 if seed < 7 else seed + 160), block)
    # more keys than BLOCK^2, each row's maximum in a late key block: a layout of 1 query x
    # BLOCK^2 keys per tile fits the element budget, and rescales only here
    check_flash(function, later_maximum_values(device), 2)
    # causal with Lk - Lq many BLOCKs: backward's first query block for a key block, left
    # unclamped at 0, is negative there, and its slices wrap round to the last rows
    check_flash(function, flash_values((2,), 6, 40, 3, 2, device, causal=True, seed=171), 4)
    covers("causal, Lq != Lk, ragged blocks")
    check_block_rows(function, device, small_tiles_only=True)  # before the magnitudes: a
    # whole row of keys at once, no online softmax, fails there first but is not a start of m
    with block_size(function, 3):
        check_any_scale(function, NAME, flash_values((2,), 5, 6, 3, 2, device, causal=True,
                                                     seed=14), flash_reference)
    values = flash_values((2, 3), 7, 7, 4, 5, device, causal=True, seed=68)
    check_multihead_layout(lambda f, v: check_flash(f, v, 3), function, NAME, values,
                           describe(values, 3))
    with block_size(function, 3):
        check_grad_output_layout(function, NAME, values, flash_reference, describe(values, 3))
    covers(MULTIHEAD)
    # no query at all, which SDPA takes (after the layouts: Q.view(-1, Lq, d) raises here too);
    # Lk = 0 leaves every row without a key, off the contract
    check_flash(function, flash_values((2,), 0, 5, 3, 2, device, causal=True, seed=170), 4)
    values = flash_values((2,), 7, 9, 3, 2, device, causal=True, seed=69)
    with block_size(function, 3), case(describe(values, 3)):
        check_backward_reads_lse(function, FLASH, values)
    covers("backward recomputes P from L")
    with block_size(function, 3), case("BLOCK=3, causal"):
        check_each_input_alone(function, FLASH, flash_values((), 4, 6, 3, 2, device,
                                                             causal=True, seed=67))
    values = flash_values((2, 2), LQ, LK, D, DV, device, causal=True, seed=66)
    with block_size(function, 8):  # one tile: each product has its whole shape
        check_no_gradient_unasked(function, FLASH, values, describe(values, 8), dp=True,
                                  dp_returned_named=True)
    covers("each gradient only when needed")
    check_magnitudes(function, device, 4)
    for seed, causal in enumerate((False, True)):
        values = flash_values((2, 2), 40, 56, 16, 8, device, causal=causal, seed=seed + 70,
                              dtype=torch.float32)
        with block_size(function, 16), case(describe(values, 16)):
            check_against_sdpa(function, FLASH, values,
                               lambda forward: check_flash_saves(forward, values))
    covers("float32 against F.scaled_dot_product_attention")
    check_allocations(function, flash_values((2,), 32, 32, 4, 3, device, causal=True), 8)
    check_allocations(function, flash_values((1,), 16, 40, 3, 5, device), 8)
    # d and dv above BLOCK: a block of Q, K, V or O (BLOCK x d) is more than BLOCK x BLOCK
    check_allocations(function, flash_values((2,), 12, 12, 6, 5, device, causal=True), 4)
    # 96 x 96 scores in 36 tiles of 16 x 16, d = 2, dv = 1: a backward that keeps every dS
    # tile for a second (dQ) pass holds 96 x 96 of them at once, 2.8 times the budget of 3
    # whole inputs' worth and 8 tiles (the cases above are too small for the list to show)
    check_allocations(function, flash_values((), 96, 96, 2, 1, device, seed=5), 16)
    # 16 key tiles of 16 x 16 a query block, d = 2, dv = 1: a forward that lists a row's score
    # tiles, takes their exact maximum, then exponentiates them holds 16 tiles at once, within
    # the budget of whole inputs above whenever d + dv is near BLOCK, past _TILES here
    check_allocations(function, flash_values((), 24, 256, 2, 1, device, seed=6), 16)
    check_allocations(function, flash_values((2,), 32, 32, 4, 3, device, causal=True), 8,
                      grad=False)
    check_block_rows(function, device, small_tiles_only=False)
    covers("largest tensor and peak")
    check_causal_tiles(function, device)
    covers("causal tiles skipped")
    check_not_causal_by_default(function, device)
    covers("causal left out: not causal")
    for dtype, tolerance in ((torch.bfloat16, 3e-2), (torch.float16, 4e-3)):
        check_low_precision(function, low_precision_values(device, dtype), 16, tolerance)
    check_accumulation(function, device)  # before the domain's case: names a precision loss
    check_row_sum_in_float32(function, device)
    covers("float16 and bfloat16")
    if torch.device(device).type == "cuda":
        check_cuda_peak(function, flash_values((2,), 1024, 1024, 16, 16, device,
                                               dtype=torch.float32), 64)
    values = flash_values((), 4, 6, 2, 2, device, causal=True)
    with block_size(function, 3):
        check_second_derivative(function, NAME, values, flash_reference, describe(values, 3))


EXERCISES = [
    OneThreadExercise(NAME, "06_attention", flash_full, example=_attention_example,
             contract=("causal, Lq != Lk, ragged blocks", *MAGNITUDES,
                       "float32 against F.scaled_dot_product_attention",
                       "largest tensor and peak", "causal tiles skipped",
                       "float16 and bfloat16", MULTIHEAD, "backward recomputes P from L",
                       "causal left out: not causal", "each gradient only when needed"),
             domain=Domain(FLASH, flash_domain_values, constants={"scale": SDPA_SCALE},
                           dtypes=(torch.float64, torch.float32, torch.float16, torch.bfloat16),
                           accumulates={torch.float16: torch.float32,
                                        torch.bfloat16: torch.float32},
                           accumulation=Case(long_key_loop, "float16/bfloat16 inputs accumulate "
                                             "in float32", torch.float16,
                                             Tolerance(ACCUMULATION, ACCUMULATION)))),
]
