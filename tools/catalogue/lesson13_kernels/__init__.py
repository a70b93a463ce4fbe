"""Lesson 13 (your own kernels): answers with known verdicts for silu_mul and rms_norm_rows,
kept in one module per exercise (and silu_mul_maths: the product rule half applied;
silu_mul_design: a backward operator copied from the worked example;
silu_mul_registration: the operators registered in other forms; rms_norm_rows_lock:
partial rows shared behind a lock (a lock not waited for, released before the barrier); rms_norm_rows_maths: the row gradient's direct path alone;
rms_norm_rows_groups: a fixed grid of programs over groups of rows, counted or bounded wrong;
rms_norm_rows_saved: no rstd saved, computed again in backward; rms_norm_rows_layouts: an
expanded grad_output and a strided weight read as flat memory; kernels_review: what a
review found (undefined masked-off lanes, a mean over the block, divisions by an input,
outputs aliasing each other, a triton_op);
rms_norm_rows_domain: what only the generated checks of its domain see; ctx_tensors: tensors
kept as ctx attributes, for both; review53: launches per chunk, an rstd saved but not read or
saved in float64, partial rows never written; mutants54: a forward fake whose rstd dtype is not
the operator's; review54: both gradients in one buffer, float16 products in float16, a
list[Tensor] backward operator; review56: a size or a grid kept in a global for backward,
grad_output * b in float16, sigmoid taken as 1 past a = 15 in float64; review57: a gradient
formed as a float16 or bfloat16 product; review58: rms_norm_rows's output and gradient for x
formed as float16 products, partial rows kept between calls; review58b: buffers kept between
calls that never reach a result, named where they live; review59: x_hat as y / w with the
weight's masked lanes 0, a backward mask one lane long, sigmoid clipped
below -20; review59b: squares x * x formed in float16; review59c: y saved besides rstd, an input's copy
cached by data_ptr; review60: a weight gradient added with tl.atomic_add, eps divided by D;
review60b: the inputs saved as contiguous or cast copies)."""

from . import (ctx_tensors, kernels_review, mutants54, review53, review54, review56,
               review57, review58, review58b, review59, review59b, review59c, review60,
               review60b,
               rms_norm_rows,
               rms_norm_rows_domain, rms_norm_rows_groups, rms_norm_rows_layouts,
               rms_norm_rows_lock, rms_norm_rows_maths, rms_norm_rows_saved, silu_mul,
               silu_mul_design, silu_mul_maths, silu_mul_registration)

UNUSUAL = (silu_mul.UNUSUAL + silu_mul_registration.UNUSUAL + rms_norm_rows.UNUSUAL
           + rms_norm_rows_lock.UNUSUAL + review54.UNUSUAL + review59.UNUSUAL)
MISTAKES = (silu_mul.MISTAKES + silu_mul_maths.MISTAKES + silu_mul_design.MISTAKES
            + rms_norm_rows.MISTAKES + rms_norm_rows_lock.MISTAKES + rms_norm_rows_maths.MISTAKES
            + rms_norm_rows_groups.MISTAKES + rms_norm_rows_saved.MISTAKES
            + rms_norm_rows_domain.MISTAKES + rms_norm_rows_layouts.MISTAKES
            + ctx_tensors.MISTAKES + kernels_review.MISTAKES + review53.MISTAKES
            + mutants54.MISTAKES + review54.MISTAKES + review56.MISTAKES
            + review57.MISTAKES + review58.MISTAKES + review58b.MISTAKES
            + review59.MISTAKES + review59b.MISTAKES + review59c.MISTAKES
            + review60.MISTAKES + review60b.MISTAKES)
