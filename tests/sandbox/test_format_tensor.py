"""f-strings and format() of tensors print what PyTorch prints (issue 21 §3): a 0-d tensor formats as its number."""
from __future__ import annotations

import pytest
from sandbox_testing import run

PROGRAM = ("import torch\nx = torch.tensor(3.0399208068847656)\nv = torch.ones(2)\n"
           "print(f'{x}', f'{x:.2f}', '{}'.format(x), format(x), f'{x=}', f'{v}', f'{x!r}')\n")
# what torch 2.13 prints for PROGRAM (checked against torch below when it is installed)
EXPECTED = "3.0399208068847656 3.04 3.0399208068847656 3.0399208068847656 x=tensor(3.0399) tensor([1., 1.]) tensor(3.0399)\n"


def test_a_0d_tensor_formats_as_its_number():
    out = run(PROGRAM)
    assert out.error is None and out.stdout == EXPECTED


def test_expected_is_what_torch_prints(capsys):
    torch = pytest.importorskip("torch")
    x, v = torch.tensor(3.0399208068847656), torch.ones(2)
    print(f'{x}', f'{x:.2f}', f'{x}', format(x), f'{x=}', f'{v}', f'{x!r}')
    assert capsys.readouterr().out == EXPECTED
