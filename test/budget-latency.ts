// `npx tsx test/budget-latency.ts 100 1000 10000`: how long a developer's create
// takes while that many requesters are at their limit. The budget's
// admission policy is evaluated once per such requester in the creator's
// shard (each one's spent place is a param of the shard's binding) on every
// developer's create, so this is what it costs a cluster as its developers
// fill their budgets; the rest of a create's admission does not grow with
// the fleet. LATENCY_ONE_SHARD=1 names every requester into the creator's
// shard: the worst case, for names chosen to fall together.
//
// On the current context, as a cluster admin: it creates a binding of the
// requester role for a group of its own, and the spent places of made-up
// requesters (what sync writes for a requester at their limit), all labelled
// with the run, then times server-side dry-run creates of a Project (nothing
// is stored) by one of the group, through `kubectl proxy`. It deletes exactly
// what it made. KUBECTL names the kubectl to run.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { API_VERSION, GROUP, PARENT } from "../sync.ts";
import { PLACE, REQUESTER_HASH_LABEL, SHARD_LABEL, SPENT_LABEL, requesterHash, shardOf, spentNameFor } from "../features/budget.ts";
import { kubectlProcess, kubectlProxy } from "../scripts/kubectl.ts";
import { REQUESTER_ROLE } from "./e2e.ts";

const counts = process.argv.slice(2).map(Number);
if (counts.length === 0 || counts.some((count) => !Number.isInteger(count) || count < 0)) {
  console.error("test/budget-latency.ts N [N ...]: numbers of requesters at their limit, such as 100 1000 10000");
  process.exit(2);
}
const run = `latency-${randomBytes(3).toString("hex")}`;
const RUN_LABEL = `${GROUP}/latency-run`;
const DEVELOPERS = `${run}-devs`;
const DEVELOPER = `${run}-dev`;
const CREATES = 40;
const command = process.env["KUBECTL"] || "kubectl";
const kubectl = kubectlProcess(command);
const never = new AbortController().signal;
const must = async (args: string[], input?: string) => {
  const result = await kubectl(args, input, never);
  if (!result.ok) throw new Error(`kubectl ${args.join(" ")} failed: ${result.stderr.trim()}`);
  return result.stdout;
};

const oneShard = process.env["LATENCY_ONE_SHARD"] === "1";
/** The index-th made-up requester, in the creator's shard if asked. */
const holders: string[] = [];
let named = 0;
const holder = (index: number) => {
  while (holders.length <= index) {
    const name = `${run}-holder-${named++}`;
    if (!oneShard || shardOf(name) === shardOf(DEVELOPER)) holders.push(name);
  }
  return holders[index]!;
};
const spentPlace = (index: number) => {
  const hash = requesterHash(holder(index));
  return {
    apiVersion: PLACE.apiVersion,
    kind: PLACE.kind,
    metadata: { name: spentNameFor(hash), labels: { [REQUESTER_HASH_LABEL]: hash, [SPENT_LABEL]: "true", [SHARD_LABEL]: shardOf(holder(index)), [RUN_LABEL]: run } },
    // Its groups as the API server records them: impersonated, a user is in system:authenticated too.
    spec: { requester: holder(index), groups: `${DEVELOPERS}\nsystem:authenticated`, held: 3, limit: 3, contact: `the run ${run}` },
  };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)] ?? NaN;

async function main() {
  const { url, stop } = await kubectlProxy(command);
  const request = (path: string, init: RequestInit = {}) => fetch(`${url}${path}`, { ...init, headers: { "content-type": "application/json", ...init.headers } });
  const as = (user: string) => ({ "Impersonate-User": user, "Impersonate-Group": DEVELOPERS });
  const createAs = (user: string) =>
    request(`/apis/${API_VERSION}/${PARENT.plural}?dryRun=All`, {
      method: "POST",
      headers: as(user),
      body: JSON.stringify({ apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name: `${run}-x` }, spec: { members: [{ kind: "User", name: user, role: "admin" }] } }),
    });
  const binding = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: run }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: REQUESTER_ROLE }, subjects: [{ kind: "Group", name: DEVELOPERS, apiGroup: "rbac.authorization.k8s.io" }] };
  try {
    await must(["create", "-f", "-"], stringify(binding));
    console.log("| requesters at their limit | of them in the creator's shard | a developer's create, median | p90 |\n| --- | --- | --- | --- |");
    let made = 0;
    for (const count of [...counts].sort((a, b) => a - b)) {
      // Twenty at a time, as a busy Metacontroller writes them.
      while (made < count) {
        const batch = Array.from({ length: Math.min(20, count - made) }, (_, offset) => made + offset);
        const answers = await Promise.all(batch.map((index) => request(`/apis/${PLACE.apiVersion}/${PLACE.plural}`, { method: "POST", body: JSON.stringify(spentPlace(index)) })));
        for (const answer of answers) if (answer.status !== 201) throw new Error(`a spent place was not created: ${answer.status} ${await answer.text()}`);
        made += batch.length;
      }
      // The policy sees its params through an informer: once the newest
      // holder is refused, it sees them all.
      const deadline = Date.now() + 60_000;
      while (count > 0 && (await createAs(holder(count - 1))).status !== 403) {
        if (Date.now() > deadline) throw new Error(`the budget policy did not refuse ${holder(count - 1)} within 60 s`);
        await sleep(200);
      }
      const timings: number[] = [];
      for (let attempt = 0; attempt < CREATES; attempt++) {
        const started = performance.now();
        const answer = await createAs(DEVELOPER);
        timings.push(performance.now() - started);
        if (answer.status !== 201) throw new Error(`${DEVELOPER}'s dry-run create was refused: ${answer.status} ${await answer.text()}`);
      }
      const inShard = Array.from({ length: count }, (_, index) => holder(index)).filter((name) => shardOf(name) === shardOf(DEVELOPER)).length;
      console.log(`| ${count.toLocaleString("en")} | ${inShard.toLocaleString("en")} | ${median(timings).toFixed(1)} ms | ${p90(timings).toFixed(1)} ms |`);
    }
  } finally {
    const places = await request(`/apis/${PLACE.apiVersion}/${PLACE.plural}?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${run}`)}`, { method: "DELETE" });
    if (places.status !== 200) console.error(`left behind: the run's ProjectPlaces (${places.status} ${await places.text()})`);
    const deleted = await kubectl(["delete", "-f", "-", "--ignore-not-found"], stringify(binding), never);
    if (!deleted.ok) console.error(`left behind: ClusterRoleBinding ${run} (${deleted.stderr.trim()})`);
    stop();
  }
}

await main();
