#!/usr/bin/env bash
# Installs Patroni, etcd and HAProxy from the Debian packages when one is missing: the PostgreSQL
# failover runs (npm run topologies:postgres) start a cluster of their own from them. Never skipped:
# without them they fail.
set -euo pipefail
have() { command -v patroni >/dev/null 2>&1 && command -v etcd >/dev/null 2>&1 && { command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; }; }
have && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "patroni, etcd or haproxy is missing: run 'sudo apt-get install -y patroni etcd-server haproxy' (or this script as root)" >&2
  exit 1
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends patroni etcd-server haproxy >/dev/null
# The packages may start services of their own (etcd on 2379, HAProxy): the runs start theirs on free ports instead.
for service in etcd haproxy patroni; do
  systemctl disable --now "$service" >/dev/null 2>&1 || service "$service" stop >/dev/null 2>&1 || true
done
have
