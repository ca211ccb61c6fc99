#!/usr/bin/env bash
# Installs PgBouncer from the Debian packages when it is missing: the PostgreSQL topology tests
# (npm run topologies:postgres) start one of their own. Never skipped: without it they fail.
set -euo pipefail
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "pgbouncer is missing: run 'sudo apt-get install -y pgbouncer' (or this script as root)" >&2
  exit 1
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends pgbouncer >/dev/null
# The package starts its own service on 6432: the tests start theirs on free ports instead.
systemctl disable --now pgbouncer >/dev/null 2>&1 || service pgbouncer stop >/dev/null 2>&1 || true
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]
