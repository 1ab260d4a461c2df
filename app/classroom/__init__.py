"""Live classroom sessions: a presenter drives, followers' pages follow, the class answers questions.

``codes`` makes join codes and presenter tokens; ``hub`` is this process's fan-out of a session's events to
its followers' streams; ``broker`` keeps sessions (in memory, or in Redis with ``FLOWGRAD_BROKER_URL`` so
several server processes share them); ``app/api/routes/sessions.py`` is the HTTP contract.
"""
