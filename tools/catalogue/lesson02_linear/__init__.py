"""Lesson 02 (linear): answers with known verdicts for MyLinearFunction, FusedLinearReLU and
the transfer exercise Bilinear, one module per exercise (its unusual answers and its mistakes,
among them forwards that save only what the wanted gradients read and a 1-D x, where a sum over
no leading dimension sums the features), the builders they share in ``answers``, in
``domains`` what only the checks generated from the contract's domain separate, and in
``whole_cells`` answers written out whole, in forms the builders do not write, and in
``third_review``, ``review_edges`` and review 53's two modules wrong answers reviews found
passing (``review53_squeezes``: a 1-D input's results squeeze()d; ``review53_state_and_work``:
state kept outside ctx or packed, work done for a frozen bias, with unusual answers too;
``review54``: a float32 step once blamed on grad_output's layout, .mT of a 1-D tensor;
``review55``: a forward that multiplies by its mask, nan where the pre-activation is -inf;
``review55b``: None returned for an empty batch, a mask flattened to one dimension;
``review55c``: state kept in a global, an output or mask buffer per shape, a cached weight.T;
``review56``: a forward computed in float64 and cast back to the float32 inputs' dtype;
``review57``: a size in a global, the bias summed first, a workspace per shape, .data saved;
``review57c``: products in float64 cast back before the bias, work for a frozen input when two
or more others need grad;
``review58``: a weight.T cached while torch.equal holds or under (data_ptr, _version),
grad_weight transposed;
``review58b``: a grad_bias that is a view of grad_output, an empty batch special-cased at dim 0;
``review58c``: the mask and its negation both saved;
``review59``: gradients gated on the saved tensors' requires_grad, F.linear as
torch.ops.aten.linear;
``review59b``: state on an input tensor or in a mutable default argument, Bilinear's grad_bias
as grad_output itself;
``review59c``: a parameter gradient summed in blocks that drop the last partial one;
``review59d``: a mask or output that views a wider storage, a gate on x.requires_grad;
``review60``: grad_x computed twice, a uint8 mask, a float pre-activation saved when frozen;
``layouts_without_bias``: an input viewed on the bias=None path alone)."""

from . import (bilinear, domains, fused_linear_relu, layouts_without_bias, linear,
               review53_squeezes,
               review53_state_and_work, review54, review55, review55b, review55c, review56,
               review57, review57c, review58, review58b, review58c, review59, review59b, review59c,
               review59d, review60,
               review_edges,
               third_review, whole_cells)

UNUSUAL = (linear.UNUSUAL + fused_linear_relu.UNUSUAL + bilinear.UNUSUAL + whole_cells.UNUSUAL
           + review53_state_and_work.UNUSUAL + review54.UNUSUAL + review55.UNUSUAL
           + review55b.UNUSUAL + review55c.UNUSUAL + review57.UNUSUAL + review57c.UNUSUAL
           + review58.UNUSUAL + review58b.UNUSUAL + review58c.UNUSUAL + review59.UNUSUAL
           + review59b.UNUSUAL + review59c.UNUSUAL + review59d.UNUSUAL + review60.UNUSUAL)
MISTAKES = (linear.MISTAKES + fused_linear_relu.MISTAKES + bilinear.MISTAKES + domains.MISTAKES
            + whole_cells.MISTAKES + third_review.MISTAKES + review_edges.MISTAKES
            + review53_squeezes.MISTAKES + review53_state_and_work.MISTAKES + review54.MISTAKES
            + review55.MISTAKES + review55b.MISTAKES + review55c.MISTAKES + review56.MISTAKES
            + review57.MISTAKES + review57c.MISTAKES + review58.MISTAKES + review58b.MISTAKES
            + review58c.MISTAKES + review59.MISTAKES + review59b.MISTAKES + review59c.MISTAKES
            + review59d.MISTAKES + review60.MISTAKES
            + layouts_without_bias.MISTAKES)
