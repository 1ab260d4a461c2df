"""Write sandbox/pytorch_names.json: the public names of PyTorch's modules and of Tensor, from the
installed torch (2.13.0 CPU, the test extra). The sandbox uses it to tell "exists in PyTorch, not in
flowgrad" from "does not exist in PyTorch" (a typo, answered with a did-you-mean).

    .venv/bin/python scripts/pytorch_names.py
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional
import torch.optim
import torch.utils.data

MODULES = {
    "torch": torch, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional, "torch.optim": torch.optim,
    "torch.autograd": torch.autograd, "torch.utils.data": torch.utils.data, "torch.nn.init": torch.nn.init,
    "torch.optim.lr_scheduler": torch.optim.lr_scheduler, "torch.cuda": torch.cuda, "torch.linalg": torch.linalg,
    "torch.func": torch.func, "torch.autograd.functional": torch.autograd.functional, "torch.special": torch.special,
    "Tensor": torch.Tensor, "nn.Module": torch.nn.Module,
}


def main() -> None:
    out = {"torch_version": torch.__version__}
    for name, mod in MODULES.items():
        out[name] = sorted(n for n in dir(mod) if not n.startswith("_"))
    path = Path(__file__).resolve().parent.parent / "sandbox" / "pytorch_names.json"
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"{path}: {sum(len(v) for k, v in out.items() if k != 'torch_version')} names from torch {torch.__version__}")


if __name__ == "__main__":
    main()
