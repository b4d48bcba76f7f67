"""Runtimes: what persistent objects call to reach their state (client proxies or the execution
environment's resident objects)."""
