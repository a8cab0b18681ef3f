"""Test support: loopback API mocks, binary lookup and bounded process runs."""
