#!/usr/bin/env bash
# npm test: the whole suite against the real PostgreSQL and Redis (each run gets its own database and key prefix).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
exec npx vitest run "$@"
