from app.layout.layout import LayoutEngine, LayoutInput, LayoutResult

__all__ = ["LayoutEngine", "LayoutInput", "LayoutResult"]
