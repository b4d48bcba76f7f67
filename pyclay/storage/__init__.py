"""COMPSs' storage interface for dataClay: `storage.api` is the Storage Runtime Interface the COMPSs
runtime calls (master, workers and their forked executors); `storage.local_runtime` is a small
stand-in for the COMPSs runtime that runs `@task` functions on forked worker processes through
that same interface, for machines where COMPSs is not installed."""
