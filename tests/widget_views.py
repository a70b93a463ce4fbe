"""A widget view in JupyterLab, as the browser tests see it: rendered (none loading, none
failed), what it shows (its signature), and whether operating each kind of control changes it,
with the kernel's traffic tracked so that a slow answer is waited for, not missed."""

import time

import pytest

CONTROL_TIMEOUT_S = 15  # the longest a view may take to answer a control
QUIET_MS = 4000  # how long a control may take to make the page send its kernel anything

# Views are the widget outputs; controls of one kind are tried in order until one changes it.
# A toggle-buttons group's pressed option, like a dropdown's current choice, has nothing to change.
CONTROL_KINDS = {
    "slider": ".widget-slider .noUi-target",
    "dropdown": ".widget-dropdown select",
    "checkbox": ".widget-checkbox input[type=checkbox]",
    "button": (".jupyter-button:not(.widget-play .jupyter-button)"
               ":not(.widget-toggle-buttons .mod-active)"),
}
# What a view shows: the value of each picture and HTML pane in it.
SIGNATURE_JS = """view => [...view.querySelectorAll('img.widget-image, .widget-html-content')]
    .map(e => e.src || e.innerHTML).join('\\n')"""



def views(page):
    """The output areas that hold a widget view (JupyterLab tags them with no MIME type)."""
    return page.locator(".jp-OutputArea-output:has(> .jupyter-widgets)")


def wait_rendered(page, expected: int) -> None:
    """Every widget output shows its view: none loading, none failed."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = page.locator(".jp-Notebook").text_content()
        loading = "Loading widget" in text
        if "Error displaying widget" in text:
            failed = page.locator(".jp-OutputArea-output", has_text="Error displaying widget")
            pytest.fail(f"{failed.count()} widget outputs failed to display, the first with "
                        f"{failed.first.text_content()!r}")
        if not loading and views(page).count() == expected:
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"widgets still loading after 60 s, or {views(page).count()} views "
                    f"rendered where the notebook has {expected}")
    for i in range(expected):
        view = views(page).nth(i)
        box = view.bounding_box() or {"width": 0, "height": 0}
        if view.locator(".jupyter-widgets").count() == 0 or box["height"] < 10:
            pytest.fail(f"widget view {i + 1} rendered empty")


def operate(control, kind: str) -> None:
    control.scroll_into_view_if_needed()
    if kind == "slider":
        box = control.bounding_box()
        handle = control.locator(".noUi-handle").first.bounding_box()
        left_half = handle["x"] + handle["width"] / 2 < box["x"] + box["width"] / 2
        fraction = 0.8 if left_half else 0.2
        # a click on the element, not at page coordinates: Playwright waits until the track
        # holds still (a view above it redrawing its picture can move it) and hits it there
        control.click(position={"x": fraction * box["width"], "y": box["height"] / 2})
    elif kind == "dropdown":
        options = control.locator("option").all_inner_texts()
        current = control.input_value()
        control.select_option(next(o for o in options if o != current))
    else:
        control.click()


def signature(view) -> str:
    return view.evaluate(SIGNATURE_JS)


def track_kernel_traffic(page) -> None:
    """Count the requests the page sends the notebook's kernel, and keep those the kernel has
    not finished: it reports a request idle only after every update the request caused, and
    the page handles those updates before that report."""
    page.evaluate("""() => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const traffic = window.kernelTraffic = {sent: 0, pending: new Set()};
        kernel.anyMessage.connect((_, {msg, direction}) => {
            if (direction === 'send' && msg.channel === 'shell') {
                traffic.sent += 1;
                traffic.pending.add(msg.header.msg_id);
            }
        });
        kernel.iopubMessage.connect((_, msg) => {
            if (msg.header.msg_type === 'status' && msg.content.execution_state === 'idle') {
                traffic.pending.delete(msg.parent_header.msg_id);
            }
        });
    }""")


# Settled: the kernel has finished every request sent since the control was operated (or none
# came within QUIET_MS: the control did nothing the kernel hears of; generous, as a busy
# machine slows the page as well as the kernel) and the view held still
# over a poll. Then whether it changed (a picture and a readout arrive as separate messages:
# the next check must not see this one's tail); null if the kernel was still busy.
SETTLE_JS = f"""async (view, [before, sentBefore, timeoutMs]) => {{
    const signature = {SIGNATURE_JS};
    const traffic = window.kernelTraffic;
    const start = performance.now();
    let previous = null;
    while (performance.now() - start < timeoutMs) {{
        const quiet = traffic.pending.size === 0
                      && (traffic.sent > sentBefore || performance.now() - start > {QUIET_MS});
        const now = signature(view);
        if (quiet && now === previous) {{
            return now !== before;
        }}
        previous = quiet ? now : null;
        await new Promise(resolve => setTimeout(resolve, 100));
    }}
    return null;
}}"""


def unresponsive(page, operated) -> list[str]:
    """Operate one control of each kind in each view of ``operated`` (0-based indices), trying
    the next of that kind while the view stays the same; name each view and kind where none
    changed it."""
    unchanged = []
    for i in operated:
        view = views(page).nth(i)
        for kind, selector in CONTROL_KINDS.items():
            controls = view.locator(selector)
            operable = [k for k in range(controls.count())
                        if kind != "dropdown" or controls.nth(k).locator("option").count() > 1]
            if not operable:  # none, or a dropdown with one choice: nothing to change
                continue
            for k in operable:
                before = signature(view)
                sent = page.evaluate("() => window.kernelTraffic.sent")
                operate(controls.nth(k), kind)
                changed = view.evaluate(SETTLE_JS, [before, sent, CONTROL_TIMEOUT_S * 1000])
                if changed:
                    break
            else:
                busy = (f" (the kernel still busy {CONTROL_TIMEOUT_S} s after the last)"
                        if changed is None else "")
                unchanged.append(f"view {i + 1}: no {kind} changed it{busy}")
    return unchanged
