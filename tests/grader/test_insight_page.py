"""The class insight page (tests/grader/insight_class.py's graded class) in headless Chromium:
the page an instructor opens from its file alone."""

import pytest

from tests.grader.insight_class import LESSONS, graded_class, grader
from tests.jupyterlab import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOTS = REPO / "artifacts" / "screenshots"


def test_the_class_insight_page_reads_on_its_own(browser, tmp_path_factory):
    """Does the insight page of a graded class (tests/grader/insight_class.py) open in Chromium
    from its file alone, nothing fetched from elsewhere, each lesson's figure drawn above its
    table? Its screenshot, in docs/insight.md: artifacts/screenshots/insight.png."""
    root = graded_class(tmp_path_factory)
    folder = tmp_path_factory.mktemp("insight-page")
    status, output = grader(root, "insight", *LESSONS, "--output", str(folder))
    assert status == 0, output
    page = browser.new_page(viewport={"width": 1000, "height": 1240})  # the first lesson
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    try:
        page.goto((folder / "insight.html").as_uri(), wait_until="load")
        widths = page.evaluate("() => [...document.images].map(image => image.naturalWidth)")
        assert len(widths) == len(LESSONS) and all(widths), widths
        assert page.locator("table").count() == len(LESSONS)
        assert "GradientReversal/forgets-alpha" in page.locator("body").inner_text()
        assert all(url.startswith(("file:", "data:")) for url in fetched), fetched
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "insight.png"))
    finally:
        page.close()
