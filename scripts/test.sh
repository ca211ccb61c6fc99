#!/usr/bin/env bash
# npm test: typecheck, lint, format check, then the whole suite against the real PostgreSQL and Redis (each run gets its own database and key prefix).
set -uo pipefail
cd "$(dirname "$0")/.."
# The static gates first: a type error (vitest does not type-check) or a promise nobody awaits fails the run.
# To run a few test files alone: npx vitest run test/unit/x.test.ts.
echo "npm run typecheck" && npm run typecheck || exit 1
echo "npm run lint" && npm run lint || exit 1
echo "npm run format:check" && npm run format:check || exit 1
bash scripts/ensure-services.sh || exit 1
report="$(mktemp -t vitest-report.XXXXXX.json)"
trap 'rm -f "$report"' EXIT
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
status=$?
# One plain closing line that any CI can read: "Tests: N passed, N failed, N skipped".
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`Tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$report" 2>/dev/null || true
exit $status
