"""The page taken away: one self-contained HTML file (``html.py``) that replays a recorded trace offline."""
