"""One client process of a concurrency run (started by load.py): connects to one system, makes a
counter of its own, warms up, prints "ready", waits for a line on standard input, then calls one
operation for a fixed time and prints, as one JSON line, each call's time in µs and the CPU
seconds this process spent meanwhile.

    load_client.py SYSTEM ADDRESS KEY OP WARMUP SECONDS"""
import json
import sys
import time


def operations(system: str, address: str, key: str) -> dict:
    """The system's update / read / field functions on a counter of this client's own."""
    if system == "pmclay":
        from dataclay import api
        from pmclay_peer import pmclay_operations

        api.init()
        return pmclay_operations()
    if system == "redis":
        from redis_peer import redis_operations

        return redis_operations(int(address), key)
    if system == "zeo":
        from zodb_peer import counter_operations, zeo_connection

        return counter_operations(zeo_connection(int(address)), key)
    raise ValueError(f"no load client for {system}")


def main():
    system, address, key, op, warmup, seconds = sys.argv[1:7]
    fn = operations(system, address, key)[op]
    for _ in range(int(warmup)):
        fn()
    print("ready", flush=True)
    sys.stdin.readline()
    cpu, started = time.process_time(), time.perf_counter()
    end = started + float(seconds)
    samples = []
    t = started
    while t < end:
        fn()
        now = time.perf_counter()
        samples.append(round((now - t) * 1e6))
        t = now
    print(json.dumps({"samples": samples, "cpu": time.process_time() - cpu, "elapsed": t - started}), flush=True)


if __name__ == "__main__":
    main()
