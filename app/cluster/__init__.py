"""What several server processes share: the Redis link (``FLOWGRAD_BROKER_URL``), the sibling check."""
