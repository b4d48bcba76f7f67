"""A tenant's model code that tries, from inside its execution environment, everything issue 21 found
model code could do to the node: read the cluster's files, signal and trace its servers, reach the
network, outlive its backend, exhaust memory and processes, spy on other accounts' calls and act
with its caller's authority beyond the call. Each method reports what happened instead of raising,
so a test can assert the exact refusal."""
import ctypes
import errno
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time

from dataclay import DataClayObject, activemethod

SEEN = []


def _outcome(work):
    try:
        return "done: " + str(work())
    except OSError as e:
        return f"refused: {errno.errorcode.get(e.errno, e.errno)}"
    except Exception as e:
        return f"refused: {type(e).__name__}: {e}"


class Probe(DataClayObject):
    """Has one field so that it can be stored; every method is an attempt."""

    note: str

    def __init__(self, note: str = ""):
        self.note = note

    @activemethod
    def whoami(self) -> dict:
        return {"uid": os.getuid(), "pid": os.getpid(), "ppid": os.getppid(),
                "environment": sorted(os.environ), "argv": sys.argv}

    @activemethod
    def read(self, path: str) -> str:
        def work():
            with open(path, "rb") as f:
                return len(f.read(64))
        return _outcome(work)

    @activemethod
    def listdir(self, path: str) -> str:
        return _outcome(lambda: sorted(os.listdir(path)))

    @activemethod
    def write(self, path: str) -> str:
        def work():
            with open(path, "wb") as f:
                return f.write(b"planted")
        return _outcome(work)

    @activemethod
    def signal(self, pid: int, number: int) -> str:
        return _outcome(lambda: os.kill(pid, number))

    @activemethod
    def signal_parent(self, number: int) -> str:
        return _outcome(lambda: os.kill(os.getppid(), number))

    @activemethod
    def trace(self, pid: int) -> str:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
            return "done: attached"
        return f"refused: {errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())}"

    @activemethod
    def connect(self, host: str, port: int) -> str:
        def work():
            with socket.create_connection((host, port), timeout=2):
                return "connected"
        return _outcome(work)

    @activemethod
    def leave_a_survivor(self, marker: str) -> str:
        """A grandchild in a new session, named by `marker`, that would sleep for ten minutes."""
        def work():
            return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker],
                                    start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL).pid
        return _outcome(work)

    @activemethod
    def allocate(self, megabytes: int) -> str:
        return _outcome(lambda: len(bytearray(megabytes << 20)))

    @activemethod
    def fork_bomb(self, tries: int) -> int:
        children = []
        try:
            for _ in range(tries):
                pid = os.fork()
                if pid == 0:
                    time.sleep(5)
                    os._exit(0)
                children.append(pid)
        except OSError:
            pass
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        return len(children)

    @activemethod
    def sleep(self, seconds: float) -> float:
        time.sleep(seconds)
        return seconds

    @activemethod
    def take(self, data: bytes) -> int:
        return len(data)

    @activemethod
    def choke_link(self) -> str:
        """Shrinks every pipe it holds (among them the one the Data Service writes calls into) to one page,
        then stops the whole process, so that nothing reads them: a writer that blocks on that pipe waits
        until the call's deadline."""
        shrunk = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                pipe = os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
            except OSError:  # the listing's own descriptor, closed since
                continue
            if pipe:
                shrunk.append(_outcome(lambda fd=fd: fcntl.fcntl(int(fd), fcntl.F_SETPIPE_SZ, 4096)))
        os.kill(os.getpid(), signal.SIGSTOP)
        return str(shrunk)

    @activemethod
    def die(self) -> str:
        os.kill(os.getpid(), signal.SIGKILL)
        return "still here"

    @activemethod
    def grant_author_a_contract(self, dataset: str, author: str) -> str:
        """With the caller's authority, the contract its author would want: read-write on `dataset`."""
        from dataclay._internal.runtime.current import get_runtime
        return _outcome(lambda: get_runtime().router.lm().new_data_contract(dataset, author))

    @activemethod
    def list_every_object(self) -> str:
        """The listing API from inside a backend: every object the caller's session may see."""
        from dataclay import api
        return _outcome(lambda: len(list(api.list_objects())))

    @activemethod
    def spy(self) -> str:
        """Wraps this process's call entry to record every call it serves from now on."""
        from dataclay._internal.ee import executor

        original = executor.Executor.execute

        def recording(self_, execution, *args, **kwargs):
            SEEN.append({k: v for k, v in vars(execution).items() if isinstance(v, (str, int))} if hasattr(
                execution, "__dict__") else {s: getattr(execution, s) for s in execution.__slots__
                                              if isinstance(getattr(execution, s), (str, int))})
            return original(self_, execution, *args, **kwargs)

        executor.Executor.execute = recording
        return "installed"

    @activemethod
    def seen(self) -> list:
        return list(SEEN)
