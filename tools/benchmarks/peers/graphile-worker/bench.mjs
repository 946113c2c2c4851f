// Peer benchmark: graphile-worker draining no-op jobs, measured the way Mailroom's queue bench
// measures its runtime (tools/benchmarks CpuMeter): wall time of the drain, CPU of this Node process
// from /proc/self/stat, and CPU of the database's client backends from /proc/<pid>/stat (read
// before and after the drain; a backend first seen after counts from zero; the monitoring session
// itself is left out). Shared background processes (WAL writer, checkpointer...) are not counted,
// as in the Java bench.
//
// The jobs are added in bulk (graphile_worker.add_jobs, one call per chunk) before the clock starts;
// the drain runs from run() until the jobs table is empty (completions written), so batched
// completion is inside the window.
//
// Settings (environment, defaults = the configuration graphile-worker's "Performance" page gives):
//   DATABASE_URL       postgres://... of an empty database (scripts/bench-peers.sh makes one)
//   GW_MESSAGES        jobs to drain (100000)
//   GW_CONCURRENCY     preset.worker.concurrentJobs (24)
//   GW_POOL            preset.worker.maxPoolSize (25)
//   GW_LOCAL_QUEUE     preset.worker.localQueue.size (500; 0 = no local queue)
//   GW_COMPLETE_DELAY  preset.worker.completeJobBatchDelay (0; -1 = completion per job)
//   GW_FAIL_DELAY      preset.worker.failJobBatchDelay (0; -1 = per job)
//   GW_WARMUP          jobs drained first, untimed, so the JIT and the plans are warm (10000)
//   GW_OUTPUT          a file to write the result as JSON (optional)
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { createRequire } from "node:module";
import { Logger, run, runMigrations } from "graphile-worker";
import pg from "pg";

const require = createRequire(import.meta.url);
const gwVersion = require("graphile-worker/package.json").version;

const env = (name, dflt) => {
  const v = process.env[name];
  if (v === undefined || v === "") return dflt;
  const n = Number(v);
  if (!Number.isInteger(n)) {
    throw new Error(`${name} must be an integer, got '${v}'`);
  }
  return n;
};

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error("DATABASE_URL is not set");
const messages = env("GW_MESSAGES", 100000);
const warmup = env("GW_WARMUP", 10000);
const concurrency = env("GW_CONCURRENCY", 24);
const poolSize = env("GW_POOL", 25);
const localQueue = env("GW_LOCAL_QUEUE", 500);
const completeDelay = env("GW_COMPLETE_DELAY", 0);
const failDelay = env("GW_FAIL_DELAY", 0);
if (messages < 1) throw new Error("GW_MESSAGES must be at least 1");
if (poolSize < 2) throw new Error("GW_POOL must be at least 2");

const TICKS = 100; // USER_HZ: /proc/<pid>/stat counts in 1/100 s on Linux
const cpuNanos = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1e9) / TICKS; // utime + stime
  } catch {
    return null; // gone, or not on this host
  }
};

const monitor = new pg.Client({ connectionString });
await monitor.connect();
const monitorPid = (await monitor.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
const dbVisible = cpuNanos(monitorPid) !== null;

const backends = async () => {
  const { rows } = await monitor.query(
    `SELECT pid FROM pg_stat_activity
     WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`);
  const out = new Map();
  for (const { pid } of rows) {
    const n = cpuNanos(pid);
    if (n !== null) out.set(pid, n);
  }
  return out;
};

const preset = {
  worker: {
    connectionString,
    concurrentJobs: concurrency,
    maxPoolSize: poolSize,
    pollInterval: 2000,
    ...(localQueue > 0 ? { localQueue: { size: localQueue } } : {}),
    ...(completeDelay >= 0 ? { completeJobBatchDelay: completeDelay } : {}),
    ...(failDelay >= 0 ? { failJobBatchDelay: failDelay } : {}),
  },
};
// graphile-worker logs every start and stop at info: keep warnings and errors only
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") console.error(`graphile-worker ${level}: ${message}`);
});
preset.worker.logger = logger;

await runMigrations({ preset, logger });

