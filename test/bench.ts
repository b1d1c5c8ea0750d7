// `npm run bench`: how close the webhook comes to the fastest a Node.js
// webhook can be. main.ts and test/baseline.ts (the same parse, sync and
// serialize on bare node:http) run side by side on the same runtime, and
// autocannon loads each in turn with the same requests, alternating which
// goes first. Figures depend on the machine; the ratios are what to compare.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { DEFAULT_BODY_LIMIT_BYTES, SYNC_PATH, createApp } from "../main.ts";
import { fixture, markdownTable } from "./helpers.ts";
import { largestLegalRequest } from "../scripts/largest-request.ts";
import { deployedBundle, deployedNodeVersion, install } from "../scripts/runtime-cache.ts";
import { spawnServer, withTsx, type Server } from "./spawn-server.ts";

const CONNECTIONS = 10;
const ROUNDS = 3;
const SECONDS_PER_RUN = 4;
const WARM_UP_SECONDS = 2;
const METRICS_ROUNDS = 21;

// Real parents carry kubectl's last-applied annotation and managedFields;
// ~256 KiB of them is a heavy but real object.
function largeRequest() {
  const request = fixture("steady-sync");
  const metadata = request.parent.metadata as Record<string, unknown>;
  metadata["annotations"] = {
    "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ spec: { description: "x".repeat(128 * 1024) } }),
  };
  metadata["managedFields"] = Array.from({ length: 160 }, (_, index) => ({
    manager: `controller-${index}`,
    operation: "Update",
    apiVersion: String(request.parent["apiVersion"]),
    time: "2026-11-30T10:05:00Z",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:metadata": { "f:labels": Object.fromEntries(Array.from({ length: 20 }, (_, key) => [`f:label-${key}`, {}])) } },
  }));
  return request;
}

const fixtures = {
  "first sync": JSON.stringify(fixture("first-sync")),
  "steady sync": JSON.stringify(fixture("steady-sync")),
  "large parent": JSON.stringify(largeRequest()),
  // The most Metacontroller can send, which the body limit is sized from.
  "largest legal request": largestLegalRequest().body,
};

// Node 24 as deployed, from the npm registry; tsx on the machine's Node if that cannot be had.
function runtime(): { label: string; command: (script: string) => string[]; webhook: string } {
  try {
    const node = install({ name: "node", version: deployedNodeVersion(), bin: "node" });
    return { label: `node ${deployedNodeVersion()} (as deployed)`, command: (script) => [node, script], webhook: deployedBundle() };
  } catch (error) {
    console.error(`Node 24 not available (${error instanceof Error ? error.message.split("\n")[0] : error}); using tsx`);
    return { label: `node ${process.version} with tsx`, command: withTsx, webhook: "main.ts" };
  }
}

type Sample = { requestsPerSecond: number; p50: number; p99: number; peakRssMegabytes: number };

/** Resident memory of a process, from Linux's /proc; NaN elsewhere. */
function rssMegabytes(pid: number | undefined): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
  } catch {
    return NaN;
  }
}

