"""Model code that tries to get out, run confined by test_sandbox_escapes.py (standard library only:
it also runs under the system's Python as an unprivileged user). It reads its targets as one JSON
line on standard input, tries every escape, prints {escape: outcome} as one JSON line (an outcome is
an errno name, an exception name, or what it saw), then leaves a grandchild that called setsid
running `sleep MARKER` and waits for standard input to end."""
import ctypes
import errno
import json
import os
import signal
import socket
import sys
import time

PTRACE_ATTACH = 16
CLONE_NEWUSER = 0x10000000


def outcome(attempt):
    """What happened: "ok" (or what the attempt returned) when it worked, else the error's name."""
    try:
        result = attempt()
    except MemoryError:
        return "MemoryError"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return "ok" if result is None else result


def read(path):
    with open(path, "rb") as f:
        f.read(1)


def write(path):
    with open(path, "w") as f:
        f.write("planted")


def libc_call(name, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def list_proc(host):
    return "sees-host" if str(host) in os.listdir("/proc") else "host-hidden"


def tcp(port):
    socket.create_connection(("127.0.0.1", port), timeout=2).close()


def udp(port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"planted", ("127.0.0.1", port))


def unix(kind, path):
    with socket.socket(socket.AF_UNIX, kind) as s:
        if kind == socket.SOCK_STREAM:
            s.connect(path)
        else:
            s.sendto(b"planted", path)


def fork_bomb(bound):
    """Forks until refused (children sleep a moment and exit); how far it got, and the refusal."""
    children = []
    try:
        for _ in range(bound * 4):
            pid = os.fork()
            if pid == 0:
                time.sleep(0.3)
                os._exit(0)
            children.append(pid)
    except OSError as e:
        return f"{errno.errorcode[e.errno]} after {len(children)}"
    finally:
        for pid in children:
            os.waitpid(pid, 0)
    return f"unbounded: {len(children)}"


def in_child(attempt):
    """Runs `attempt` in a forked child (setsid would change this process); its outcome."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write_end, outcome(attempt).encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    with os.fdopen(read_end) as f:
        return f.read()


def leave_grandchild(marker):
    """A child forks a grandchild and exits; the grandchild calls setsid (refused or not) and becomes
    `sleep MARKER`, holding standard output open. Returns once it runs sleep: the pipe's write end
    closes on exec."""
    read_end, write_end = os.pipe()  # close-on-exec
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            try:
                os.setsid()
            except OSError:
                pass
            os.execv("/bin/sleep", ["sleep", marker])
        os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    os.read(read_end, 1)
    os.close(read_end)


def main():
    t = json.loads(sys.stdin.readline())
    host, parent = t["host_pid"], os.getppid()
    escapes = {f"read {name}": (lambda p=path: read(p)) for name, path in t["secrets"].items()}
    escapes.update({
        "read host environ": lambda: read(f"/proc/{host}/environ"),
        "read host mem": lambda: read(f"/proc/{host}/mem"),
        "list /proc": lambda: list_proc(host),
        "write outside tmp": lambda: write(t["outside"]),
        "SIGKILL parent": lambda: os.kill(parent, signal.SIGKILL),
        "SIGSTOP parent": lambda: os.kill(parent, signal.SIGSTOP),
        "SIGKILL host": lambda: os.kill(host, signal.SIGKILL),
        "SIGSTOP host": lambda: os.kill(host, signal.SIGSTOP),
        "ptrace parent": lambda: libc_call("ptrace", PTRACE_ATTACH, parent, 0, 0),
        "ptrace host": lambda: libc_call("ptrace", PTRACE_ATTACH, host, 0, 0),
        "tcp connect": lambda: tcp(t["tcp_port"]),
        "udp send": lambda: udp(t["udp_port"]),
        "unix connect": lambda: unix(socket.SOCK_STREAM, t["unix_stream"]),
        "unix datagram": lambda: unix(socket.SOCK_DGRAM, t["unix_datagram"]),
        "unshare user": lambda: libc_call("unshare", CLONE_NEWUSER),
        "setuid 0": lambda: os.setuid(0),
        "setsid": lambda: in_child(os.setsid),
        "fork bomb": lambda: fork_bomb(t["max_processes"]),
        "memory": lambda: len(bytearray(t["memory_mb"] * 2 << 20)) and "allocated",
        "write tmp": lambda: write(os.path.join(os.environ["TMPDIR"], "mine")),
    })
    results = {name: outcome(attempt) for name, attempt in escapes.items()}
    results["uid"] = os.getuid()
    leave_grandchild(t["marker"])
    print(json.dumps(results), flush=True)
    sys.stdin.readline()


if __name__ == "__main__":
    main()
