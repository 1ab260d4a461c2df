"""torch.nn.parameter: the parameter classes (`from torch.nn.parameter import Parameter`)."""
from .lazy import UninitializedBuffer, UninitializedParameter, is_lazy
from .modules import Parameter

__all__ = ["Parameter", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]
