#!/bin/bash
# COMPSs' storage_init.sh for dataClay: starts a dataClay cluster on the nodes of the Slurm job.
#
#   storage_init.sh <job id> <master node> <storage master node> "<worker nodes>" <network> <storage props> [<variables file>]
#
# `enqueue_compss --storage_home=DIR --storage_props=FILE ...` runs DIR/scripts/storage_init.sh in
# the job before the application, with these arguments, then launch_compss with
# --storage_conf=$HOME/.COMPSs/<job id>/storage/cfgfiles/storage.properties: this script writes that
# file (mode 0600): the client configuration `storage.api.init` and `StorageItf.init` read.
# The Logic Module runs on the storage master node and a backend on each worker node (on the master
# node when the job has no worker node). Newer COMPSs versions add a 7th argument, a file the job
# sources afterwards: it gets DATACLAY_HOME, so `dataclaycmd` in the job script reaches the cluster.
#
# <storage props>: KEY=VALUE lines ('#' comments; read, never executed), all optional:
#   DATACLAY_STORE (kv), DATACLAY_STORE_SIZE (1G), DATACLAY_SLURM_POOLS (/dev/shm),
#   DATACLAY_IMPORT (a snapshot directory to load), DATACLAY_IMPORT_ALLOW (what that import may do,
#   as `dataclay import --allow`), DATACLAY_IMPORT_TRUST (a public key it trusts besides yours, as
#   `--trust`; one line per key), DATACLAY_EXPORT (where to save the objects at the end),
#   DATACLAY_START_TIMEOUT (seconds, 180), and DATACLAY_MODEL=NAMESPACE:LANGUAGE:PATH (a model to
#   register once the cluster is up, LANGUAGE python or java; one line per model).
# <network>: ethernet or data (host names as they are), infiniband (host names + "-ib0").
#
# Exit codes: 0 the cluster is up and the configuration is written; 1 wrong arguments; 2 the storage
# properties file is missing or malformed; 3 the cluster did not start (the message says why).
set -u

source "$(dirname "$0")/storage_common.sh"

check_arguments "<job id> <master node> <storage master node> \"<worker nodes>\" <network> <storage props> [<variables file>]" \
  6 7 "$@"
job_id=$1; master_node=$2; storage_master_node=${3:-$2}; worker_nodes=$4; network=$5; props=$6
variables=${7:-}

check_job "$job_id"
[ -n "$master_node" ] || fail 1 "the master node is empty"
case "$network" in
  ethernet|data) suffix="" ;;
  infiniband) suffix="-ib0" ;;
  *) fail 1 "network must be ethernet, infiniband or data, not '$network'" ;;
esac
[ -f "$props" ] && [ -r "$props" ] || fail 2 "storage properties file '$props' does not exist or cannot be read"

options=()
line_no=0
while IFS= read -r line || [ -n "$line" ]; do
  line_no=$((line_no + 1))
  line=${line#"${line%%[![:space:]]*}"}; line=${line%"${line##*[![:space:]]}"}
  case "$line" in ''|'#'*) continue ;; esac
  key=${line%%=*}; value=${line#*=}
  [ "$key" != "$line" ] || fail 2 "$props:$line_no: expected KEY=VALUE, found '$line'"
  case "$key" in
    DATACLAY_STORE) options+=(--store "$value") ;;
    DATACLAY_STORE_SIZE) options+=(--pool-size "$value") ;;
    DATACLAY_SLURM_POOLS) options+=(--pool-dir "$value") ;;
    DATACLAY_IMPORT) options+=(--import "$value") ;;
    DATACLAY_IMPORT_ALLOW) options+=(--import-allow "$value") ;;
    DATACLAY_IMPORT_TRUST) options+=(--import-trust "$value") ;;
    DATACLAY_EXPORT) options+=(--export "$value") ;;
    DATACLAY_START_TIMEOUT) options+=(--timeout "$value") ;;
    DATACLAY_MODEL) options+=(--model "$value") ;;
    *) fail 2 "$props:$line_no: unknown key '$key' (known: DATACLAY_STORE, DATACLAY_STORE_SIZE, DATACLAY_SLURM_POOLS, DATACLAY_IMPORT, DATACLAY_IMPORT_ALLOW, DATACLAY_IMPORT_TRUST, DATACLAY_EXPORT, DATACLAY_START_TIMEOUT, DATACLAY_MODEL)" ;;
  esac
done < "$props"

find_dataclay "$job_id"

backends=$(echo $worker_nodes)   # COMPSs leaves extra spaces where it removed the master
[ -n "$backends" ] || backends=$storage_master_node
storage_conf="$HOME/.COMPSs/$job_id/storage/cfgfiles/storage.properties"

echo "storage_init.sh: job $job_id: Logic Module on $storage_master_node$suffix, backends on $backends (suffix '$suffix')"
"$dataclay" slurm start --job-dir "$job_dir" --lm-node "$storage_master_node" --backend-nodes "$backends" \
  --host-suffix="$suffix" --client-file "$storage_conf" "${options[@]}" \
  || fail 3 "the dataClay cluster did not start (see above and $job_dir/logs)"

if [ -n "$variables" ]; then
  printf "export DATACLAY_HOME='%s'\n" "$job_dir" >> "$variables"
fi
echo "storage_init.sh: storage configuration in $storage_conf"
exit 0
