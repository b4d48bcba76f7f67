#!/bin/bash
# COMPSs' storage_stop.sh for dataClay: stops the cluster storage_init.sh started for the job.
#
#   storage_stop.sh <job id> <master node> <storage master node> "<worker nodes>" <network> [<storage props>]
#
# `enqueue_compss --storage_home=DIR` runs DIR/scripts/storage_stop.sh in the job after the
# application (newer COMPSs versions add the storage properties file). It exports the objects
# first when the properties of storage_init.sh said DATACLAY_EXPORT, stops every server cleanly,
# and erases the pools on every node and the job's credentials, the storage configuration included.
#
# Exit codes: 0 stopped and erased; 1 wrong arguments; 3 something was not stopped or not erased
# (the message says what; scripts/slurm-epilog.sh erases what is left when the job ends).
set -u

source "$(dirname "$0")/storage_common.sh"

check_arguments "<job id> <master node> <storage master node> \"<worker nodes>\" <network> [<storage props>]" 5 6 "$@"
job_id=$1
check_job "$job_id"

find_dataclay "$job_id"
"$dataclay" slurm stop --job-dir "$job_dir" || fail 3 "the dataClay cluster of job $job_id was not stopped and erased completely"
echo "storage_stop.sh: job $job_id: dataClay stopped, pools and credentials erased"
exit 0
