#!/usr/bin/env bash
# Builds and runs the store engine micro-benchmark (issue 3) in one command: every engine
# (memory, kv, heap, 2lm, postgres), pools under /dev/shm with PMEM_IS_PMEM_FORCE=1, and a
# throw-away PostgreSQL 15 server (fsync on) started here as user postgres in a temp directory.
# The server, its directory and the pools are removed at the end, also when the run fails or is
# interrupted. Extra arguments go to the benchmark (e.g. --scale=0.2 for a quick run); JAVA_OPTS
# replaces the JVM options, PMEMOBJ_CONF the PMDK settings.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
pg_bin="${PG_BIN:-/usr/lib/postgresql/15/bin}"
# A fixed, pre-touched heap: without pre-touching, the first pass of allocation over a fresh young
# generation page-faults every 4 KiB page (several us each on this VM) inside the timed rounds.
java_opts="${JAVA_OPTS:--Xms6g -Xmx6g -Xmn3g -XX:+AlwaysPreTouch}"
# PMDK pre-faults each pool when it is created and opened, for the same reason: a put into a fresh
# tmpfs pool would otherwise pay the kernel's first touch of every page it writes.
pmem_conf="${PMEMOBJ_CONF:-prefault.at_create=1;prefault.at_open=1}"

pg_dir=""
pools=""
pg_running=0
java_pid=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$java_pid" ] && kill -0 "$java_pid" 2>/dev/null; then
    kill "$java_pid" 2>/dev/null || true
    wait "$java_pid" 2>/dev/null || true
  fi
  if [ "$pg_running" = 1 ]; then
    runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 \
      || runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  [ -n "$pg_dir" ] && rm -rf "$pg_dir"
  [ -n "$pools" ] && rm -rf "$pools"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$(id -u)" != 0 ] && [ "$(id -un)" != postgres ]; then
  echo "run.sh: run as root (PostgreSQL is started as user postgres with runuser)" >&2
  exit 2
fi
[ -x "$pg_bin/initdb" ] || { echo "run.sh: PostgreSQL server binaries not found in $pg_bin (set PG_BIN)" >&2; exit 2; }

echo "building ..." >&2
(cd "$here" && { mvn -q -B -Dstyle.color=never -o package || mvn -q -B -Dstyle.color=never package; }) >&2

pools="$(mktemp -d /dev/shm/dataclay-bench-engines-XXXXXX)"
pg_dir="$(mktemp -d /tmp/dataclay-bench-pg-XXXXXX)"   # on the root file system, not tmpfs: fsync means something
mkdir "$pg_dir/sock"
chown -R postgres:postgres "$pg_dir"

echo "starting PostgreSQL in $pg_dir ..." >&2
# --no-sync only skips initdb's own flush of the new cluster; the server runs with fsync on.
runuser -u postgres -- "$pg_bin/initdb" -D "$pg_dir/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
port=""
for attempt in 1 2 3 4 5; do
  candidate=$(( 20000 + RANDOM % 40000 ))
  if (: </dev/tcp/127.0.0.1/"$candidate") 2>/dev/null; then
    continue # something listens there already
  fi
  if runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
      -o "-p $candidate -k $pg_dir/sock -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on" \
      start >/dev/null; then
    port="$candidate"
    pg_running=1
    break
  fi
done
if [ -z "$port" ]; then
  echo "run.sh: PostgreSQL did not start; its log:" >&2
  cat "$pg_dir/server.log" >&2 || true
  exit 1
fi
"$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U postgres enginebench

echo "running the benchmark (about 5 minutes) ..." >&2
# shellcheck disable=SC2086  # java_opts is a list of options
PMEM_IS_PMEM_FORCE=1 PMEMOBJ_CONF="$pmem_conf" java $java_opts -jar "$here/target/engines-benchmark.jar" \
  --pool-dir="$pools" --postgres-url="jdbc:postgresql://127.0.0.1:$port/enginebench?user=postgres" "$@" &
java_pid=$!
set +e
wait "$java_pid"
status=$?
set -e
java_pid=""
exit "$status"
