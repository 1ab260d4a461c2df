"""torch.utils.data against the installed PyTorch: shuffled DataLoader batches, random_split, default
collate and what the loaders leave of the global generator all agree exactly."""
import collections

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


def _plain(x):
    """Batches as plain Python values (tensors as (dtype name, nested lists))."""
    if isinstance(x, (engine.Tensor, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_plain(v) for v in x]
    return x


def _both(f):
    out = []
    for lib in (engine, torch):
        lib.manual_seed(0)
        r = f(lib)
        out.append((_plain(r), lib.randn(3).tolist()))  # and where the global generator was left
    assert out[0] == out[1]
    return out[0][0]


def test_shuffled_loader_matches_torch_brief_example():
    got = _both(lambda lib: [b for b in lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(10.)),
                                                                    batch_size=3, shuffle=True)])
    assert len(got[1]) == 4


@pytest.mark.parametrize("kwargs", [dict(batch_size=3, shuffle=True), dict(batch_size=4, shuffle=True, drop_last=True),
                                    dict(batch_size=2), dict(batch_size=7, drop_last=True), dict(),
                                    dict(batch_size=None), dict(batch_size=5, shuffle=False)])
def test_loader_epochs_match_torch(kwargs):
    def run(lib):
        x = lib.arange(26.).reshape(13, 2)
        y = lib.arange(13)
        dl = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), **kwargs)
        return [len(dl), [b for b in dl], [b for b in dl], [b for b in iter(dl)]]

    _both(run)


def test_loader_with_its_own_generator():
    def run(lib):
        g = lib.Generator().manual_seed(123)
        dl = lib.utils.data.DataLoader(list(range(20)), batch_size=6, shuffle=True, generator=g)
        return [list(dl), list(dl)]

    _both(run)


def test_random_split_lengths_and_fractions():
    def run(lib):
        ds = lib.utils.data.TensorDataset(lib.arange(17.))
        a = [[int(s[i][0].item()) for i in range(len(s))] for s in lib.utils.data.random_split(ds, [5, 12])]
        b = [list(s) for s in lib.utils.data.random_split(range(17), [0.25, 0.25, 0.5])]
        g = lib.Generator().manual_seed(42)
        c = [list(s) for s in lib.utils.data.random_split(range(10), [0.7, 0.3], generator=g)]
        return [a, b, c]

    _both(run)


def test_random_split_errors_match_torch():
    for lengths in ([3, 4], [0.5, 0.6], [-0.5, 1.5], [1.5, -0.5]):
        errs = []
        for lib in (engine, torch):
            try:
                lib.utils.data.random_split(range(10), lengths)
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                errs.append((type(e).__name__, str(e)))
        assert errs[0] == errs[1] and errs[0] is not None


def test_default_collate_matches_torch():
    Point = collections.namedtuple("Point", "x y")

    def run(lib):
        class Items(lib.utils.data.Dataset):
            def __len__(self):
                return 5

            def __getitem__(self, i):
                return {"x": lib.full((2,), float(i)), "n": i, "f": i / 2, "flag": i % 2 == 0, "name": f"s{i}",
                        "pair": (i, [i * 1.5, lib.tensor(i)]), "pt": Point(i, float(i))}

        return list(lib.utils.data.DataLoader(Items(), batch_size=2))

    _both(run)


def test_collate_errors_match_torch():
    for samples in ([[1, 2], [3]], [object(), object()]):
        errs = []
        for lib in (engine, torch):
            try:
                list(lib.utils.data.DataLoader(samples, batch_size=2))
            except Exception as e:  # noqa: BLE001
                errs.append((type(e).__name__, str(e).split(";")[0]))
        assert errs[0] == errs[1]


def test_loader_errors_match_torch():
    ds = [1, 2, 3]
    for kwargs in (dict(batch_size=0), dict(batch_size=None, drop_last=True), dict(num_workers=-1),
                   dict(batch_size=2.5)):
        errs = []
        for lib in (engine, torch):
            try:
                lib.utils.data.DataLoader(ds, **kwargs)
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                errs.append((type(e).__name__, str(e)))
        assert errs[0] == errs[1] and errs[0] is not None


def test_tensor_dataset_indexing_and_size_mismatch():
    for lib in (engine, torch):
        ds = lib.utils.data.TensorDataset(lib.arange(6.).reshape(3, 2), lib.arange(3))
        assert len(ds) == 3
        x, y = ds[1]
        assert x.tolist() == [2.0, 3.0] and y.item() == 1
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4))


def test_training_loop_with_loader_matches_torch():
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(20, 3)
        y = x @ lib.tensor([[1.0], [-2.0], [0.5]]) + 0.1 * lib.randn(20, 1)
        model = lib.nn.Linear(3, 1)
        opt = lib.optim.Adam(model.parameters(), lr=0.05)
        dl = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), batch_size=6, shuffle=True)
        losses = []
        for _ in range(3):
            for xb, yb in dl:
                opt.zero_grad()
                loss = lib.nn.functional.mse_loss(model(xb), yb)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses, [p.detach().numpy() if lib is torch else p._data for p in model.parameters()]

    (el, ep), (tl, tp) = run(engine), run(torch)
    np.testing.assert_allclose(el, tl, rtol=1e-5)
    for a, b in zip(ep, tp):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_iterator_len_and_protocol():
    for lib in (engine, torch):
        dl = lib.utils.data.DataLoader(list(range(7)), batch_size=3)
        it = iter(dl)
        assert len(it) == len(dl) == 3
        assert next(it).tolist() == [0, 1, 2]
        assert [b.tolist() for b in it] == [[3, 4, 5], [6]]
        with pytest.raises(StopIteration):
            next(it)


def test_classes_print_like_torch():
    import re

    def shown(lib):
        ds = lib.utils.data.TensorDataset(lib.ones(3))
        dl = lib.utils.data.DataLoader(ds)
        p = lib.tensor([1.0], requires_grad=True)
        s = lib.optim.lr_scheduler.StepLR(lib.optim.SGD([p]), 2)
        objs = [ds, dl, iter(dl), lib.utils.data.random_split(ds, [1, 2])[0], s]
        return [re.sub(r" at 0x[0-9a-f]+", "", repr(o)) for o in objs]

    assert shown(engine) == shown(torch)


# ---------------------------------------------------------------- issue 10: RandomSampler with replacement
@pytest.mark.parametrize("n, num_samples", [(10, None), (10, 5), (7, 100), (3, 32), (50, 65)])
@pytest.mark.parametrize("seeded", [True, False])
def test_random_sampler_with_replacement_draws_pytorchs_indices(n, num_samples, seeded):
    got = []
    for lib in (torch, engine):
        lib.manual_seed(11)
        g = lib.Generator().manual_seed(5) if seeded else None
        s = lib.utils.data.RandomSampler(range(n), replacement=True, num_samples=num_samples, generator=g)
        got.append((list(s), list(s), len(s), lib.rand(2).tolist()))
    assert got[0] == got[1]


def test_random_sampler_replacement_must_be_a_bool():
    for lib in (torch, engine):
        with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
            lib.utils.data.RandomSampler(range(3), replacement=1)
