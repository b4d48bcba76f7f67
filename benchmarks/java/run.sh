#!/usr/bin/env bash
# Java client latency benchmark: a fresh local cluster (2 backends, engine $STORE, default kv),
# the Java wordcount model registered, JavaLatency run, the cluster stopped and removed.
# Needs `make build` first. Usage: benchmarks/java/run.sh [calls] [objects] [rounds]
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/.venv/bin:$PATH"
export DATACLAY_HOME="${DATACLAY_HOME:-$PWD/build/bench-java}"
export DATACLAY_STORE_PATH="${DATACLAY_STORE_PATH:-/dev/shm/dataclay-bench-java-$(id -un)}"
export DATACLAY_STORE_SIZE="${DATACLAY_STORE_SIZE:-1G}"
STORE="${STORE:-kv}"
source scripts/throwaway-cluster.sh

mvn -q -B -f examples/java-wordcount/pom.xml clean package
classpath="examples/java-wordcount/target/classes:examples/java-wordcount/target/lib/*"
out="$DATACLAY_HOME/bench-classes"
# the home must be private (dataclay start refuses one group or others may reach): create it so
# before the client's classes go into it, or mkdir -p would leave it 0755 under the usual umask
mkdir -p -m 700 "$DATACLAY_HOME" "$out"
dataclay start --backends 2 --store "$STORE" >/dev/null
user=$(sed -n 's/^DATACLAY_USER=//p' "$DATACLAY_HOME/client.properties")
dataclaycmd WaitForBackends java 2 >/dev/null
dataclaycmd NewModel "$user" - jwordcount examples/java-wordcount/target/classes java >/dev/null
javac -d "$out" -cp "$classpath" benchmarks/java/JavaLatency.java
# JAVA_OPTS: extra JVM options for the client, e.g. -XX:StartFlightRecording=filename=client.jfr
# shellcheck disable=SC2086
java ${JAVA_OPTS:-} -cp "$out:$classpath" JavaLatency "$@"
