"""torch.nn for the supported subset."""
from . import functional, init, parameter, utils
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    Mish,
    PReLU,
    ReLU6,
    SiLU,
    Softmin,
    Softplus,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .attention import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .containers import ModuleDict, ParameterDict, ParameterList
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import Dropout, Dropout1d, Dropout2d
from .lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d, LazyLinear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .modules import (
    Flatten,
    Identity,
    Linear,
    LogSoftmax,
    Module,
    ModuleList,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from .more_modules import (
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    Bilinear,
    GaussianNLLLoss,
    MarginRankingLoss,
    PixelShuffle,
    PixelUnshuffle,
    RReLU,
    Softmax2d,
    TripletMarginLoss,
)
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm, RMSNorm
from .padding import (
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .reshape import Unflatten
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .sparse import Embedding, EmbeddingBag

__all__ = ["functional", "init", "utils", "Module", "Linear", "ReLU", "Tanh", "Sigmoid", "Sequential", "ModuleList",
           "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "Parameter", "Identity",
           "Softmax", "LogSoftmax", "Flatten",
           "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "Unflatten", "Upsample",
           "UpsamplingBilinear2d", "UpsamplingNearest2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
           "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d",
           "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout", "Dropout1d", "Dropout2d", "Embedding", "EmbeddingBag",
           "GELU", "LeakyReLU", "ELU", "CELU", "SELU", "SiLU", "Mish", "Hardtanh", "ReLU6", "Hardswish", "Hardsigmoid",
           "LogSigmoid", "Softsign", "Tanhshrink", "Softplus", "Threshold", "Softmin",
           "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss",
           "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
           "ModuleDict", "ParameterList", "ParameterDict", "PReLU", "GLU", "GroupNorm", "RMSNorm", "InstanceNorm1d",
           "InstanceNorm2d", "CosineSimilarity",
           "PairwiseDistance",
           "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer",
           "ConvTranspose1d", "ConvTranspose2d",
           "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "parameter",
           "PixelShuffle", "PixelUnshuffle", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Softmax2d", "MarginRankingLoss",
           "TripletMarginLoss", "GaussianNLLLoss", "Bilinear", "RReLU"]
