"""A stand-in for the Data Service in test_sandbox_escapes.py (standard library only; it runs as root
or as an unprivileged user): it listens on TCP, UDP and UNIX sockets, starts one execution environment
through the launcher, and prints one JSON line on what happened.

    host.py CONFIG_JSON    with "action":
      escape  send the targets to hostile.py, collect its outcomes and whatever reached the sockets,
              then kill the sandbox as a Data Service does (the process, and its group outside bwrap)
              and report which of its processes are left
      run     send "stdin", report standard output and error, the exit status and the startup time
      orphan  start hostile.py, print its pid and marker, then wait to be killed (SIGKILL)"""
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

DEADLINE = 30


def listeners(work):
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind(os.path.join(work, "ds.sock"))
    stream.listen()
    datagram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    datagram.bind(os.path.join(work, "dg.sock"))
    for s in (tcp, udp, stream, datagram):
        s.setblocking(False)
    return {"tcp": tcp, "udp": udp, "unix_stream": stream, "unix_datagram": datagram}


def reached(sockets):
    """The sockets something arrived on (a connection or a datagram)."""
    got = []
    for name, s in sockets.items():
        try:
            s.accept() if s.type == socket.SOCK_STREAM else s.recv(64)
            got.append(name)
        except BlockingIOError:
            pass
    return got


def marked(marker):
    """Pids of processes running `sleep MARKER`."""
    pids = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if f.read() == f"sleep\0{marker}\0".encode():
                    pids.append(int(name))
        except (OSError, ValueError):
            pass
    return pids


def line(stream, deadline):
    """One line from a pipe, or "" at end of file or deadline."""
    data = b""
    while not data.endswith(b"\n") and time.monotonic() < deadline:
        if select.select([stream], [], [], max(0.0, deadline - time.monotonic()))[0]:
            chunk = os.read(stream.fileno(), 1)
            if not chunk:
                break
            data += chunk
    return data.decode()


def ended(stream, deadline):
    """True once every writer of the pipe is gone (end of file) before the deadline."""
    while time.monotonic() < deadline:
        if select.select([stream], [], [], max(0.0, deadline - time.monotonic()))[0]:
            if not os.read(stream.fileno(), 65536):
                return True
    return False


def main():
    config = json.loads(sys.argv[1])
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/"), **config.get("env", {})}
    argv = [*config["launcher"], *config["options"], "--", *config["command"]]
    start = time.monotonic()
    ee = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = start + DEADLINE
    report = {"pid": ee.pid}
    if config["action"] == "run":
        ee.stdin.write(config.get("stdin", "").encode())
        ee.stdin.flush()
        first = line(ee.stdout, deadline)
        report["startup_ms"] = round((time.monotonic() - start) * 1000, 1)
        out, err = ee.communicate(timeout=DEADLINE)
        report.update(stdout=first + out.decode(), stderr=err.decode(), status=ee.returncode)
        print(json.dumps(report), flush=True)
        return
    sockets = listeners(config["work"])
    targets = {**config["targets"], "host_pid": os.getpid(), "marker": config["marker"],
               "tcp_port": sockets["tcp"].getsockname()[1], "udp_port": sockets["udp"].getsockname()[1],
               "unix_stream": sockets["unix_stream"].getsockname(),
               "unix_datagram": sockets["unix_datagram"].getsockname()}
    ee.stdin.write((json.dumps(targets) + "\n").encode())
    ee.stdin.flush()
    results = line(ee.stdout, deadline)
    report["outcomes"] = json.loads(results) if results else None
    report["reached"] = reached(sockets)
    report["leftovers_before"] = marked(config["marker"])
    if config["action"] == "orphan":
        print(json.dumps(report), flush=True)
        time.sleep(DEADLINE)
        return
    if config["bwrap"]:
        os.kill(ee.pid, signal.SIGKILL)  # bwrap: its pid namespace goes with it
    else:
        os.killpg(ee.pid, signal.SIGKILL)  # the process group the launcher made, which nothing left
    ee.wait()
    report["output_closed"] = ended(ee.stdout, time.monotonic() + 3)
    report["leftovers"] = marked(config["marker"])
    report["stderr"] = ee.stderr.read().decode()
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
