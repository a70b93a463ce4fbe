"""The one exception the grading library raises: its first line is the hint."""


class GradingError(AssertionError):
    """A check failed. ``str(err).splitlines()[0]`` names the likely mistake in plain words;
    ``case``, when given, names the inputs it failed for and ends that first line.

    ``mistake`` is the stable id of a mistake a probe proved, ``"Exercise/kebab-case"`` (for
    example ``"GradientReversal/forgets-alpha"``): rewording the hint keeps it, so a class's
    failures group by it (``grader.insight``). Where one raise reports whichever of several
    probed mistakes matched, pass a mapping from a phrase of each hint to its id instead. A hint
    that only says which value differs, or quotes the learner's own error, has no id."""

    def __init__(self, hint: str, details: str = "", case: str = "", *,
                 mistake: str | dict[str, str] = ""):
        if isinstance(mistake, dict):
            mistake = next((named for phrase, named in mistake.items() if phrase in hint), "")
        self.hint = f"{hint} (with {case})" if case else hint
        self.details = details
        self.case = case
        self.mistake = mistake
        super().__init__(f"{self.hint}\n{details}".rstrip())
