"""What every lesson 13 entry shares: the lesson's first lines (the interpreter without a GPU,
chosen before a kernel is defined) and a helper to write an entry as edits of another."""

HEADER = '''
import os

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"
import triton
import triton.language as tl
'''


def _edit(base: str, *replacements) -> str:
    """``base`` with each (old, new) replaced once; fails loudly if ``old`` is missing."""
    for old, new in replacements:
        assert old in base, old
        base = base.replace(old, new, 1)
    return base
