#!/usr/bin/env bash
# npm test: typecheck, lint, format check, then the whole suite against the real PostgreSQL and Redis (each run gets its own database and key prefix).
set -uo pipefail
cd "$(dirname "$0")/.."
# The static gates first: a type error (vitest does not type-check) or a promise nobody awaits fails the run.
# To run a few test files alone: npx vitest run test/unit/x.test.ts.
# The three run side by side (each is one process on one core, and lint's type-aware rules take the
# longest), with the build of dist/ (the entry points the suite runs as processes of their own); their
# output is printed gate by gate, and the run stops if any failed.
gates="$(mktemp -d -t gates.XXXXXX)"
trap 'rm -rf "$gates"' EXIT
for gate in typecheck lint format:check build; do
  (npm run --silent "$gate" >"$gates/$gate.log" 2>&1; echo $? >"$gates/$gate.status") &
done
wait
failed=0
for gate in typecheck lint format:check build; do
  echo "npm run $gate"
  cat "$gates/$gate.log"
  [ "$(cat "$gates/$gate.status")" = 0 ] || failed=1
done
[ "$failed" = 0 ] || exit 1
bash scripts/ensure-services.sh || exit 1
report="$(mktemp -t vitest-report.XXXXXX.json)"
trap 'rm -rf "$gates" "$report"' EXIT
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
status=$?
# One plain closing line that any CI can read: "Tests: N passed, N failed, N skipped".
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`Tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$report" 2>/dev/null || true
exit $status
