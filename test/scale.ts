// `npm run scale -- N`: how long a cluster takes to make N Projects Ready, each
// with two members, and what that costs the webhook. Run it against a
// cluster where the controller is installed (or `npm run test:e2e:local`'s
// kind of setup: up.sh, the webhook on the host, k8s.yaml pointed at it), as
// the README's "How it scales" shows. It creates its own Projects, labelled
// with a name unique to the run, and deletes exactly those at the end.
//
// WEBHOOK_LOG, if set, is the webhook's log file: the hook calls the run
// caused are counted from its lines. KUBECTL names the kubectl to run.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { kubectlProcess } from "./e2e.ts";

const count = Number(process.argv[2] ?? "100");
const run = `scale-${randomBytes(3).toString("hex")}`;
const kubectl = kubectlProcess(process.env["KUBECTL"] || undefined);
const never = new AbortController().signal;
const DEADLINE_MS = 900_000;

async function must(args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input, never);
  if (!result.ok) throw new Error(`kubectl ${args.join(" ")} failed:\n${result.stderr.trim()}`);
  return result.stdout;
}

const hookCalls = () => {
  const log = process.env["WEBHOOK_LOG"];
  if (!log) return undefined;
  const lines = readFileSync(log, "utf8").split("\n");
  return { sync: lines.filter((line) => line.startsWith("POST /sync ")).length, customize: lines.filter((line) => line.startsWith("POST /customize ")).length };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const projects = Array.from({ length: count }, (_, index) => ({
  apiVersion: "agrrh.com/v1",
  kind: "Project",
  metadata: { name: `${run}-${index}`, labels: { "agrrh.com/scale-run": run } },
  spec: {
    description: "Created by test/scale.ts",
    members: [
      { kind: "User", name: `${run}-admin`, role: "admin" },
      { kind: "Group", name: `${run}-devs`, role: "edit" },
    ],
  },
}));

const before = hookCalls();
const started = Date.now();
try {
  await must(["create", "-f", "-"], stringify({ apiVersion: "v1", kind: "List", items: projects }));
  let ready: { created: number; ready: number }[] = [];
  while (ready.length < count) {
    if (Date.now() - started > DEADLINE_MS) throw new Error(`only ${ready.length} of ${count} Ready after ${DEADLINE_MS / 1000} s`);
    await sleep(1000);
    const { items } = JSON.parse(await must(["get", "projects", "-l", `agrrh.com/scale-run=${run}`, "-o", "json"]));
    ready = items.flatMap((item: any) => {
      const condition = item.status?.conditions?.find((candidate: any) => candidate.type === "Ready");
      if (condition?.status !== "True") return [];
      return [{ created: Date.parse(item.metadata.creationTimestamp), ready: Date.parse(condition.lastTransitionTime) }];
    });
  }
  const allReady = (Date.now() - started) / 1000;
  const after = hookCalls();
  console.log(`${count} Projects, 2 members each: all Ready after ${allReady.toFixed(0)} s`);
  console.log(`median create to Ready: ${(median(ready.map(({ created, ready: at }) => at - created)) / 1000).toFixed(0)} s (whole seconds, as Kubernetes stamps them)`);
  if (before && after) {
    const perProject = (calls: number) => (calls / count).toFixed(1);
    console.log(`hook calls per Project: ${perProject(after.sync - before.sync)} sync, ${perProject(after.customize - before.customize)} customize`);
  }
} finally {
  const deleting = Date.now();
  await kubectl(["delete", "projects", "-l", `agrrh.com/scale-run=${run}`, "--wait=true", "--timeout=600s"], undefined, never);
  console.log(`deleted the run's ${count} Projects in ${((Date.now() - deleting) / 1000).toFixed(0)} s`);
}
