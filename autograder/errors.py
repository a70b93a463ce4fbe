"""The one exception the grading library raises: its first line is the hint."""

import re


class GradingError(AssertionError):
    """A check failed. ``str(err).splitlines()[0]`` names the likely mistake in plain words;
    ``case``, when given, names the inputs it failed for and ends that first line.

    ``mistake`` is the stable id of a mistake a probe proved, ``"Exercise/kebab-case"`` (for
    example ``"GradientReversal/forgets-alpha"``): rewording the hint keeps it, so a class's
    failures group by it (``grader.insight``). Where one raise reports whichever of several
    probed mistakes matched, pass a mapping from a phrase of each hint to its id instead. A hint
    that only says which value differs, or quotes the learner's own error, has no id."""

    def __init__(self, hint: str, details: str | None = "", case: str = "", *,
                 mistake: str | dict[str, str] = ""):
        if isinstance(mistake, dict):
            mistake = next((named for phrase, named in mistake.items() if phrase in hint), "")
        case = new_context(hint, case)
        self.hint = with_case(hint, case) if case else hint
        self.details = details = details or ""
        self.case = case
        self.mistake = mistake
        super().__init__(f"{self.hint}\n{unsaid(self.hint, details)}".rstrip())


# the rule reference a rule check's first line ends with (``function_contract.rule_reference``)
_RULE_AT_END = re.compile(r" \(Function contract, rule \d: [^()]*\)$")


def with_case(hint: str, case: str) -> str:
    """``hint`` naming ``case``, '(with x of shape (5,))', before the rule reference it ends
    with, if any: that reference stays the end of the first line."""
    rule = _RULE_AT_END.search(hint)
    at = rule.start() if rule else len(hint)
    return f"{hint[:at]} (with {case}){hint[at:]}"


def without_case(hint: str, case: str) -> str:
    """``hint`` as it was before ``with_case`` named ``case`` in it, at the end or before the
    rule reference: a self-check's first line names the case up front, '(tried with ...)', and
    a '(with x of shape (7,))' left before the reference read as part of the sentence."""
    said = f" (with {case})"
    rule = _RULE_AT_END.search(hint)
    at = rule.start() if rule else len(hint)
    return hint[:at - len(said)] + hint[at:] if case and hint[:at].endswith(said) else hint


def unsaid(hint: str, details: str) -> str:
    """``details`` without the lines ``hint`` already quotes (the learner's own error, whose
    first line a hint often ends with): ``%tb`` and nbgrader print each once."""
    return "\n".join(line for line in details.splitlines()
                     if not line.strip() or line.strip().rstrip(".") not in hint).strip("\n")


def _parts(case: str) -> list[str]:
    """``case`` split at its commas outside brackets: 'x of shape (5, 3), scale=2.5' gives
    ['x of shape (5, 3)', 'scale=2.5']."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(case):
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth == 0:
            parts.append(case[start:i].strip())
            start = i + 1
    return [p for p in [*parts, case[start:].strip()] if p]


_INPUT = re.compile(r"\w+ of shape \(.*\)|\w+=.+")  # how a case names one input
_SHAPE = re.compile(r"\w+ of shape \(.*\)")


def _says(hint: str, text: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(text) + r"(?!\w)", hint) is not None


def new_context(hint: str, case: str) -> str:
    """``case`` without the inputs that ``hint`` already names (a hint that quotes them,
    'raised RuntimeError with x of shape (5, 3)', or an inner case): the inputs said once.
    Other context ('grad_output not contiguous') is kept unless the hint says all of it."""
    if not case or _says(hint, case):
        return ""
    # 'a grad_output transposed; x of shape (2, 3)': each clause its own parts. The shapes go
    # only when the hint names every one: a hint about a of shape (3, 1) keeps the case's
    # 'a of shape (3, 1), b of shape (1, 4)', the pair it failed for, not b's shape alone
    clauses = [_parts(clause) for clause in case.split("; ")]
    shapes = [part for parts in clauses for part in parts if _SHAPE.fullmatch(part)]
    every_shape = all(_says(hint, part) for part in shapes)
    kept = [", ".join(part for part in parts if not (
        _INPUT.fullmatch(part) and _says(hint, part)
        and (every_shape or not _SHAPE.fullmatch(part)))) for parts in clauses]
    return "; ".join(clause for clause in kept if clause)
