#!/bin/sh
# Slurm Epilog for dataClay jobs: erases what a job's dataClay servers left on this node when they
# could not erase it themselves (the job was killed with SIGKILL, a node lost its step, ...).
#
# Install on every compute node, in slurm.conf (or call it from the Epilog you have):
#     Epilog=/opt/dataclay/scripts/slurm-epilog.sh
# slurmd runs it after each job with SLURM_JOB_ID and SLURM_JOB_UID set. For each
# <pool dir>/dataclay-job<id>-* directory (the name `dataclay slurm` gives a node's pools) that the
# job's user owns, it overwrites every file with zeros, syncs and removes it, then removes the
# directory. It does so as the job's user, never as root: it cannot be led to erase anything that
# user could not. It prints one line per directory on standard output.
#
# POOL_DIRS: where jobs keep their pools (the DATACLAY_SLURM_POOLS the jobs use; default /dev/shm),
# space-separated: edit the line below if your jobs use another. Always exits 0: a failing Epilog
# would drain the node.
POOL_DIRS=${DATACLAY_EPILOG_POOL_DIRS:-/dev/shm}

job=${SLURM_JOB_ID:-}
uid=${SLURM_JOB_UID:-}
case "$job$uid" in
  ''|*[!0-9]*) echo "dataclay epilog: SLURM_JOB_ID and SLURM_JOB_UID must be numbers (job '$job', uid '$uid')"; exit 0 ;;
esac

as_user() {
  if [ "$(id -u)" = "$uid" ]; then
    "$@"
  else
    setpriv --reuid="$uid" --regid="$(id -g "$uid" 2>/dev/null || echo "$uid")" --clear-groups -- "$@"
  fi
}

found=0
for base in $POOL_DIRS; do
  for dir in "$base"/dataclay-job"$job"-*; do
    [ -d "$dir" ] && [ ! -L "$dir" ] || continue
    [ "$(stat -c %u "$dir")" = "$uid" ] || { echo "dataclay epilog: job $job: $dir is not the job user's: left"; continue; }
    found=1
    files=$(as_user find "$dir" -type f | wc -l)
    as_user find "$dir" -type f -exec shred --iterations=0 --zero --remove=unlink {} +
    as_user rm -rf "$dir"
    if [ -e "$dir" ]; then
      echo "dataclay epilog: job $job: $dir could NOT be erased completely"
    else
      echo "dataclay epilog: job $job: erased $dir ($files files overwritten with zeros, then removed)"
    fi
  done
done
[ "$found" = 1 ] || echo "dataclay epilog: job $job: nothing left to erase"
exit 0
