// `npm run test:runtimes`: the unmodified main.ts and sync.ts on five
// runtimes, and the bundle k8s.yaml deploys. Each starts on a free port, must answer the same requests
// exactly as the reference (`npm start`'s command on the machine's Node 20) does, and must exit
// 0 on SIGTERM. The runtimes come from the npm registry at pinned versions and
// are kept in .cache/runtimes, so a second run downloads nothing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { HEALTH_PATH, METRICS_PATH, SETTINGS, SYNC_PATH } from "../main.ts";
import { fixture, markdownTable } from "./helpers.ts";
import { deployedBundle, deployedNodeVersion, install, type NpmRuntime } from "../scripts/runtime-cache.ts";
import { npmStartCommand, spawnServer } from "./spawn-server.ts";

const SHUTDOWN_TIMEOUT_SECONDS = 5;

type Runtime = {
  name: string;
  /** npm package that ships the runtime's binary; none for the machine's own Node. */
  npm?: NpmRuntime;
  command: (bin: string) => string[];
  version: (bin: string) => string;
};

const firstLine = (command: string[]) =>
  (spawnSync(command[0] ?? "", command.slice(1), { encoding: "utf8" }).stdout ?? "").split("\n")[0]?.trim() ?? "";

const runtimes: Runtime[] = [
  {
    name: "Node 20, npm start",
    command: () => npmStartCommand,
    version: () => process.version,
  },
  {
    name: "Node 22",
    npm: { name: "node", version: "22.23.3", bin: "node" },
    command: (bin) => [bin, "main.ts"],
    version: (bin) => firstLine([bin, "--version"]),
  },
  {
    name: "Node 24",
    npm: { name: "node", version: deployedNodeVersion(), bin: "node" },
    command: (bin) => [bin, "main.ts"],
    version: (bin) => firstLine([bin, "--version"]),
  },
  {
    name: "Node 24, k8s.yaml's bundle",
    npm: { name: "node", version: deployedNodeVersion(), bin: "node" },
    command: (bin) => [bin, deployedBundle()],
    version: (bin) => firstLine([bin, "--version"]),
  },
  {
    name: "Deno",
    npm: { name: "deno", version: "2.9.6", bin: "deno" },
    // Only what the webhook needs: listen on loopback, read its settings.
    command: (bin) => [
      bin,
      "run",
      "--allow-net=127.0.0.1",
      `--allow-env=${SETTINGS.join(",")}`,
      "main.ts",
    ],
    version: (bin) => firstLine([bin, "--version"]).split(" (")[0] ?? "",
  },
  {
    name: "Bun",
    npm: { name: "bun", version: "1.4.5", bin: "bun" },
    command: (bin) => [bin, "main.ts"],
    version: (bin) => firstLine([bin, "--version"]),
  },
];

// The requests every runtime must answer alike.
const invalid = fixture("steady-sync");
delete (invalid.parent.metadata as { name?: string }).name;
const requests: [string, string][] = [
  ["first sync", JSON.stringify(fixture("first-sync"))],
  ["steady sync", JSON.stringify(fixture("steady-sync"))],
  ["invalid body", JSON.stringify(invalid)],
  ["malformed JSON", '{"parent": '],
];

type Reply = { status: number; body: unknown };

// A condition that just changed is stamped with the current time, which no two
// runs share; every other byte of the answer must be the same.
function comparable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (key, value) =>
    key === "lastTransitionTime" && Math.abs(Date.parse(value) - Date.now()) < 10 * 60_000 ? "(just now)" : value,
  );
}

async function run(runtime: Runtime): Promise<{ version: string; startupMs: number; replies: Reply[] }> {
  const bin = runtime.npm ? install(runtime.npm) : process.execPath;
  const started = performance.now();
  const server = await spawnServer(runtime.command(bin), { SHUTDOWN_TIMEOUT_SECONDS: String(SHUTDOWN_TIMEOUT_SECONDS) });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const health = await fetch(base + HEALTH_PATH);
    assert.equal(health.status, 200, `${HEALTH_PATH} answered ${health.status}`);
    const startupMs = performance.now() - started;

    const replies: Reply[] = [];
    for (const [, body] of requests) {
      const response = await fetch(base + SYNC_PATH, { method: "POST", headers: { "Content-Type": "application/json" }, body });
      replies.push({ status: response.status, body: comparable(await response.json()) });
    }
    // The counters these requests made, which every runtime must show alike
    // (durations and sizes are each runtime's own).
    const metrics = await fetch(base + METRICS_PATH);
    assert.equal(metrics.status, 200, `${METRICS_PATH} answered ${metrics.status}`);
    assert.match(metrics.headers.get("Content-Type") ?? "", /^text\/plain; version=0\.0\.4/);
    const counted = (await metrics.text()).split("\n").filter((line) => /^webhook_(requests|ready_answers|refusals|rejected_requests)_total\{hook="sync"/.test(line));
    for (const code of new Set(replies.map((reply) => reply.status))) {
      const answered = replies.filter((reply) => reply.status === code).length;
      assert.ok(counted.includes(`webhook_requests_total{hook="sync",code="${code}"} ${answered}`), `${METRICS_PATH} counts the ${answered} syncs answered ${code}:\n${counted.join("\n")}`);
    }
    replies.push({ status: metrics.status, body: counted });

    const stopping = performance.now();
    server.process.kill("SIGTERM");
    const code = await server.exitCode("the exit after SIGTERM", SHUTDOWN_TIMEOUT_SECONDS * 1000);
    assert.equal(code, 0, `exit code after SIGTERM (in ${(performance.now() - stopping).toFixed(0)}ms):\n${server.output()}`);
    return { version: runtime.version(bin), startupMs, replies };
  } finally {
    server.kill();
  }
}

const rows: string[][] = [];
let reference: Reply[] | undefined;
let failures = 0;
for (const runtime of runtimes) {
  try {
    const { version, startupMs, replies } = await run(runtime);
    reference ??= replies;
    for (const [index, [what]] of [...requests, ["the metrics"]].entries()) {
      assert.deepEqual(replies[index], reference[index], `${what}: the answer differs from ${runtimes[0]?.name}'s`);
    }
    rows.push([runtime.name, version, `${startupMs.toFixed(0)} ms`, "pass"]);
  } catch (error) {
    failures += 1;
    rows.push([runtime.name, "", "", "FAIL"]);
    console.error(`${runtime.name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const header = ["runtime", "version", "startup to healthy", "result"];
console.log(markdownTable(header, rows));
console.log(`${rows.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
