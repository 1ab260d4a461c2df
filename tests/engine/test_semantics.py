"""Engine behaviour that needs no PyTorch to check: deep graphs, memory, recorder, limits, printing."""
import gc
import weakref

import numpy as np
import pytest

import engine as torch
from engine import nn
from engine.limits import LimitExceeded, limited
from engine.recorder import Recorder, encode_value, op_table

REC = {"value_limit": 256, "max_events": 100_000}  # the app passes its settings' values


def test_tutorial_numbers():
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    z = (x + y) ** 2
    z.backward()
    assert repr(z) == "tensor(25., grad_fn=<PowBackward0>)"
    assert x.grad.item() == 10 and y.grad.item() == 10
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([3.0], requires_grad=True)
    z = x * y + torch.log(x)
    z.backward()
    assert repr(z) == "tensor([6.6931], grad_fn=<AddBackward0>)"
    assert x.grad.item() == pytest.approx(3.5) and y.grad.item() == pytest.approx(2.0)
    assert repr(torch.Size([5, 4])) == "torch.Size([5, 4])"
    assert repr(nn.Linear(3, 4)) == "Linear(in_features=3, out_features=4, bias=True)"


def test_hundred_thousand_node_chain_backprops():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_graph_is_freed_by_reference_counting_alone():
    gc.disable()
    try:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 3).exp().sum()
        node = weakref.ref(y.grad_fn)
        y.backward()
        del y
        assert node() is None, "the graph survived its last tensor: a reference cycle"
    finally:
        gc.enable()


def test_float32_default_float64_on_request():
    assert torch.tensor(1.5).dtype is torch.float32
    assert torch.randn(3).dtype is torch.float32
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor(1.5, dtype=torch.float64).dtype is torch.float64
    assert (torch.arange(3) / 2).dtype is torch.float32


def test_manual_seed_reproducible():
    torch.manual_seed(3)
    a = torch.randn(4).tolist()
    torch.manual_seed(3)
    assert torch.randn(4).tolist() == a


def test_backward_order_is_newest_first():
    """PyTorch runs the ready node with the highest sequence number first."""
    x = torch.tensor(1.0, requires_grad=True)
    a = x * 2      # n1
    b = x * 3      # n2
    c = a + b      # n3
    with Recorder(**REC) as rec:
        c.backward()
    steps = [e["grad_fn"] for e in rec.events if e["kind"] == "backward_step"]
    assert steps == ["AddBackward0", "MulBackward0", "MulBackward0"]
    acc = [e for e in rec.events if e["kind"] == "accumulate"]
    assert len(acc) == 1 and acc[0]["incoming"] == 5.0  # fan-in summed before AccumulateGrad


def test_recorder_captures_graph_values_and_backward():
    with Recorder(**REC) as rec:
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        rec.name_tensor(x, "x")
        rec.name_tensor(y, "y")
        a = x + y
        z = a ** 2
        rec.name_tensor(z, "z")
        z.backward()
    ev = rec.events
    kinds = [e["kind"] for e in ev]
    assert kinds.count("op") == 2 and "backward_begin" in kinds and kinds[-1] == "backward_end"
    ops = [e for e in ev if e["kind"] == "op"]
    assert [o["grad_fn"] for o in ops] == ["AddBackward0", "PowBackward0"]
    assert ops[0]["label"] == "+"
    pow_step = next(e for e in ev if e["kind"] == "backward_step" and e["grad_fn"] == "PowBackward0")
    assert pow_step["upstream"] == 1.0 and pow_step["contributions"][0]["grad"] == 10.0
    assert pow_step["contributions"][0]["local"] == op_table()["pow_scalar"]["latex"][0]
    acc = [e for e in ev if e["kind"] == "accumulate"]
    assert {e["after"] for e in acc} == {10.0} and all(e["before"] is None for e in acc)
    names = {e["name"] for e in ev if e["kind"] == "name"}
    assert names == {"x", "y", "z"}
    assert ev[-1]["freed"] is True


def test_recorder_marks_broadcast_sum_to_shape_and_fan_in():
    with Recorder(**REC) as rec:
        X = torch.ones(3, 4)
        b = torch.zeros(4, requires_grad=True)
        h = X + b
        out = (h * h).sum()
        out.backward()
    add_step = next(e for e in rec.events if e["kind"] == "backward_step" and e["grad_fn"] == "AddBackward0")
    contrib = add_step["contributions"][0]
    assert contrib["unbroadcast_from"] == [3, 4] and np.shape(contrib["grad"]) == (4,)
    mul_step = next(e for e in rec.events if e["kind"] == "backward_step" and e["grad_fn"] == "MulBackward0")
    assert len(mul_step["contributions"]) == 2
    add_in = next(e for e in rec.events if e["kind"] == "backward_step" and e["grad_fn"] == "AddBackward0")
    assert len(add_in["upstream_parts"]) == 2  # h fed both sides of the product


def test_recorder_events_for_training_semantics():
    torch.manual_seed(0)
    with Recorder(**REC) as rec:
        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.ones(4, 2)
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        with torch.no_grad():
            y = x * 2
        d = loss.detach()
        rec.name_modules({"model": model})
    ev = rec.events
    kinds = {e["kind"] for e in ev}
    assert {"module", "optim_step", "zero_grad", "grad_mode", "detach", "module_names"} <= kinds
    names = next(e for e in ev if e["kind"] == "module_names")
    assert set(names["names"].values()) == {"model", "model.0", "model.1", "model.2"}
    assert set(names["parameters"].values()) == {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}
    linear_ops = [e for e in ev if e["kind"] == "op" and e["op"] == "addmm"]
    assert all(e["module"] is not None for e in linear_ops)
    nograd = [e for e in ev if e["kind"] == "op" and not e["grad_enabled"]]
    assert nograd and nograd[-1]["grad_fn"] is None
    assert not y.requires_grad and not d.requires_grad


