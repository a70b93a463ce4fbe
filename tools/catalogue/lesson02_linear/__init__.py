"""Lesson 02 (linear): answers with known verdicts for MyLinearFunction, FusedLinearReLU and
the transfer exercise Bilinear, one module per exercise (its unusual answers and its mistakes),
the builders they share in ``answers``, in ``domains`` what only the checks generated from the
contract's domain separate, in ``whole_cells`` answers written out whole, and one module per
concept the reviews' answers are about:

- shapes: ``squeezes`` (a 1-D input's results squeeze()d), ``batch_of_one`` (a batch of one
  squeezed, a grad_bias squeezed), ``vector_transposes`` (.mT of a 1-D tensor, a float32 step
  once blamed on grad_output's layout), ``empty_batch_none`` (None returned for an empty batch,
  a flattened mask), ``blocked_sums`` (a sum in blocks that drops the last partial one),
  ``layouts_without_bias`` (an input viewed on the bias=None path alone);
- dtypes: ``wider_dtype`` (a forward computed in float64 and cast back);
- the ReLU: ``relu_mask_edges`` (grad_output times the mask, a threshold mask, a mask
  truncated from the activation, an unmasked grad_bias), ``mask_arithmetic`` (a forward that multiplies by its mask);
- what is saved: ``saved_forms`` (a uint8 mask, a float pre-activation saved when frozen, grad_x
  computed twice), ``extra_masks`` (the mask and its negation), ``wider_storage`` (a mask or
  output that views a wider storage, a gate on x.requires_grad);
- state outside ctx: ``state_and_work`` (state kept outside ctx, a mask packed into bits,
  work for a frozen bias), ``per_shape_state`` (a global, a buffer per shape, a cached weight.T),
  ``cached_weight`` (a weight.T cached under a key, grad_weight transposed),
  ``sizes_and_aliases`` (a size in a global, the bias summed first, .data saved),
  ``state_on_inputs`` (state on an input or in a mutable default, grad_bias as grad_output);
- gradients and work: ``frozen_input_work`` (work for a frozen input, products cast back before
  the bias), ``requires_grad_gates`` (gates on the saved tensors' requires_grad,
  torch.ops.aten.linear), ``grad_output_views`` (a grad_bias that views grad_output, an empty
  batch special-cased at dim 0), ``special_paths`` (zeros, not None, for inputs that need no
  gradient on an empty batch, a dead layer or a grad_output of zeros), ``bias_passed_as_none``
  (one value too few from backward when apply gets bias=None in its place),
  ``zero_grad_output_shortcut`` (None for every input when grad_output is all zeros)."""


from . import (bilinear, domains, fused_linear_relu, layouts_without_bias, linear, squeezes,
               state_and_work, vector_transposes, mask_arithmetic, empty_batch_none,
               per_shape_state, wider_dtype, sizes_and_aliases, frozen_input_work, cached_weight,
               grad_output_views, extra_masks, requires_grad_gates, state_on_inputs, blocked_sums,
               wider_storage, saved_forms, batch_of_one, relu_mask_edges, whole_cells,
               special_paths, bias_passed_as_none,
               zero_grad_output_shortcut)

UNUSUAL = (linear.UNUSUAL + fused_linear_relu.UNUSUAL + bilinear.UNUSUAL + whole_cells.UNUSUAL +
           state_and_work.UNUSUAL + vector_transposes.UNUSUAL + mask_arithmetic.UNUSUAL +
           empty_batch_none.UNUSUAL + per_shape_state.UNUSUAL + sizes_and_aliases.UNUSUAL +
           frozen_input_work.UNUSUAL + cached_weight.UNUSUAL + grad_output_views.UNUSUAL +
           extra_masks.UNUSUAL + requires_grad_gates.UNUSUAL + state_on_inputs.UNUSUAL +
           blocked_sums.UNUSUAL + wider_storage.UNUSUAL + saved_forms.UNUSUAL + wider_dtype.UNUSUAL
           + batch_of_one.UNUSUAL + relu_mask_edges.UNUSUAL)
MISTAKES = (linear.MISTAKES + fused_linear_relu.MISTAKES + bilinear.MISTAKES + domains.MISTAKES +
            whole_cells.MISTAKES + relu_mask_edges.MISTAKES + batch_of_one.MISTAKES +
            squeezes.MISTAKES + state_and_work.MISTAKES + vector_transposes.MISTAKES +
            mask_arithmetic.MISTAKES + empty_batch_none.MISTAKES + per_shape_state.MISTAKES +
            wider_dtype.MISTAKES + sizes_and_aliases.MISTAKES + frozen_input_work.MISTAKES +
            cached_weight.MISTAKES + grad_output_views.MISTAKES + extra_masks.MISTAKES +
            requires_grad_gates.MISTAKES + state_on_inputs.MISTAKES + blocked_sums.MISTAKES +
            wider_storage.MISTAKES + saved_forms.MISTAKES + layouts_without_bias.MISTAKES +
            special_paths.MISTAKES + bias_passed_as_none.MISTAKES +
            zero_grad_output_shortcut.MISTAKES)
