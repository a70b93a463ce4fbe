"""What the notebooks were checked with, and a word to the learner whose kernel differs."""

import torch

CHECKED_TORCH = "2.13.0"  # every number and claim in the lessons was run on this version
_said = False


def torch_note(version: str = torch.__version__) -> str | None:
    """A sentence for a learner whose torch is not the version the lessons were checked on."""
    release = version.split("+")[0]
    if release == CHECKED_TORCH:
        return None
    return (f"Note: this course was checked on torch {CHECKED_TORCH}; this kernel has torch "
            f"{version}. The exercises and checks work the same; a printed number or an error "
            "message may read differently from the text.")


def check_environment() -> None:
    """Say once per kernel if torch differs from the version the lessons were checked on,
    import what the first self-check needs (``probes.warm_up``), and show an unanswered
    exercise used by a demo cell in one line (``unwritten``)."""
    global _said
    from .probes import warm_up
    from .unwritten import show_unwritten_calmly

    warm_up()
    show_unwritten_calmly()
    note = torch_note()
    if note and not _said:
        print(note)
    _said = True
