from app.trace.build import TraceBuilder
from app.trace.values import clean

__all__ = ["TraceBuilder", "clean"]
