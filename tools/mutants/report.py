"""What ``make mutants`` prints: per exercise, its counts and each survivor with its diff;
then one table of every exercise, and the errors that fail the run."""

from dataclasses import dataclass, field

from .answers import Answer
from .generate import Mutant


@dataclass
class Tally:
    """One exercise's mutants: made (distinct edits of its answers), run (after the cap), and
    what grading made of those that defined the exercise."""

    exercise: str
    lesson: str
    made: int = 0
    run: int = 0
    discarded: int = 0  # ran but did not define the exercise: not counted
    killed: int = 0  # timeouts and crashes included
    timeouts: int = 0
    equivalent: int = 0
    survivors: list[tuple[Mutant, Answer]] = field(default_factory=list)
    seconds: float = 0.0  # grading its mutants, summed over workers
    cpu_seconds: float = 0.0  # of which the workers' CPU time (an idle machine's wall time)
    answers: dict[str, Answer] = field(default_factory=dict)  # by origin

    @property
    def mutants(self) -> int:
        return self.run - self.discarded

    @property
    def capped(self) -> int:
        return self.made - self.run

    @property
    def score(self) -> str:
        """Killed over the mutants that are not equivalent."""
        graded = self.mutants - self.equivalent
        return f"{100 * self.killed / graded:.1f}%" if graded else "-"


def exercise_block(tally: Tally) -> str:
    """The exercise's counts, then each surviving edit once: operator, diff, and the answers
    it survives in (an edit of a line several answers share)."""
    lines = [f"{tally.exercise} ({tally.lesson}): {tally.mutants} mutants, {tally.killed} killed"
             f" ({tally.timeouts} timed out), {tally.equivalent} equivalent, "
             f"{len(tally.survivors)} survivors; {tally.capped} capped, "
             f"{tally.discarded} discarded; {tally.seconds:.0f} s ({tally.cpu_seconds:.0f} s CPU)"]
    edits: dict[tuple, list[tuple[Mutant, Answer]]] = {}
    for mutant, answer in tally.survivors:
        edits.setdefault(mutant.key, []).append((mutant, answer))
    for found in edits.values():
        mutant, answer = found[0]
        others = f" and {len(found) - 1} other answers" if len(found) > 1 else ""
        lines.append(f"  survivor: {mutant.family}/{mutant.operator} in {mutant.origin}{others}")
        lines += [f"    {line}" for line in mutant.diff(answer).splitlines()]
        lines.append(f"    equivalent? EquivalentMutant({mutant.exercise!r}, {mutant.operator!r}, "
                     f"{mutant.before!r}, {mutant.after!r}, reason=...)")
    return "\n".join(lines)


COLUMNS = ("exercise", "lesson", "mutants", "killed", "equivalent", "survivors", "capped",
           "discarded", "killed %", "seconds", "cpu s")


def totals_table(tallies: list[Tally]) -> str:
    """One row per exercise and a total row."""
    def row(name, lesson, ts):
        mutants = sum(t.mutants for t in ts)
        equivalent = sum(t.equivalent for t in ts)
        killed = sum(t.killed for t in ts)
        graded = mutants - equivalent
        return (name, lesson, mutants, killed, equivalent, sum(len(t.survivors) for t in ts),
                sum(t.capped for t in ts), sum(t.discarded for t in ts),
                f"{100 * killed / graded:.1f}" if graded else "-",
                f"{sum(t.seconds for t in ts):.0f}", f"{sum(t.cpu_seconds for t in ts):.0f}")

    rows = [COLUMNS, *(row(t.exercise, t.lesson, [t]) for t in tallies),
            row("total", "", tallies)]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(COLUMNS))]
    text = ["  ".join(str(value).ljust(width) if i < 2 else str(value).rjust(width)
                      for i, (value, width) in enumerate(zip(r, widths))) for r in rows]
    return "\n".join([*text[:-1], "-" * len(text[0]), text[-1]])
