#!/usr/bin/env bash
# Installs what this project needs and is missing, on Debian: a JDK 17 and Maven, PMDK,
# the PostgreSQL server binaries (tests start their own server), Python venv support, Slurm
# and munge (the multi-host tests start their own slurmctld, slurmds and munged), iproute2 and
# util-linux (namespace hosts), bubblewrap and libseccomp2 (confined execution environments), and
# redis-server (benchmarks/peers.py compares against Redis), headless Chromium and its WebDriver
# (tests/test_dashboard_browser.py drives `dataclay dashboard` in it); Prometheus' server, unpacked from
# Debian's package into .deps/ and never installed as a service (tests/test_prometheus_scrape.py
# scrapes a cluster with it); then a virtualenv at .venv with the Python requirements. Safe to run
# again.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

missing=()
javac -version 2>&1 | grep -q ' 17\.' || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
dpkg -s libpmemobj1 >/dev/null 2>&1 || missing+=(libpmemobj1)
dpkg -s libpmempool1 >/dev/null 2>&1 || missing+=(libpmempool1)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v python3 >/dev/null || missing+=(python3)
if command -v python3 >/dev/null && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then missing+=(python3-venv); fi
command -v runuser >/dev/null && command -v unshare >/dev/null && command -v setpriv >/dev/null \
  || missing+=(util-linux)
[ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || command -v ip >/dev/null || missing+=(iproute2)
[ -x /usr/sbin/slurmctld ] || missing+=(slurmctld)
[ -x /usr/sbin/slurmd ] || missing+=(slurmd)
command -v sbatch >/dev/null || missing+=(slurm-client)
[ -x /usr/sbin/munged ] || missing+=(munge)
command -v bwrap >/dev/null || missing+=(bubblewrap)
dpkg -s libseccomp2 >/dev/null 2>&1 || missing+=(libseccomp2)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Prometheus: the package's binaries only, unpacked here. Installing the package would start a
# Prometheus service on port 9090 and add a system user on a machine where none was asked for.
if [ ! -x .deps/prometheus/usr/bin/prometheus ]; then
  echo "unpacking Debian's prometheus into .deps/prometheus"
  scratch=$(mktemp -d)
  if ! (cd "$scratch" && apt-get download -qq prometheus >/dev/null 2>&1); then
    $sudo_cmd apt-get update -qq
    (cd "$scratch" && apt-get download -qq prometheus >/dev/null)
  fi
  mkdir -p .deps/prometheus
  dpkg-deb -x "$scratch"/prometheus_*.deb .deps/prometheus
  rm -rf "$scratch"
fi

python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed")'
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# requirements-dev.txt includes requirements.txt: a change to either installs again
if ! cat requirements.txt requirements-dev.txt | cmp -s - .venv/.requirements-installed; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  cat requirements.txt requirements-dev.txt > .venv/.requirements-installed
fi
