"""Every pass of a training run is reachable on the page: the loss curve, PageDown and a share
link open a middle pass, recorded on demand ("recording pass 50…"). Screenshot in test-artifacts/."""

from __future__ import annotations

import pytest

TRAIN = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
         "model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))\n"
         "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(16, 2)\ny = x[:, :1] * x[:, 1:]\n"
         "for step in range(100):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n"
         "    loss.backward()\n    opt.step()\n")


def wait_whole(page):
    page.wait_for_function("window.__fg.trace && window.__fg.trace.passes.length === 100 && !window.__fg.trace.streaming"
                           " && document.body.dataset.ready", timeout=30000)


def open_pass_state(page):
    return page.evaluate("[window.__fg.passIndex, !!(window.__fg.model && window.__fg.model.pass.graph)]")


@pytest.fixture
def trained(page):
    if page.server_kind != "app":
        pytest.skip("recording a pass needs the real app")
    page.goto(page.base + "/")
    page.wait_for_function("document.body.dataset.ready")
    page.evaluate("src => { window.__fg.editor.text = src; }", TRAIN)
    page.get_by_role("button", name="Run", exact=True).click()
    wait_whole(page)
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    return page


def test_the_loss_curve_opens_the_pass_clicked(trained, shot):
    page = trained
    assert page.evaluate("window.__fg.trace.passes[50].graph") is None  # sent as a summary
    box = page.locator("#loss-chart .u-over").bounding_box()
    # uPlot maps values to pixels: click where x = 50 is
    x = page.evaluate("window.__fg.lossChart.plot.valToPos(50, 'x')")
    page.evaluate("() => { window.__recording = []; new MutationObserver(() => { const r = document.body.dataset.recording;"
                  " if (r) window.__recording.push(r); }).observe(document.body, {attributes: true}); }")
    page.mouse.click(box["x"] + x, box["y"] + box["height"] / 2)
    page.wait_for_function("window.__fg.passIndex === 50 && window.__fg.model.pass.graph", timeout=15000)
    assert page.evaluate("window.__recording") == ["50"]
    assert "pass 50 recorded" in page.locator("#status").inner_text()
    assert page.locator("#pass-select").input_value() == "50"
    page.keyboard.press("End")
    shot(page, "pass_50_from_the_curve")
    # the recorded pass's loss is the one the curve shows
    loss = page.evaluate("window.__fg.trace.passes[50].loss")
    assert loss == page.evaluate("window.__fg.trace.steps[50].loss")
    # PageDown goes on to 51 (recorded too), PageUp back to 50 (kept)
    page.locator("body").click(position={"x": 5, "y": 700})
    page.keyboard.press("PageDown")
    page.wait_for_function("window.__fg.passIndex === 51 && window.__fg.model.pass.graph", timeout=15000)
    page.keyboard.press("PageUp")
    page.wait_for_function("window.__fg.passIndex === 50")
    page.errors.check()


def test_a_share_link_reopens_a_middle_pass(trained, browser):
    page = trained
    page.evaluate("window.__fg.openPass(50)")
    page.wait_for_function("window.__fg.passIndex === 50 && window.__fg.model.pass.graph", timeout=15000)
    page.evaluate("window.__fg.setStep(3)")
    page.wait_for_function("location.hash.includes('pass=50')")
    url = page.url
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    other = ctx.new_page()
    other.goto(url)
    other.wait_for_function("window.__fg.passIndex === 50 && window.__fg.model && window.__fg.model.pass.graph"
                            " && window.__fg.step === 3", timeout=30000)
    ctx.close()
