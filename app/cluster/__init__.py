"""What several server processes share: the Redis link (``FLOWGRAD_BROKER_URL``), readiness, the CPU quota."""
