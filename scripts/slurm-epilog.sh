#!/bin/sh
# Slurm Epilog for dataClay jobs: erases what a job's dataClay servers left on this node when they
# could not erase it themselves (the job was killed with SIGKILL, a node lost its step, ...), and
# any directory someone else made under the job's name.
#
# Install on every compute node, in slurm.conf (or call it from the Epilog you have):
#     Epilog=/opt/dataclay/scripts/slurm-epilog.sh
# slurmd runs it as root after each job with SLURM_JOB_ID and SLURM_JOB_UID set. `dataclay slurm`
# names a node's pools <pool dir>/dataclay-job<id>-<node>-<random tag>. For each such directory of
# this node (SLURMD_NODENAME), and each <pool dir>/dataclay-job<id>-* directory its user does not
# own, it overwrites every file with zeros, syncs and removes it, then removes the directory. The
# job user's directories of other nodes are left to those nodes' Epilogs: on a pool directory that
# nodes share, such a node may still be stopping, and its servers erasing, when this one ends. It
# erases as the directory's owner (setpriv), not as root unless root owns it: a link, or a file
# swapped for one meanwhile, cannot lead it to erase anything that owner could not. A directory
# the job's user does not own was made by another user (a job never writes to one: it refuses it);
# it is erased too, so that nothing named after the job outlives it. One line per directory on
# standard output.
#
# POOL_DIRS: where jobs keep their pools (the DATACLAY_SLURM_POOLS the jobs use; default /dev/shm),
# space-separated: edit the line below if your jobs use another. Always exits 0: a failing Epilog
# would drain the node.
POOL_DIRS=${DATACLAY_EPILOG_POOL_DIRS:-/dev/shm}

job=${SLURM_JOB_ID:-}
uid=${SLURM_JOB_UID:-}
node=${SLURMD_NODENAME:-}
case "$job$uid" in
  ''|*[!0-9]*) echo "dataclay epilog: SLURM_JOB_ID and SLURM_JOB_UID must be numbers (job '$job', uid '$uid')"; exit 0 ;;
esac

# as_owner UID COMMAND...: runs COMMAND as user UID (its primary group, no other group)
as_owner() {
  owner=$1
  shift
  if [ "$(id -u)" = "$owner" ]; then
    "$@"
  else
    setpriv --reuid="$owner" --regid="$(id -g "$owner" 2>/dev/null || echo "$owner")" --clear-groups -- "$@"
  fi
}

found=0
for base in $POOL_DIRS; do
  for dir in "$base"/dataclay-job"$job"-*; do
    [ -d "$dir" ] && [ ! -L "$dir" ] || continue
    owner=$(stat -c %u "$dir")
    if [ "$owner" = "$uid" ]; then
      if [ -n "$node" ]; then
        tag=${dir##*/dataclay-job"$job"-"$node"-}
        case "$tag" in
          "$dir"|*-*|*/*|'') continue ;;  # another node's (a node named <node>-x is another node)
        esac
      fi
      whose="the job's"
    else
      whose="owned by uid $owner, not the job's user: made by someone else"
    fi
    found=1
    as_owner "$owner" chmod -R u+rwX "$dir" 2>/dev/null  # one made unreadable is still emptied
    files=$(as_owner "$owner" find "$dir" -type f | wc -l)
    as_owner "$owner" find "$dir" -type f -exec shred --iterations=0 --zero --remove=unlink {} +
    as_owner "$owner" rm -rf "$dir"
    if [ -e "$dir" ] || [ -L "$dir" ]; then
      echo "dataclay epilog: job $job: $dir ($whose) could NOT be erased completely"
    else
      echo "dataclay epilog: job $job: erased $dir ($whose; $files files overwritten with zeros, then removed)"
    fi
  done
done
[ "$found" = 1 ] || echo "dataclay epilog: job $job: nothing left to erase${node:+ on $node}"
exit 0
