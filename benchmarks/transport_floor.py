#!/usr/bin/env python
"""The floor a Python client's call stands on, by transport (issue 25): what the round trip alone
costs, with no dataClay code on either side.

One Java process (benchmarks/java/TransportFloor.java, compiled here against the Data Service's
jar, so on the same grpc-java and Netty) echoes a message three ways, answering from the network
thread that read it, as the Data Service answers a read from its store. Each message is a protobuf
BytesValue that both sides serialize and parse, as they do a call's request and answer:
- gRPC unary: grpcio's blocking unary call, as every pmclay call is made today;
- gRPC stream: one message written and one read on a bidirectional stream opened once (grpcio's
  synchronous stream, fed from a queue);
- framed socket: a plain TCP socket (TCP_NODELAY), each message in a frame: a 4-byte length, then it.

The three take turns in rounds from one client process. Prints, per transport, the p50 and p99 of
each round and the CPU per call of the client, split into the calling thread and the client's
other threads (grpcio's own; the client runs, as pmclay's does, without gRPC's EventEngine client,
so a unary call does its socket I/O on the calling thread), and of the server JVM (all from
/proc). A pmclay read served from the store (`counter.value`) costs about the gRPC
unary row plus the Data Service's own work; compare peers.py's Redis rows for what a
Redis-with-pickle client pays on a socket."""
from __future__ import annotations

import argparse
import os
import pathlib
import queue
import socket
import struct
import subprocess
import sys
import tempfile
import threading

# as pmclay's client does (dataclay/_internal/__init__.py): without gRPC's EventEngine client, which
# makes every unary call slower; it must be set before grpc is first imported
os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_client")

import grpc  # noqa: E402
from google.protobuf.wrappers_pb2 import BytesValue  # noqa: E402

from _cpu_time import cpu_seconds, thread_seconds  # noqa: E402
from _timing import p50_p99, timed  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
JAR = REPO / "pyclay" / "dataclay" / "_internal" / "jars" / "dataservice.jar"
SOURCE = REPO / "benchmarks" / "java" / "TransportFloor.java"


def start_server(classes: pathlib.Path) -> tuple[subprocess.Popen, int, int]:
    """The echo server, compiled into `classes` and started; (process, gRPC port, framed port)."""
    subprocess.run(["javac", "-d", str(classes), "-cp", str(JAR), str(SOURCE)], check=True)
    server = subprocess.Popen(["java", "-cp", f"{classes}{os.pathsep}{JAR}", "TransportFloor"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline().split()
    if len(line) < 3 or line[0] != "ports":
        server.kill()
        raise SystemExit(f"TransportFloor did not start (it printed {line!r})")
    return server, int(line[1]), int(line[2])


class FramedSocket:
    """A blocking socket client of the framed echo: one frame out, one frame back."""

    def __init__(self, port: int):
        self._socket = socket.create_connection(("127.0.0.1", port))
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._header = bytearray(4)

    def call(self, message: BytesValue) -> BytesValue:
        body = message.SerializeToString()
        self._socket.sendall(struct.pack(">I", len(body)) + body)
        self._read_into(memoryview(self._header))
        answer = bytearray(struct.unpack(">I", self._header)[0])
        self._read_into(memoryview(answer))
        return BytesValue.FromString(answer)

    def _read_into(self, view: memoryview) -> None:
        while view:
            got = self._socket.recv_into(view)
            if not got:
                raise ConnectionError("the echo server closed the connection")
            view = view[got:]

    def close(self) -> None:
        self._socket.close()


class GrpcStream:
    """One bidirectional stream, opened once: each call writes a message and reads the answer."""

    def __init__(self, channel: grpc.Channel):
        self._outgoing: queue.SimpleQueue = queue.SimpleQueue()
        self._answers = channel.stream_stream("/echo.Echo/Stream", request_serializer=BytesValue.SerializeToString,
                                              response_deserializer=BytesValue.FromString)(
            iter(self._outgoing.get, None))

    def call(self, message: BytesValue) -> BytesValue:
        self._outgoing.put(message)
        return next(self._answers)

    def close(self) -> None:
        self._outgoing.put(None)
        self._answers.cancel()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20000, help="measured calls per transport and round")
    parser.add_argument("--warmup", type=int, default=20000, help="unmeasured calls per transport first")
    parser.add_argument("--rounds", type=int, default=5, help="turns each transport takes")
    parser.add_argument("--size", type=int, default=64, help="bytes each message carries (a GetField request is ~60-90)")
    args = parser.parse_args()
    if min(args.n, args.rounds, args.size) < 1 or args.warmup < 0:
        parser.error("-n, --rounds and --size must be positive, --warmup not negative")

    print(f"CPUs available: {len(os.sched_getaffinity(0))}, load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    message = BytesValue(value=os.urandom(args.size))
    with tempfile.TemporaryDirectory(prefix="transport-floor-") as classes:
        server, grpc_port, framed_port = start_server(pathlib.Path(classes))
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        unary = channel.unary_unary("/echo.Echo/Unary", request_serializer=BytesValue.SerializeToString,
                                    response_deserializer=BytesValue.FromString, _registered_method=True)
        stream = GrpcStream(channel)
        framed = FramedSocket(framed_port)
        transports = {"gRPC unary": unary, "gRPC stream": stream.call, "framed socket": framed.call}
        try:
            for call in transports.values():
                for _ in range(args.warmup):
                    if call(message) != message:
                        raise SystemExit("the echo server answered something else")
            rows = {name: {"rounds": [], "caller": 0.0, "others": 0.0, "server": 0.0} for name in transports}
            caller = threading.get_native_id()
            for number in range(args.rounds):
                order = list(transports.items())
                order = order[number % len(order):] + order[:number % len(order)]
                for name, call in order:
                    threads, served = thread_seconds(os.getpid()), cpu_seconds(server.pid)
                    samples = timed(lambda: call(message), args.n)
                    spent = thread_seconds(os.getpid())
                    for thread, seconds in spent.items():
                        rows[name]["caller" if thread == caller else "others"] += seconds - threads.get(thread, 0.0)
                    rows[name]["server"] += cpu_seconds(server.pid) - served
                    rows[name]["rounds"].append(p50_p99(samples))
        finally:
            stream.close()
            framed.close()
            channel.close()
            server.stdin.close()
            server.wait(timeout=30)

    calls = args.n * args.rounds
    print(f"messages of {args.size} bytes, n = {args.n} per round after {args.warmup} unmeasured, {args.rounds} rounds")
    print(f"{'transport':<14} {'p50 us by round':<36} {'p99 us by round':<40} "
          "CPU us/call: client (calling thread + others)  server")
    for name, row in rows.items():
        p50s = " ".join(f"{p50 * 1e6:5.0f}" for p50, _ in row["rounds"])
        p99s = " ".join(f"{p99 * 1e6:6.0f}" for _, p99 in row["rounds"])
        caller_us, others_us = row["caller"] / calls * 1e6, row["others"] / calls * 1e6
        print(f"{name:<14} {p50s:<36} {p99s:<40} {caller_us + others_us:19.0f} ({caller_us:5.0f} + {others_us:4.0f})"
              f" {row['server'] / calls * 1e6:20.0f}")
    unary_p50 = sorted(p50 for p50, _ in rows["gRPC unary"]["rounds"])[args.rounds // 2]
    for name in ("gRPC stream", "framed socket"):
        p50 = sorted(p50 for p50, _ in rows[name]["rounds"])[args.rounds // 2]
        print(f"median p50 {name} / gRPC unary: x{p50 / unary_p50:.2f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
