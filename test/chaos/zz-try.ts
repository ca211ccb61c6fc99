const { runRedisLoss, describeRedisLoss } = await import('/work/wt/queue-platform/test/chaos/redis-loss.js');
const own = await import('/work/wt/queue-platform/test/chaos/own-processes.js');
try {
  const f = await runRedisLoss({ databaseUrl: process.env.DATABASE_URL!, beforeMs: 3000, outageMs: 15000, afterMs: 3000, deadlineMs: 60_000, strandedEvents: 10000, workersPerRole: Number(process.env.WPR ?? 1) });
  console.log(describeRedisLoss(f));
} finally {
  const { execSync } = await import('node:child_process');
  execSync('rm -rf /tmp/chaos-logs && mkdir -p /tmp/chaos-logs && for d in /tmp/floorline-chaos-*; do cp -r $d /tmp/chaos-logs/; done');
  await own.endAll();
  const { sql } = await import('/work/wt/queue-platform/src/db/client.js');
  await sql.end();
}
