"""The one exception the grading library raises: its first line is the hint."""


class GradingError(AssertionError):
    """A check failed. ``str(err).splitlines()[0]`` names the likely mistake in plain words."""

    def __init__(self, hint: str, details: str = ""):
        self.hint = hint
        self.details = details
        super().__init__(f"{hint}\n{details}".rstrip())