const addJobs = async (n) => {
  const chunk = 10000;
  for (let done = 0; done < n; done += chunk) {
    await monitor.query(
      `SELECT count(*) FROM graphile_worker.add_jobs(array(
         SELECT json_populate_record(null::graphile_worker.job_spec,
                                     json_build_object('identifier', 'noop', 'payload', json_build_object('n', i)))
         FROM generate_series(1, $1) AS i))`, [Math.min(chunk, n - done)]);
  }
};
const jobsLeft = async () =>
  Number((await monitor.query("SELECT count(*) AS n FROM graphile_worker._private_jobs")).rows[0].n);

// one pool for both drains, opened in full before the clock starts (as the Java bench keeps its
// pools open), so connection start-up is not in the window
const pool = new pg.Pool({ connectionString, max: poolSize });
pool.on("error", (e) => console.error(`idle client error: ${e.message}`));
pool.on("connect", (client) => client.on("error", (e) => console.error(`client error: ${e.message}`)));
const held = await Promise.all(Array.from({ length: poolSize }, () => pool.connect()));
held.forEach((c) => c.release());

let handled = 0;
let target = 0;
let reached = null;
const taskList = {
  noop: async () => {
    handled++;
    if (handled === target && reached) reached();
  },
};

const drain = async (n) => {
  await addJobs(n);
  await monitor.query("VACUUM ANALYZE graphile_worker._private_jobs");
  handled = 0;
  target = n;
  const allHandled = new Promise((resolve) => { reached = resolve; });
  const cpuBefore = cpuNanos(process.pid);
  const pgBefore = dbVisible ? await backends() : new Map();
  const t0 = process.hrtime.bigint();
  const runner = await run({ preset, pgPool: pool, taskList, logger, noHandleSignals: true });
  await allHandled;
  while ((await jobsLeft()) > 0) {
    await new Promise((r) => setTimeout(r, 2));
  }
  const t1 = process.hrtime.bigint();
  const cpuAfter = cpuNanos(process.pid);
  const pgAfter = dbVisible ? await backends() : new Map();
  await runner.stop();
  let pgNanos = 0;
  for (const [pid, n] of pgAfter) pgNanos += n - (pgBefore.get(pid) ?? 0);
  const seconds = Number(t1 - t0) / 1e9;
  const clientMs = (cpuAfter - cpuBefore) / 1e6 * 1000 / n;
  const pgMs = dbVisible ? pgNanos / 1e6 * 1000 / n : null;
  return { messages: n, seconds, perSecond: n / seconds, clientMsPer1000: clientMs, pgMsPer1000: pgMs,
    totalMsPer1000: pgMs === null ? null : clientMs + pgMs, backends: pgAfter.size };
};

if (warmup > 0) await drain(warmup);
const load = os.loadavg()[0];
const result = await drain(messages);
const loadAfter = os.loadavg()[0];
await pool.end();
await monitor.end();

const out = { peer: "graphile-worker", version: gwVersion, node: process.version, concurrency, poolSize, localQueue,
  completeJobBatchDelay: completeDelay, failJobBatchDelay: failDelay, warmup, ...result, loadBefore: load,
  loadAfter };
const fmt = (x, d = 1) => (x === null ? "n/a" : x.toFixed(d));
console.log("peer                  version  messages  s      msg/s    client CPU ms/1k  PG CPU ms/1k  total ms/1k  load");
console.log(`graphile-worker       ${gwVersion.padEnd(8)} ${String(messages).padStart(8)}  ${fmt(result.seconds, 2).padEnd(6)} `
  + `${Math.round(result.perSecond).toString().padStart(7)}  ${fmt(result.clientMsPer1000).padStart(16)}  `
  + `${fmt(result.pgMsPer1000).padStart(12)}  ${fmt(result.totalMsPer1000).padStart(11)}  ${fmt(load, 2)}-${fmt(loadAfter, 2)}`);
console.log(`settings: concurrentJobs ${concurrency}, maxPoolSize ${poolSize}, localQueue.size ${localQueue || "off"}, `
  + `completeJobBatchDelay ${completeDelay}, failJobBatchDelay ${failDelay}, warm-up ${warmup} jobs`);
if (process.env.GW_OUTPUT) writeFileSync(process.env.GW_OUTPUT, JSON.stringify(out, null, 2) + "\n");
