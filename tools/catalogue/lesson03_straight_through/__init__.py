"""Lesson 03 (straight-through estimators): answers with known verdicts for SignSTE,
SignClippedSTE, RoundSTE, FakeQuantize and the transfer exercise StraightThroughSoftmax, one
module per exercise (its unusual answers and its mistakes), FakeQuantize's and
StraightThroughSoftmax's split by concept (the float64 digits kept or lost; where a half-code
rounds and which side of the clip's half-step band; the forward's one-hot apart from the
softmax's backward), ``saved_tensor_modified`` for backwards that change what forward saved, in
place, ``reviewed``, ``second_review``, ``third_review``, ``review53``, ``review54``,
``review55``, ``review55b``, ``review56``, ``review57``, ``review57c`` and ``review58`` for
reviewers' answers kept as written, and ``answers`` for the builders they share."""

from . import (fake_quantize, fake_quantize_halves, fake_quantize_precision, reviewed,
               round_ste, saved_tensor_modified, second_review, sign_clipped_ste, sign_ste,
               straight_through_softmax, straight_through_softmax_one_hot, third_review,
               review53, review54, review55, review55b, review56, review57,
               review57c, review58)

UNUSUAL = (sign_ste.UNUSUAL + sign_clipped_ste.UNUSUAL + round_ste.UNUSUAL + fake_quantize.UNUSUAL
           + fake_quantize_precision.UNUSUAL + fake_quantize_halves.UNUSUAL
           + straight_through_softmax.UNUSUAL
           + straight_through_softmax_one_hot.UNUSUAL + reviewed.UNUSUAL
           + second_review.UNUSUAL + third_review.UNUSUAL + review53.UNUSUAL
           + review54.UNUSUAL + review55.UNUSUAL + review55b.UNUSUAL + review56.UNUSUAL
           + review57.UNUSUAL + review57c.UNUSUAL + review58.UNUSUAL)
MISTAKES = (sign_ste.MISTAKES + sign_clipped_ste.MISTAKES + round_ste.MISTAKES
            + fake_quantize.MISTAKES + fake_quantize_precision.MISTAKES
            + fake_quantize_halves.MISTAKES + straight_through_softmax.MISTAKES
            + straight_through_softmax_one_hot.MISTAKES + saved_tensor_modified.MISTAKES
            + reviewed.MISTAKES + second_review.MISTAKES + third_review.MISTAKES
            + review53.MISTAKES + review54.MISTAKES + review55.MISTAKES
            + review55b.MISTAKES + review56.MISTAKES + review57.MISTAKES
            + review57c.MISTAKES + review58.MISTAKES)
