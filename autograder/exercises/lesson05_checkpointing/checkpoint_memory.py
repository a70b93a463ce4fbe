"""Lesson 05's memory derivation: the peak it asks for, counted here rather than in the lesson
cell that checks it, so that the counting (which is the derivation) stays out of sight until
the learner's own formula is green; and the checker the lesson's cell calls."""

import math


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


def _first_line(error: Exception) -> str:
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]}"


def _peak_lines(my_peak) -> tuple[bool, bool]:
    """my_peak against count_peak on five cases, printed; (every line right, counted the
    shared segment input once). The counts are shown only once every line is right."""
    cases, rows = [(16, 2, 1), (16, 2, 4), (16, 2, 16), (64, 1, 8), (12, 3, 6)], []
    for n, a, k in cases:
        try:
            rows.append((n, a, k, count_peak(n, a, k), float(my_peak(n, a, k))))
        except Exception as error:  # shown, not raised: Run All goes on
            print(f"n = {n:2}, a = {a}, k = {k:2}: my_peak raises {_first_line(error)} ✗")
    # one unit less on every line: the shared segment input counted once, also right
    once = len(rows) == len(cases) and all(math.isclose(y, c - 1) for *_, c, y in rows)
    right = once or all(math.isclose(y, c) for *_, c, y in rows)
    for n, a, k, counted, yours in rows:
        if right:
            print(f"n = {n:2}, a = {a}, k = {k:2}: counted {counted:3}, yours {yours:6.2f} ✓")
        else:
            print(f"n = {n:2}, a = {a}, k = {k:2}: yours {yours:6.2f}",
                  "✓" if math.isclose(yours, counted) else
                  f"✗ (too {'high' if yours > counted else 'low'})")
    if once:
        print("✓ you counted the shared input once, as the meter will; the count here has it "
              "twice (step 2): one unit apart, the same best k")
    return len(rows) == len(cases) and right, once


def _real_k(my_peak, once: bool) -> bool:
    """k = 5 does not divide n = 16: a peak that rounds n / k is named."""
    try:
        at_5 = float(my_peak(16, 2, 5))
    except Exception as error:  # shown, not raised: Run All goes on
        print(f"n = 16, a = 2, k =  5: my_peak raises {_first_line(error)}; step 4 needs k "
              "real ✗")
        return False
    if at_5 in (5 + 16 // 5 * 2 - once, 5 + -(-16 // 5) * 2 - once):
        print(f"n = 16, a = 2, k =  5: yours {at_5:6.2f}; step 4 treats k as a real number: "
              "does your M(k) round n / k somewhere? ✗")
        return False
    return True


def _best_k_lines(my_peak, my_best_k) -> None:
    """my_best_k against the smallest of my_peak over real k, found by search (not by formula)."""
    for n, a in [(16, 2), (64, 1), (48, 3)]:
        grid = [1 + i / 1000 for i in range(1000 * (n - 1) + 1)]  # real k from 1 to n
        best_real = min(grid, key=lambda k: my_peak(n, a, k))
        mine = float(my_best_k(n, a))  # the search's k is shown only once yours is on it
        if math.isclose(mine, best_real, rel_tol=1e-2):
            print(f"n = {n:2}, a = {a}: your best k {mine:6.2f}: the smallest of M(k) over "
                  "real k is there ✓")
        else:
            print(f"n = {n:2}, a = {a}: your best k {mine:6.2f}: M(k) is smaller at some "
                  f"{'larger' if best_real > mine else 'smaller'} k; where is dM/dk = 0? ✗")
    smallest = {n: my_peak(n, 2, my_best_k(n, 2)) for n in (16, 64, 256)}
    print("a = 2, the smallest peak for n = 16, 64, 256 blocks:",
          ", ".join(f"{m:.2f}" for m in smallest.values()), "(how does it grow with n?)")
    print("n = 16, a = 2, whole k near the best:", ", ".join(
        f"M({k}) = {my_peak(16, 2, k):.2f}" for k in (4, 5, 6, 7, 8)),
        "(which k would you pick? appendix A.2 measures every k)")


def check_peak(my_peak, my_best_k) -> bool:
    """The lesson's live checker: the learner's my_peak(n, a, k) against count_peak, then
    my_best_k(n, a) against a search over real k; True once my_peak is right. Prints a line
    per case, never raises (Run All goes on)."""
    if my_peak is None:
        print("Write your M(k) into my_peak first.")
        return False
    peak_right, once = _peak_lines(my_peak)
    peak_right = peak_right and _real_k(my_peak, once)
    if my_best_k is not None and not peak_right:
        print("my_best_k: checked once every my_peak line above is ✓ (the check uses your "
              "my_peak)")
    elif my_best_k is not None:
        try:
            _best_k_lines(my_peak, my_best_k)
        except Exception as error:  # shown, not raised: Run All goes on
            print(f"my_best_k raises {_first_line(error)} ✗")
    return peak_right
