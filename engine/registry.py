"""What a lower layer of the engine calls but a higher one defines, filled once by the module that defines it.

The engine is a stack whose modules import only downward (tests/engine/test_layers.py): the rule table, then
autograd, then Tensor, then the torch surface. Where a lower layer needs something from above (apply and the
backward loop make Tensors, Graphed runs ops and `autograd.grad` inside a rule, the recorder names nn.Modules),
it reads it here at call time; the defining module sets it right after defining it.
"""
from __future__ import annotations

Tensor = None  # engine/tensor_core.py: the Tensor class
new_tensor = None  # engine/creation.py: torch.tensor(data) for an operand given as a list or an ndarray
apply = None  # engine/dispatch.py: one op-table primitive on Tensors (Graphed runs the rules' numpy calls as ops)
grad = None  # engine/backward.py: torch.autograd.grad (a rule that takes its VJPs from a composed forward)
Module = None  # engine/nn/modules.py: nn.Module (the recorder names a program's modules; None until nn is loaded)