def test_second_backward_error_is_recorded():
    x = torch.tensor(2.0, requires_grad=True)
    with Recorder(**REC) as rec:
        y = x * 2
        y.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
    assert any(e["kind"] == "backward_error" for e in rec.events)
    assert x.grad.item() == 2.0


def test_large_values_are_summaries_and_nonfinite_are_strings():
    big = np.arange(1000, dtype=np.float32)
    v = encode_value(big, 256)
    assert v["summary"] and v["shape"] == [1000] and v["min"] == 0 and v["max"] == 999 and len(v["sample"]) == 16
    assert encode_value(np.array([1.0, np.nan, np.inf, -np.inf]), 256) == [1.0, "nan", "inf", "-inf"]
    assert encode_value(np.float32(np.inf), 256) == "inf"
    with Recorder(value_limit=8, max_events=REC["max_events"]) as rec:
        torch.ones(100) * 2
    tensor_ev = [e for e in rec.events if e["kind"] == "tensor" and e["shape"] == [100]]
    assert all(e["value"]["summary"] for e in tensor_ev)


def test_recording_off_leaves_no_trace():
    from engine.autograd import STATE

    assert STATE.recorder is None
    with Recorder(**REC):
        assert STATE.recorder is not None
    assert STATE.recorder is None


def test_limits_refuse_before_allocating():
    with limited(max_tensor_elements=1000, max_live_elements=5000, max_graph_nodes=50):
        with pytest.raises(LimitExceeded, match="max_tensor_elements = 1,000"):
            torch.zeros(30000, 30000)
        a = torch.ones(100, 1)
        b = torch.ones(1, 100)
        with pytest.raises(LimitExceeded, match="max_tensor_elements"):
            a * b  # broadcasting to 10,000 elements, refused before numpy computes it
        with pytest.raises(LimitExceeded, match="max_tensor_elements"):
            torch.ones(100, 20) @ torch.ones(20, 100)
        x = torch.tensor(1.0, requires_grad=True)
        with pytest.raises(LimitExceeded, match="max_graph_nodes = 50"):
            y = x
            for _ in range(100):
                y = y * 2
    with limited(max_tensor_elements=1000, max_live_elements=3000, max_graph_nodes=50):
        keep = [torch.ones(1000), torch.ones(1000)]
        with pytest.raises(LimitExceeded, match="max_live_elements = 3,000"):
            keep.append(torch.ones(1000) * 2)
        del keep


def test_in_place_views_share_storage_like_torch():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    w.data.mul_(3)
    assert w.tolist() == [3.0, 6.0]
    d = w.detach()
    d.add_(1)
    assert w.tolist() == [4.0, 7.0]


def test_module_registration_and_repr():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = nn.Linear(3, 4)
            self.layer2 = nn.Linear(4, 1)
            self.scale = 2.0

        def forward(self, x):
            return self.layer2(torch.relu(self.layer1(x))) * self.scale

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias"]
    assert repr(net) == ("Net(\n  (layer1): Linear(in_features=3, out_features=4, bias=True)\n"
                         "  (layer2): Linear(in_features=4, out_features=1, bias=True)\n)")
    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    assert [tuple(p.shape) for _, p in seq.named_parameters()] == [(8, 4), (8,), (1, 8), (1,)]
    out = net(torch.ones(2, 3))
    assert out.shape == (2, 1) and out.grad_fn.name() == "MulBackward0"


def test_editing_a_grad_in_place_is_recorded_on_its_owner():
    with Recorder(**REC) as rec:
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        w.grad.mul_(0.5)
        w.grad.zero_()
    wid = next(e["id"] for e in rec.events if e["kind"] == "tensor" and e["origin"] == "leaf")
    edits = [e for e in rec.events if e["kind"] in ("grad_inplace", "zero_grad")]
    assert [e["kind"] for e in edits] == ["grad_inplace", "zero_grad"]
    assert edits[0]["tensor"] == wid and edits[0]["grad"] == [1.0, 2.0]
    assert edits[1]["tensors"] == [wid] and edits[1]["set_to_none"] is False


def test_changing_a_saved_tensor_in_place_fails_backward_like_torch():
    x = torch.ones(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"output 0 of Sigmoid, is at version 1; expected version 0"):
        y.sum().backward()
    w = torch.ones(3)
    z = (x + w).sum()  # add saves nothing: changing w is harmless
    w.add_(1)
    z.backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    e = x.exp()
    e.data.add_(1)  # writes through .data bypass the check, as in torch
    e.sum().backward()


def test_an_update_without_graph_reads_the_tensor_it_writes():
    """`a -= lr * g` under no_grad: the subtraction's input is `a` itself (drawn with its value before the write),
    then the in-place write to `a`; no copy of `a` appears as a tensor of its own."""
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    g = torch.tensor([0.5, -0.5])
    with Recorder(**REC) as rec:
        with torch.no_grad():
            a -= 0.1 * g
    ev = rec.events
    (write,) = [e for e in ev if e["kind"] == "inplace"]
    sub = next(e for e in ev if e["kind"] == "op" and e["op"] == "sub")
    assert sub["inputs"][0] == write["tensor"]
    leaves = [e for e in ev if e["kind"] == "tensor" and e["origin"] == "leaf"]
    assert [e["value"] for e in leaves if e["id"] == write["tensor"]] == [[1.0, 2.0]]  # its value before the write
    assert len(leaves) == 2  # a and g, nothing else
    assert write["value"] == pytest.approx([0.95, 2.05])
