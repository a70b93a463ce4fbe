"""Lesson 02's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does), except the rules' tables, which stay in
the grading package: its global-state probe (``global_state.state_before_values``) blames state
kept outside ctx for a failure of any check of the "values" rule."""

from autograder.exercises.lesson02_linear.contracts import (BILINEAR_RULES, FUSED_RULES,
                                                            MY_LINEAR_RULES)

from ..clauses import Clause

MY_LINEAR_CLAUSES = (
    Clause("backward runs a matrix product, or sums `grad_output` for the bias, only for a "
           "gradient `ctx.needs_input_grad` asks for;",
           {"MyLinearFunction/computes-unneeded-gradient":
                "every gradient without a matmul, then None where not needed",
            "MyLinearFunction/computes-frozen-gradient":
                "grad_bias summed whenever there is a bias, then None when it is frozen"}),
    Clause("backward computes each gradient from the formulas you derived, not by calling "
           "`F.linear`.",
           {"MyLinearFunction/linear-in-backward": "F.linear for the products in backward"}),
)


FUSED_CLAUSES = (
    Clause("for the ReLU part of backward, forward keeps at most one byte per output element, "
           "counting the whole memory behind each tensor it keeps;",
           {"FusedLinearReLU/saves-float-pre-activation": "saves the float pre-activation",
            "FusedLinearReLU/saves-float-mask": "a float mask",
            "FusedLinearReLU/saves-integer-mask": "an int64 mask",
            "FusedLinearReLU/saves-no-mask":
                "no mask saved: the pre-activation recomputed in backward",
            "FusedLinearReLU/saves-more-than-one-mask": "the mask and its negation both saved",
            "FusedLinearReLU/mask-views-wider-storage":
                "mask a view of cat([z > 0, z < 0]) (review 59d)",
            "case:only x requiring grad":
                "the float pre-activation saved when the weight is frozen (review 60)",
            "FusedLinearReLU/saves-float-output": "saves the float output, reads y > 0 in backward",
            "FusedLinearReLU/keeps-float-pre-activation":
                "the float pre-activation kept in a module dict keyed by id(ctx)",
            "FusedLinearReLU/output-views-wider-storage":
                "output a view into cat([relu(z), z]) (review 59d)"}),
    Clause("at a pre-activation of exactly 0, and at a positive one however small, the "
           "gradients are those of `torch.relu(F.linear(x, weight, bias))`;",
           {"FusedLinearReLU/mask-includes-zero": "mask z >= 0",
            "FusedLinearReLU/mask-drops-tiny-positive": "mask z > finfo.eps",
            "case:pre-activations 1e-9 above 0": "mask z > 1e-6, output torch.relu(z)",
            "FusedLinearReLU/mask-from-truncated-activation":
                "mask relu(z).to(torch.uint8), read with mask.bool()"}),
    Clause("backward runs a matrix product, or sums for the bias, only for a gradient "
           "`ctx.needs_input_grad` asks for.",
           {"FusedLinearReLU/computes-frozen-gradient":
                "grad_bias computed whatever needs_input_grad says",
            "FusedLinearReLU/computes-unneeded-gradient":
                "every gradient by broadcasting, needs_input_grad ignored"}),
)


BILINEAR_CLAUSES = (
    Clause("backward computes each of the four gradients only when `ctx.needs_input_grad` asks "
           "for it;",
           {"Bilinear/computes-unneeded-gradient":
                "all four gradients computed, None returned where not needed"}),
    Clause("besides a few tensors of the inputs' and output's sizes, backward holds at most "
           "$2P \\cdot \\max(\\text{out}\\,n_1,\\ \\text{out}\\,n_2,\\ n_1 n_2)$ numbers at "
           "once, $P$ the number of positions.",
           {"Bilinear/holds-four-index-product":
                "grad_weight as the sum of a (positions, out, n1, n2) outer product",
            "Bilinear/unsummed-gradient": "grad_weight not summed over the positions"}),
)


# each exercise's tables, by its name
CLAUSES = {
    "MyLinearFunction": MY_LINEAR_CLAUSES,
    "FusedLinearReLU": FUSED_CLAUSES,
    "Bilinear": BILINEAR_CLAUSES,
}
RULES = {
    "MyLinearFunction": MY_LINEAR_RULES,
    "FusedLinearReLU": FUSED_RULES,
    "Bilinear": BILINEAR_RULES,
}
