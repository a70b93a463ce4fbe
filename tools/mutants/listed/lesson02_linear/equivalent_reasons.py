"""Lesson 02's equivalent mutants' shared words: the reasons several listings give, and one
maker per exercise (tools.mutants.listed)."""

from .. import EquivalentMutant

_COPY = ("a copy (.clone(), or .contiguous() of a strided input) holds the same values, so "
         "backward gives the same gradients; the contract forbids no copy of an input (only "
         "FusedLinearReLU's float pre-activation and output, which this is not)")
_MASK_COPY = ("a copy of the bool mask forward just made, or .contiguous() of it (already "
              "contiguous: itself), is still a bool mask of the output's size")
_SAVES_ALWAYS = ("saving an input whatever needs_input_grad says keeps more memory, which the "
                 "contract allows (\"saving x and weight always also passes\"); the gradients "
                 "are unchanged")


def _linear(operator: str, before: str, after: str, reason: str = _COPY):
    return EquivalentMutant("MyLinearFunction", operator, before, after, reason)


def _fused(operator: str, before: str, after: str, reason: str = _COPY):
    return EquivalentMutant("FusedLinearReLU", operator, before, after, reason)


def _bilinear(operator: str, before: str, after: str, reason: str = _COPY):
    return EquivalentMutant("Bilinear", operator, before, after, reason)
