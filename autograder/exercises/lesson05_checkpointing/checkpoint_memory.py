"""Lesson 05's memory derivation: the peak it asks for, counted here rather than in the lesson
cell that checks it, so that the counting (which is the derivation) stays out of sight until
the learner's own formula is green."""


def count_peak(n: int, a: int, k: int) -> int:
    """Units alive at the worst moment of backward through ``n`` blocks cut into ``k`` equal
    segments, each block keeping ``a`` units: walk backward segment by segment, counting the
    segment inputs still held plus the rebuilt activations of the segment being worked on."""
    held = k  # every segment's input, kept by forward
    peak = 0
    for _ in range(k):  # the last segment first
        peak = max(peak, held + (n // k) * a)  # this segment's blocks rebuilt, alive at once
        held -= 1  # its input is freed once its gradient has gone on
    return peak
