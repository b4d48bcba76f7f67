"""`python -m dataclay._internal.ee`: the execution environment process a Data Service spawns."""
from dataclay._internal.ee.main import exit_now, main

if __name__ == "__main__":
    exit_now(main())
