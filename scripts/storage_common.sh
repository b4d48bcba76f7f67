# Sourced (never run) by storage_init.sh and storage_stop.sh, COMPSs' storage scripts for dataClay:
# what both check and find in the same way.

# fail CODE MESSAGE: the message on standard error, prefixed with the script's name; exit CODE.
fail() { echo "${0##*/}: $2" >&2; exit "$1"; }

# check_arguments SYNOPSIS LEAST MOST ARG...: the arguments alone `usage` print the usage and exit 0;
# other than LEAST or MOST arguments, say so and exit 1 with the usage.
check_arguments() {
  local synopsis=$1 least=$2 most=$3
  shift 3
  if [ $# -eq 1 ] && [ "$1" = usage ]; then
    echo "Usage: $0 $synopsis"
    exit 0
  fi
  if [ $# -ne "$least" ] && [ $# -ne "$most" ]; then
    echo "${0##*/}: expected $least or $most arguments, got $#" >&2
    echo "Usage: $0 $synopsis"
    exit 1
  fi
}

# check_job JOB_ID: exits 1 unless JOB_ID is a number and this runs inside that Slurm job.
check_job() {
  case "$1" in ''|*[!0-9]*) fail 1 "the job id must be a number, not '$1'" ;; esac
  [ "${SLURM_JOB_ID:-}" = "$1" ] || fail 1 "not run inside Slurm job $1 (SLURM_JOB_ID is '${SLURM_JOB_ID:-}')"
}

# find_dataclay JOB_ID: sets `dataclay` (DATACLAY_CMD, else `dataclay` on PATH, else the storage
# home's .venv; exits 3 when none runs) and `job_dir` (where `dataclay slurm` keeps the job's files).
find_dataclay() {
  local storage_home
  storage_home=$(cd "$(dirname "$0")/.." && pwd)
  dataclay=${DATACLAY_CMD:-$(command -v dataclay || echo "$storage_home/.venv/bin/dataclay")}
  [ -x "$dataclay" ] || fail 3 "the dataclay command is not on PATH (nor in $storage_home/.venv/bin): load dataClay's environment first"
  job_dir="${DATACLAY_SLURM_DIR:-$HOME/.dataclay/slurm}/$1"
}
