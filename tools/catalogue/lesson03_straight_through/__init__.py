"""Lesson 03 (straight-through estimators): answers with known verdicts for SignSTE,
SignClippedSTE, RoundSTE, FakeQuantize and the transfer exercise StraightThroughSoftmax, one
module per exercise (``sign_ste``, ``sign_clipped_ste``, ``integer_ste`` for RoundSTE,
``fake_quantize``, ``straight_through_softmax``), the builders they share in ``answers``, and
one module per concept:

- FakeQuantize: ``fake_quantize_precision`` (the float64 digits kept or lost),
  ``fake_quantize_halves`` (where a half-code rounds, which side of the half-step band),
  ``edges_and_floors`` (a clip open at one edge or with a tolerance, a mean times numel, a tau
  floored), ``edges_in_x_units`` (a clip edge judged in x's units, <g, s> summed over the wrong
  dims), ``clipped_scale_gradients`` (a clipped element's scale gradient, v in float32),
  ``missing_clip_and_tau`` (no clip mask, no 1 / tau), ``masks_and_softmax_dims`` (masks
  multiplied in, the softmax over the wrong dim);
- rounding: ``half_even_by_hand`` (hand-made round-half-even, large floats taken for integers);
- non-finite values: ``non_finite_gradients`` (gradients that stop at NaN or infinity, an open
  interval), ``non_finite_and_reshaped_copies`` (a cleaned grad_output, reshaped copies saved);
- state and saving: ``state_outside_ctx`` (a module-global dict keyed by id(ctx)),
  ``ctx_attributes`` (tensors kept as ctx attributes, built-in softmax backwards),
  ``saved_tensor_modified`` (backwards that change what forward saved, in place);
- ``straight_through_softmax_one_hot`` (the forward's one-hot apart from the softmax's
  backward), and ``slips_by_exercise`` (one reviewer's slips across the exercises)."""


from . import (fake_quantize, fake_quantize_halves, fake_quantize_precision, slips_by_exercise,
               integer_ste, saved_tensor_modified, edges_in_x_units, sign_clipped_ste, sign_ste,
               straight_through_softmax, straight_through_softmax_one_hot, non_finite_gradients,
               non_finite_and_reshaped_copies, edges_and_floors, clipped_scale_gradients,
               half_even_by_hand, missing_clip_and_tau, state_outside_ctx, masks_and_softmax_dims,
               ctx_attributes)

UNUSUAL = (sign_ste.UNUSUAL + sign_clipped_ste.UNUSUAL + integer_ste.UNUSUAL +
           fake_quantize.UNUSUAL + fake_quantize_precision.UNUSUAL + fake_quantize_halves.UNUSUAL +
           straight_through_softmax.UNUSUAL + straight_through_softmax_one_hot.UNUSUAL +
           slips_by_exercise.UNUSUAL + edges_in_x_units.UNUSUAL + non_finite_gradients.UNUSUAL +
           non_finite_and_reshaped_copies.UNUSUAL + edges_and_floors.UNUSUAL +
           clipped_scale_gradients.UNUSUAL + half_even_by_hand.UNUSUAL +
           missing_clip_and_tau.UNUSUAL + state_outside_ctx.UNUSUAL +
           masks_and_softmax_dims.UNUSUAL + ctx_attributes.UNUSUAL)
MISTAKES = (sign_ste.MISTAKES + sign_clipped_ste.MISTAKES + integer_ste.MISTAKES +
            fake_quantize.MISTAKES + fake_quantize_precision.MISTAKES +
            fake_quantize_halves.MISTAKES + straight_through_softmax.MISTAKES +
            straight_through_softmax_one_hot.MISTAKES + saved_tensor_modified.MISTAKES +
            slips_by_exercise.MISTAKES + edges_in_x_units.MISTAKES + non_finite_gradients.MISTAKES
            + non_finite_and_reshaped_copies.MISTAKES + edges_and_floors.MISTAKES +
            clipped_scale_gradients.MISTAKES + half_even_by_hand.MISTAKES +
            missing_clip_and_tau.MISTAKES + state_outside_ctx.MISTAKES +
            masks_and_softmax_dims.MISTAKES + ctx_attributes.MISTAKES)
