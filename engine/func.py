"""torch.func (`from torch.func import grad, vmap, functional_call`): the transforms (engine/func_transforms.py),
vmap and functional_call (engine/func_vmap.py)."""
from __future__ import annotations

from .func_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, vjp
from .func_vmap import functional_call, vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "vjp", "vmap"]
