"""The C library through ctypes: prctl, capget/capset and raw system calls, each raising OSError
with the errno the kernel gave."""
from __future__ import annotations

import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def checked(result: int, what: str) -> int:
    """Returns `result`, or raises OSError with errno when the call failed (returned -1)."""
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    """prctl(2)."""
    return checked(libc.prctl(option, arg2, arg3, arg4, arg5), f"prctl({option})")


def syscall(number: int, *args, what: str) -> int:
    """A system call by number: integers are passed as longs, everything else as given."""
    converted = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return checked(libc.syscall(ctypes.c_long(number), *converted), what)
