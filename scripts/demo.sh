#!/usr/bin/env bash
# `make demo`: a fresh local cluster on the embedded defaults (Logic Module with its embedded
# metadata database, two backends with the kv engine on a pool under /dev/shm), the wordcount
# model registered, the NEXTGenIO wordcount example run in Python (COMPSs-style, with its tasks on
# forked worker processes) and in Java, the cluster stopped and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATACLAY_HOME="${DATACLAY_HOME:-$PWD/build/demo}"
export DATACLAY_STORE_PATH="${DATACLAY_STORE_PATH:-/dev/shm/dataclay-demo-$(id -un)}"
export DATACLAY_STORE_SIZE="${DATACLAY_STORE_SIZE:-512M}"

source scripts/throwaway-cluster.sh

dataclay start --backends 2 --store kv
user=$(sed -n 's/^DATACLAY_USER=//p' "$DATACLAY_HOME/client.properties")
dataclaycmd WaitForBackends python 2
dataclaycmd NewModel "$user" - wordcount examples/wordcount/model python
dataclaycmd GetStubs "$user" - wordcount "$DATACLAY_HOME/stubs"
dataclay status

export PYTHONPATH="$DATACLAY_HOME/stubs${PYTHONPATH:+:$PYTHONPATH}"
python examples/wordcount/prepare.py --texts 8 --size 256K
# The COMPSs-style wordcount: its @task functions run on 2 forked worker processes of the local
# stand-in for the COMPSs runtime (storage.local_runtime), driving storage.api as COMPSs workers do.
python examples/wordcount/wordcount.py Words --workers 2

# The same model in Java, beside the Python one: built with Maven, registered, run from a JVM.
mvn -q -B -Dstyle.color=never -f examples/java-wordcount/pom.xml clean package
dataclaycmd WaitForBackends java 2
dataclaycmd NewModel "$user" - jwordcount examples/java-wordcount/target/classes java
jcp="examples/java-wordcount/target/classes:examples/java-wordcount/target/lib/*"
java -cp "$jcp" wordcount.WordCount prepare JWords 8 262144
java -cp "$jcp" wordcount.WordCount count JWords
