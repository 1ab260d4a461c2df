"""Running programs: the run service the routes call (``service``; the notebook's ``local``), a pool of warm
worker processes (``pool``, started at ``entry``), each forking one child per run (``worker``) that executes
the program under the recorder with rlimits (``capture``) while the worker builds its answer (``session``).
Every message between them is ``protocol``'s."""
