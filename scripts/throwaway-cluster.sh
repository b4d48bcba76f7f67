# Sourced (never run) by the scripts that use a throwaway local cluster, with DATACLAY_HOME and
# DATACLAY_STORE_PATH set: stops whatever cluster ran from that home before, erases the home and
# the pools, and does the same again when the sourcing script exits, however it exits.
cleanup() {
  dataclay stop || true
  rm -rf "$DATACLAY_HOME" "$DATACLAY_STORE_PATH"
}
dataclay stop >/dev/null 2>&1 || true
rm -rf "$DATACLAY_HOME" "$DATACLAY_STORE_PATH"
trap cleanup EXIT
