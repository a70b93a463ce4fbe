"""Plain-text and HTML formatting shared by the views: tensors, bytes, tables, notes."""

from html import escape

import torch

SMALL_TENSOR = 8  # up to this many elements a tensor is shown by value

FONT = "var(--jp-ui-font-family, system-ui, sans-serif)"
MONO = "var(--jp-code-font-family, monospace)"
TEXT = "var(--jp-ui-font-color1, #1f1f1f)"
MUTED = "var(--jp-ui-font-color2, #616161)"
RULE = "var(--jp-border-color2, #d0d0d0)"

_BOX = {
    "warning": ("#fff4e0", "#5c3b00", "#e69500", "⚠"),
    "error": ("#fdecea", "#611a15", "#d32f2f", "✗"),
    "ok": ("#edf7ed", "#1e4620", "#2e7d32", "✓"),
    "note": ("#e8f1fb", "#0d3c61", "#1976d2", "ℹ"),
}


def format_bytes(count: int) -> str:
    """``1536`` -> ``'1.5 KiB'``."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_shape(shape) -> str:
    """``torch.Size([3, 4])`` -> ``'(3, 4)'``; a 0-dim shape -> ``'()'``."""
    dims = tuple(int(d) for d in shape)
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def format_dtype(dtype: torch.dtype) -> str:
    """``torch.float32`` -> ``'float32'``."""
    return str(dtype).removeprefix("torch.")


def format_number(value: float, zero_sign: bool = False) -> str:
    """Four significant digits, no noise: 0.25, -1.5e-07, 3; -0.0 as 0 (adding 0.0 turns -0.0
    into 0.0 and leaves every other value as it is) unless ``zero_sign``, where the sign of a
    zero is what the reader is shown."""
    return f"{value if zero_sign else value + 0.0:.4g}"


def describe_tensor(value, max_values: int = SMALL_TENSOR) -> str:
    """Values for a small tensor, shape and norm for a large one, ``None`` for None."""
    if value is None:
        return "None"
    if not isinstance(value, torch.Tensor):
        return repr(value)
    tensor = value.detach()
    if tensor.numel() <= max_values:
        if tensor.dim() == 0:
            return format_number(tensor.item())
        flat = ", ".join(format_number(v) for v in tensor.flatten().tolist())
        shape = "" if tensor.dim() == 1 else f" shape {format_shape(tensor.shape)}"
        return f"[{flat}]{shape}"
    norm = tensor.double().norm().item() if tensor.is_floating_point() else None
    norm_text = f", norm {format_number(norm)}" if norm is not None else ""
    return f"shape {format_shape(tensor.shape)}{norm_text}"


def box(kind: str, text: str) -> str:
    """A coloured note: ``kind`` is warning, error, ok or note; ``text`` is HTML."""
    background, color, edge, icon = _BOX[kind]
    return (f'<div style="background:{background};color:{color};border-left:4px solid {edge};'
            f'padding:6px 10px;margin:6px 0;border-radius:3px;font-family:{FONT};'
            f'font-size:13px;line-height:1.4">{icon} {text}</div>')


def code(text: str) -> str:
    """Inline code."""
    return f'<code style="font-family:{MONO};font-size:12px">{escape(text)}</code>'


def heading(text: str) -> str:
    """A view's title line (``text`` is HTML)."""
    return (f'<div style="font-family:{FONT};font-size:14px;font-weight:600;color:{TEXT};'
            f'margin:4px 0 6px">{text}</div>')


def paragraph(text: str, *, muted: bool = False) -> str:
    """A line of prose (``text`` is HTML)."""
    color = MUTED if muted else TEXT
    return (f'<div style="font-family:{FONT};font-size:13px;color:{color};margin:4px 0;'
            f'line-height:1.4">{text}</div>')


def table(headers: list[str], rows: list[list[str]], *, numeric: set[int] = frozenset(),
          monospace: set[int] = frozenset(), wrap: set[int] = frozenset()) -> str:
    """An HTML table; cells are HTML, columns in ``numeric`` are right-aligned, and only
    columns in ``wrap`` may break a long value over several lines."""
    def cell(tag, index, content):
        align = "right" if index in numeric else "left"
        font = f"font-family:{MONO};font-size:12px;" if index in monospace and tag == "td" else ""
        weight = "font-weight:600;" if tag == "th" else ""
        border = f"border-bottom:{'2px' if tag == 'th' else '1px'} solid {RULE};"
        # ipywidgets' HTML sets a 28 px line-height: wrapped lines need their own
        space = ("normal;line-height:1.4" if index in wrap and tag == "td" else "nowrap")
        return (f'<{tag} style="text-align:{align};padding:3px 12px 3px 0;{border}{font}'
                f'{weight}white-space:{space};color:{TEXT}">{content}</{tag}>')

    head = "".join(cell("th", i, h) for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return (f'<table style="border-collapse:collapse;font-family:{FONT};font-size:13px;'
            f'margin:4px 0 8px">'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
