"""Does every view carry a static snapshot for places that cannot show live widgets?"""

from widgets.view import SNAPSHOT_NOTE
from widgets.ste import ste_explorer


def test_does_the_bundle_hold_the_widget_and_a_snapshot(ref):
    view = ste_explorer(ref.SignClippedSTE)
    bundle = view._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == view.model_id
    html = bundle["text/html"]
    assert SNAPSHOT_NOTE in html
    assert html.count('src="data:image/png;base64,') == 1
    assert view.panes["readout"].value in html


def test_does_the_snapshot_follow_the_controls(ref):
    view = ste_explorer(ref.SignClippedSTE)
    before = view._repr_mimebundle_()["text/html"]
    view.controls["x"].value = 1.5
    assert view._repr_mimebundle_()["text/html"] != before
