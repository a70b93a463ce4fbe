"""The one exception the grading library raises: its first line is the hint."""


class GradingError(AssertionError):
    """A check failed. ``str(err).splitlines()[0]`` names the likely mistake in plain words;
    ``case``, when given, names the inputs it failed for and ends that first line."""

    def __init__(self, hint: str, details: str = "", case: str = ""):
        self.hint = f"{hint} (with {case})" if case else hint
        self.details = details
        self.case = case
        super().__init__(f"{self.hint}\n{details}".rstrip())
