"""Does the gradient surgery view show what reversal and clipping do to each layer's gradient,
and log what every hook saw?"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tools.catalogue import mistake
from tools.solutions import solution
from widgets.surgery import (Surgery, change_text, log_html, reversal_cosine, summary_text, surgery_explorer,
                             surgery_trace)

pytestmark = pytest.mark.lesson12

Reversal, Clip = solution("GradientReversal"), solution("ClipGradientNorm")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(nn.Linear(2, 8), nn.ReLU())
        self.label_head = nn.Linear(8, 2)
        self.domain_head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x, surgery):
        h = self.features(x)
        return self.label_head(h), self.domain_head(surgery(h)).squeeze(-1)


def losses(model, batch, surgery):
    source, labels, target = batch
    label_logits, domain_logits = model(torch.cat([source, target]), surgery)
    domains = torch.cat([torch.zeros(len(source)), torch.ones(len(target))])
    return (F.cross_entropy(label_logits[:len(source)], labels),
            F.binary_cross_entropy_with_logits(domain_logits, domains))


generator = torch.Generator().manual_seed(0)
BATCH = (torch.randn(6, 2, generator=generator), torch.tensor([0, 1, 0, 1, 1, 0]),
         torch.randn(6, 2, generator=generator) + 1)


def _trace(surgery, reversal=Reversal, clip=Clip, model=None):
    return surgery_trace(model or Net(), BATCH, losses, reversal, clip, surgery)


def _passed(trace):
    return next(r for r in trace.log if r.where == "features ← surgery")


def test_does_reversal_flip_only_what_the_features_receive():
    plain, reversed_ = _trace(Surgery()), _trace(Surgery(reversal=True, alpha=0.5))
    assert reversal_cosine(plain) == pytest.approx(1.0)
    assert reversal_cosine(reversed_) == pytest.approx(-1.0)
    assert _passed(reversed_).norm == pytest.approx(0.5 * _passed(plain).norm)
    for name in ("domain_head.0", "domain_head.2", "label_head"):
        assert reversed_.norms[name] == pytest.approx(plain.norms[name])
    assert reversed_.norms["features.0"] != pytest.approx(plain.norms["features.0"])
    assert "reversed" in summary_text(reversed_, Surgery(reversal=True))


def test_does_clipping_bound_the_rows_the_features_receive():
    plain = _trace(Surgery(reversal=True))
    limit = _passed(plain).largest_row / 4
    clipped = _trace(Surgery(reversal=True, clipping=True, max_norm=limit))
    assert _passed(clipped).largest_row == pytest.approx(limit)
    assert "max_norm" in summary_text(clipped, Surgery(clipping=True, max_norm=limit))


def test_is_the_log_in_backward_order_with_module_and_tensor_hooks():
    trace = _trace(Surgery(reversal=True))
    where = [r.where for r in trace.log]
    assert where.index("domain_head.2") < where.index("surgery ← critic") < \
        where.index("features ← surgery") < where.index("features.0")
    assert {r.kind for r in trace.log} == {"module hook", "tensor hook"}
    assert "cosine with what the critic sent" in log_html(trace, Surgery())


def test_are_the_hooks_removed_afterwards():
    model = Net()
    _trace(Surgery(reversal=True), model=model)
    assert all(not m._backward_hooks for m in model.modules())


def test_does_a_wrong_reversal_show_as_not_reversed():
    forgetful = mistake("GradientReversal", "sign forgotten").load()
    trace = _trace(Surgery(reversal=True, alpha=0.5), reversal=forgetful)
    assert reversal_cosine(trace) == pytest.approx(1.0)
    assert "kept" in summary_text(trace, Surgery(reversal=True))


def test_does_the_view_report_a_stub(ref):
    view = surgery_explorer(Net(), BATCH, losses, ref.Stub, ref.Stub)
    assert "not implemented yet" in view.panes["log"].value
    view.controls["reversal"].value = False
    assert "not implemented yet" not in view.panes["log"].value


def test_do_the_controls_drive_the_log():
    """Do the controls drive the log and the plot, and does the title name the ticked parts
    only (issue 48: it said critic(reversal(clip(h))) with "clip rows" unticked)?"""
    view = surgery_explorer(Net(), BATCH, losses, Reversal, Clip)
    assert "reversed" in view.panes["log"].value
    assert "critic(reversal(h))" in view.panes["heading"].value
    view.controls["reversal"].value = False
    assert "kept" in view.panes["log"].value
    assert "critic(h)" in view.panes["heading"].value
    before = view.panes["plot"].value
    view.controls["clipping"].value = True
    view.controls["max_norm"].value = 1e-4
    assert view.panes["plot"].value != before and "max_norm" in view.panes["log"].value
    assert "critic(clip(h))" in view.panes["heading"].value


def test_does_each_bar_say_how_much_it_changed():
    assert change_text(1.0, 1.0) == "same" and change_text(1.2, 1.0) == "+20.0%"
    assert change_text(0.5, 1.0) == "-50.0%" and change_text(0.0, 0.0) == "same"
