"""Lesson 13 (your own kernels): answers with known verdicts for silu_mul and rms_norm_rows, kept
in modules by exercise and concept: silu_mul and rms_norm_rows (the lesson's solutions as the
entries' base, and the first slips of each); silu_mul_maths (the product rule half applied);
silu_mul_design (a backward operator copied from the worked example); silu_mul_registration (the
operators registered in other forms); rms_norm_rows_lock (partial rows shared behind a lock);
rms_norm_rows_maths (the row gradient's direct path alone, its sum for a mean);
rms_norm_rows_groups (a fixed grid of programs over groups of rows, counted or bounded wrong);
rms_norm_rows_saved (no rstd saved, computed again in backward; rstd saved in
float64 for every dtype, which is correct); rms_norm_rows_layouts (an
expanded grad_output and a strided weight read as flat memory); rms_norm_rows_domain (what only
the generated checks of its domain see); ctx_tensors (tensors kept as ctx attributes, for both);
mutation_survivors (mutants of the solutions that once passed: a forward fake whose rstd dtype
is not the operator's, rows taken with view, bfloat16 as float16); silu_mul_answers and
rms_norm_rows_answers (kernels, launches, saved values and buffers that the targeted probes
name: half-precision steps, buffers and sizes kept between calls, outputs sharing memory, rstd
saved or read otherwise), built on variants (answers written as edits of the solutions);
contract_rules (an output saved or returned, buffers without device=, a gradient for a frozen
weight, and a float32 weight gradient for a half weight, which is correct); needed_gradients
(requires_grad read instead of ctx.needs_input_grad; both gradients stored for one needed);
global_cache (a launch grid cached per size in a module-global dict)."""

from . import (contract_rules, ctx_tensors, mutation_survivors, rms_norm_rows,
               rms_norm_rows_answers, rms_norm_rows_domain, rms_norm_rows_groups,
               rms_norm_rows_layouts, rms_norm_rows_lock, rms_norm_rows_maths, rms_norm_rows_saved, silu_mul,
               needed_gradients, global_cache, silu_mul_answers, silu_mul_design, silu_mul_maths, silu_mul_registration)

UNUSUAL = (silu_mul.UNUSUAL + silu_mul_registration.UNUSUAL + rms_norm_rows.UNUSUAL
           + rms_norm_rows_lock.UNUSUAL + silu_mul_answers.UNUSUAL
           + needed_gradients.UNUSUAL + rms_norm_rows_saved.UNUSUAL)
MISTAKES = (silu_mul.MISTAKES + silu_mul_maths.MISTAKES + silu_mul_design.MISTAKES
            + rms_norm_rows.MISTAKES + rms_norm_rows_lock.MISTAKES + rms_norm_rows_maths.MISTAKES
            + rms_norm_rows_groups.MISTAKES + rms_norm_rows_saved.MISTAKES
            + rms_norm_rows_domain.MISTAKES + rms_norm_rows_layouts.MISTAKES
            + ctx_tensors.MISTAKES + mutation_survivors.MISTAKES + silu_mul_answers.MISTAKES
            + rms_norm_rows_answers.MISTAKES + contract_rules.MISTAKES
            + needed_gradients.MISTAKES + global_cache.MISTAKES
            + silu_mul_registration.MISTAKES)
