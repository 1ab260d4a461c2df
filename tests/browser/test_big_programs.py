"""The MNIST-sized MLP and LeNet-5 on a 64-image batch, run and drawn by the page (issue 9 §5-6).

Prints what the page downloaded and how long it took to its first drawn frame (figures for the README; no
timing asserts). Screenshots in test-artifacts/.
"""
from __future__ import annotations

import time

import pytest
from test_page import open_app, pause, run_source

MNIST_MLP = """import torch
import torch.nn as nn
torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 784, device=device)
y = torch.randint(0, 10, (64,), device=device)
for step in range(3):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
"""

LENET5 = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)

model = LeNet5()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(64, 1, 28, 28)
y = torch.randint(0, 10, (64,))
for step in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
"""

DOWNLOADED = """() => performance.getEntriesByType('resource')
    .filter(e => e.name.includes('/api/stream') || e.name.includes('/api/run'))
    .map(e => e.encodedBodySize || e.transferSize || 0).reduce((a, b) => a + b, 0)"""


@pytest.mark.parametrize("name, source", [("mnist_mlp", MNIST_MLP), ("lenet5", LENET5)])
def test_big_networks_are_run_and_drawn(page, shot, name, source):
    if page.server_kind != "app":
        pytest.skip("needs the real app")
    open_app(page)
    page.evaluate("performance.clearResourceTimings()")
    started = time.monotonic()
    run_source(page, source)
    ready_s = time.monotonic() - started
    pause(page)
    assert page.locator("svg.fg-graph [data-node-id]").count() > 10
    out = page.evaluate("document.getElementById('stdout') ? document.getElementById('stdout').textContent : ''")
    assert "2 " in out or "1 " in out
    downloaded = page.evaluate(DOWNLOADED)
    print(f"\n{name}: first frame after {ready_s:.2f} s, downloaded {downloaded:,} bytes")
    shot(page, f"big_{name}")
    page.errors.check()
