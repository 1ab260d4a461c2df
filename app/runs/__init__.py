"""The run store: folded passes' group payloads, kept in the server process for the group and search endpoints."""
