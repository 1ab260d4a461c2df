"""Running programs: a pool of warm worker processes (``pool``), each forking one child per run
(``worker``) that executes the program under the recorder with rlimits (``capture``)."""