async function load(server: Server, body: string, seconds: number): Promise<Sample> {
  let peakRssMegabytes = rssMegabytes(server.process.pid);
  const sampler = setInterval(() => {
    peakRssMegabytes = Math.max(peakRssMegabytes, rssMegabytes(server.process.pid));
  }, 50);
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}${SYNC_PATH}`,
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  clearInterval(sampler);
  assert.equal(result.errors + result.timeouts + result.non2xx, 0, "every request answered 200");
  return { requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, peakRssMegabytes };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? NaN) : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
};

// On a shared two-core machine the servers and the load generator would
// fight over both cores; where taskset exists, the servers get CPU 0 and
// this process, autocannon and all, gets CPU 1.
function pinned(command: string[]): { command: string[]; note: string } {
  const canPin = spawnSync("taskset", ["-p", "-c", "1", String(process.pid)]).status === 0;
  return canPin
    ? { command: ["taskset", "-c", "0", ...command], note: "servers on CPU 0, load generator on CPU 1" }
    : { command, note: "not pinned to CPUs (no taskset)" };
}

// With --metrics: what counting costs each request, the app with its
// metrics against the same app without, in this process through Hono's
// app.request (no socket, so nothing but the app's own work is timed),
// in many short alternating batches, timed in this process' CPU time, which
// waiting for a busy machine's cores does not add to. A batch is still
// slowed now and then (caches, garbage collection): the fastest of each says
// what the work costs undisturbed, the median of the per-round ratios how the
// two compare.
if (process.argv.includes("--metrics")) {
  const quiet = console.log;
  const apps = { with: createApp({ bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES, logHealthChecks: false }), without: createApp({ bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES, logHealthChecks: false, measure: false }) };
  const batch = async (app: (typeof apps)["with"], body: string, count: number) => {
    const headers = { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) };
    const started = process.cpuUsage();
    for (let index = 0; index < count; index++) await (await app.request(SYNC_PATH, { method: "POST", headers, body })).arrayBuffer();
    const { user, system } = process.cpuUsage(started);
    return (user + system) / count;
  };
  const rows: string[][] = [];
  for (const [name, body] of Object.entries(fixtures).filter(([name]) => name !== "largest legal request")) {
    const count = name === "large parent" ? 30 : 300;
    console.log = () => {}; // the request log lines, alike for both
    const micros = { with: [] as number[], without: [] as number[] };
    for (const app of Object.values(apps)) await batch(app, body, count); // let the JIT settle
    for (let round = 0; round < METRICS_ROUNDS; round++) {
      const order = round % 2 === 0 ? (["with", "without"] as const) : (["without", "with"] as const);
      for (const which of order) micros[which].push(await batch(apps[which], body, count));
    }
    console.log = quiet;
    const ratio = median(micros.with.map((each, index) => each / (micros.without[index] ?? NaN)));
    const fastest = { with: Math.min(...micros.with), without: Math.min(...micros.without) };
    rows.push([name, `${fastest.with.toFixed(0)} µs`, `${fastest.without.toFixed(0)} µs`, `${(fastest.with - fastest.without).toFixed(1)} µs`, `${ratio.toFixed(3)}x`]);
  }
  console.log(`runtime: node ${process.version}, in-process app.request, CPU time, ${METRICS_ROUNDS} alternating rounds per fixture`);
  console.log(markdownTable(["fixture", "with metrics", "without", "difference", "time ratio"], rows));
  console.log("per request: the fastest round's; ratio: median of per-round ratios, with metrics to without");
  process.exit(0);
}

const { label, command, webhook: webhookScript } = runtime();
const webhook = pinned(command(webhookScript));

// Idle memory before any load: what the pod's request has to cover.
for (const script of new Set([webhookScript, "main.ts"])) {
  const idle = await spawnServer(command(script));
  await new Promise((resolve) => setTimeout(resolve, 1000)); // let start-up garbage be collected
  console.log(`idle RSS of ${script}: ${rssMegabytes(idle.process.pid).toFixed(0)} MB`);
  idle.kill();
}

const servers = {
  webhook: await spawnServer(webhook.command),
  baseline: await spawnServer(pinned(command("test/baseline.ts")).command),
};
console.log(`runtime: ${label}; webhook: ${webhookScript}; ${webhook.note}`);
console.log(`${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS_PER_RUN}s per fixture and server`);

try {
  const samples: Record<string, { webhook: Sample[]; baseline: Sample[] }> = {};
  // Fixture by fixture, smallest first, so that each one's memory figure is
  // not the leftover of a larger one.
  for (const [name, body] of Object.entries(fixtures)) {
    const series = { webhook: [] as Sample[], baseline: [] as Sample[] };
    samples[name] = series;
    for (const server of Object.values(servers)) await load(server, body, WARM_UP_SECONDS); // let the JIT settle
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (["webhook", "baseline"] as const) : (["baseline", "webhook"] as const);
      for (const which of order) series[which].push(await load(servers[which], body, SECONDS_PER_RUN));
    }
  }

  const rows = Object.entries(samples).map(([name, { webhook, baseline }]) => {
    const ratio = (key: "requestsPerSecond" | "p99") =>
      median(webhook.map((sample, index) => sample[key] / (baseline[index]?.[key] ?? NaN)));
    const figures = (series: Sample[]) => {
      const middle = (key: keyof Sample) => median(series.map((sample) => sample[key]));
      const rss = Math.max(...series.map((sample) => sample.peakRssMegabytes));
      return `${middle("requestsPerSecond").toFixed(0)} req/s, p50 ${middle("p50")} ms, p99 ${middle("p99")} ms, ${rss.toFixed(0)} MB`;
    };
    return [name, figures(webhook), figures(baseline), `${ratio("requestsPerSecond").toFixed(2)}x`, `${ratio("p99").toFixed(2)}x`];
  });
  const header = ["fixture", "webhook", "baseline (node:http)", "req/s ratio", "p99 ratio"];
  console.log(markdownTable(header, rows));
  console.log("req/s, p50 and p99: medians over the rounds; MB: the highest RSS seen while that fixture ran");
  console.log("ratios: medians of per-round ratios; goal: req/s ratio >= 0.85, p99 ratio <= 1.25, webhook RSS < 100 MB");
} finally {
  for (const server of Object.values(servers)) server.process.kill("SIGTERM");
}
