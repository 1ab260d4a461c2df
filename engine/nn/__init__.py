"""torch.nn for the supported subset."""
from . import functional, init
from .modules import (
                      BCELoss,
                      BCEWithLogitsLoss,
                      CrossEntropyLoss,
                      Flatten,
                      Identity,
                      Linear,
                      LogSoftmax,
                      Module,
                      ModuleList,
                      MSELoss,
                      NLLLoss,
                      Parameter,
                      ReLU,
                      Sequential,
                      Sigmoid,
                      Softmax,
                      Tanh,
)

__all__ = ["functional", "init", "Module", "Linear", "ReLU", "Tanh", "Sigmoid", "Sequential", "ModuleList",
           "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "Parameter", "Identity",
           "Softmax", "LogSoftmax", "Flatten"]
