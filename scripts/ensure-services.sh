#!/usr/bin/env bash
# Makes sure PostgreSQL and Redis answer on their default local ports. Where the machine has the
# packages installed but the servers are stopped, it starts them; otherwise it says in one line how.
set -u
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }

if ! pg_up && command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  echo "starting the local PostgreSQL…"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | tail -n 1)" main start >/dev/null 2>&1 || true
  for _ in $(seq 1 30); do pg_up && break; sleep 0.5; done
fi
if ! redis_up && command -v redis-server >/dev/null 2>&1; then
  echo "starting the local Redis…"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null 2>&1 || true
  for _ in $(seq 1 30); do redis_up && break; sleep 0.2; done
fi

missing=""
pg_up || missing="PostgreSQL on 127.0.0.1:5432"
redis_up || missing="${missing:+$missing and }Redis on 127.0.0.1:6379"
if [ -n "$missing" ]; then
  echo "Cannot reach $missing: start them with 'docker compose up -d postgres redis' or install the local packages (apt-get install postgresql redis-server)." >&2
  exit 1
fi
