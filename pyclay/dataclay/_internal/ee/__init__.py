"""The Python execution environment: a child process of a Data Service that keeps Python objects
in memory and runs their active methods (`python -m dataclay._internal.ee`)."""
