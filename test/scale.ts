// `npm run scale -- N`: how long a cluster takes to make N Projects Ready,
// how long an edit of what they share takes to reach every one of them, and
// what each costs.
// feature: guardrails & members
// Each has two members and a profile of the run's own: the edit is of its
// quota, and then a member is added to each to get access.
// end feature: guardrails & members
// Run it against a cluster
// where the controller is installed (or `npm run test:e2e:local`'s kind of
// setup: up.sh, the webhook on the host, k8s.yaml pointed at it), as "How
// it scales" in docs/operating.md shows. It creates its own Projects, and
// what they need first (the features' objects), named and labelled
// after the run, and deletes exactly those.
//
// WEBHOOK_LOG, if set, is the webhook's log file: the hook calls the run
// caused are counted from its lines, with the largest sync request and the
// answers that were not 200 or 304. METACONTROLLER_METRICS, if set, is
// Metacontroller's metrics URL (the local control plane's is
// http://127.0.0.1:19999/metrics): the API requests it made are counted from
// client-go's counter, and its memory and CPU from its process metrics; the
// API server's come from its own /metrics, where the caller may read them.
// WEBHOOK_PID, if set, is the webhook's process on this host, whose memory
// and CPU are read from /proc. KUBECTL names the kubectl to run.
//
// METACONTROLLER_RESTART, if set, is a shell command that restarts
// Metacontroller (for the local control plane: stop it by its pid file, then
// `UP_ONLY=metacontroller up.sh`). Once all are Ready the run restarts it, a
// relist of everything it watches as its periodic cache flush does, and
// reports how long until it rests again, and what that cost per Project.
// feature: integrations
//
// SCALE_INTEGRATIONS=K gives the run's profile K integrations, each after the
// one before; where no kubelet runs (the local control plane), the run plays
// it, and every Pod of the run's Jobs succeeds as soon as it is made.
// end feature: integrations
// feature: guardrails & shared
//
// SCALE_SHARED=0 has the run's profile share nothing: what the shared copies
// in every Namespace cost, against a run that shares them.
// end feature: guardrails & shared
// feature: budget
//
// SCALE_REQUESTERS=R has R developers create the Projects, count / R each
// (impersonated, in a group of the run's), within a ProjectBudget of the
// run's that gives them that many: what a developer's create costs against
// an admin's. Grants add up, so where ProjectBudget default gives more (3,
// built in), they are below their limit and hold no spent place; at count /
// R of at least that, each ends at their limit. SCALE_UNLIMITED=1 gives
// their group unlimited: true instead, as a team's robot may have.
// end feature: budget
// feature: environments
//
// SCALE_ENVIRONMENTS=K has each Project declare K environments, named after
// the run: K Namespaces each, in place of its one.
// end feature: environments
// feature: environments & guardrails
// With two or more, the last is on a stricter profile of the run's, as a
// prod would be; the edit is of the other's quota, so it reaches K - 1 of them.
// end feature: environments & guardrails
// The report gives what each Project cost, and where a Project has more than
// one Namespace, what each Namespace cost.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { API_VERSION, GROUP, NAMESPACE_ANNOTATIONS, PARENT, PROJECT_LABEL } from "../sync.ts";
import { GUARDRAIL_NAMES, PROFILE, PROFILE_LABEL } from "../features/guardrails.ts"; // feature: guardrails
import { kubectlProcess, kubectlProxy } from "../scripts/kubectl.ts";
import { endedPod } from "./e2e.ts"; // feature: integrations
import { INTEGRATIONS_NAMESPACE, LABELS } from "../features/integrations.ts"; // feature: integrations
import { BUDGET, PLACE, SPENT_LABEL } from "../features/budget.ts"; // feature: budget
import { REQUESTER_ROLE } from "./e2e.ts"; // feature: budget
import { INSTALL_NAMESPACE, SHAREABLE_LABEL } from "../features/shared.ts"; // feature: shared

const count = Number(process.argv[2] ?? "100");
const run = `scale-${randomBytes(3).toString("hex")}`;
const kubectl = kubectlProcess(process.env["KUBECTL"] || undefined);
const never = new AbortController().signal;
// How many Namespaces each of the run's Projects has, once it knows.
let namespacesEach = 1;
// Each phase, at the slowest rate measured (about 4 Projects of one Namespace a
// second), with room: a Project of three took more than three times as long.
const deadlineMs = () => Math.max(900_000, count * namespacesEach * 600);
// Creates at once: enough to keep Metacontroller busy, few enough for the machine.
const CREATES_AT_ONCE = 20;
const RUN_LABEL = `${GROUP}/scale-run`;
/** An image no node pulls: where no kubelet runs, the run plays it. */
const IMAGE = "registry.invalid/scale:1"; // feature: integrations

/**
 * What a run creates: what its Projects need first (the features' objects),
 * and its Projects, labelled with the run so that
 * it finds and deletes exactly those.
 */
export type RunOptions = {
  integrations?: number; // feature: integrations
  shared?: boolean; // feature: guardrails & shared
  requesters?: number; // feature: budget
  unlimited?: boolean; // feature: budget
  environments?: number; // feature: environments
};
export function runObjects(run: string, count: number, options: RunOptions = {}) {
  const prerequisites: { apiVersion: string; kind: string; metadata: { name: string }; spec?: object; [field: string]: unknown }[] = [];
  // Each field the Namespace's annotations come from, so that every Namespace carries them.
  const spec: Record<string, unknown> = Object.fromEntries(Object.keys(NAMESPACE_ANNOTATIONS).map((field) => [field, "set by test/scale.ts"]));
  // feature: guardrails
  prerequisites.push({
    apiVersion: API_VERSION,
    kind: PROFILE.kind,
    metadata: { name: run },
    spec: {
      resourceQuota: { hard: { pods: "10", "requests.cpu": "2", "requests.memory": "4Gi" } },
      limitRange: { default: { cpu: "500m", memory: "512Mi" }, defaultRequest: { cpu: "100m", memory: "128Mi" } },
      networkPolicy: {},
      podSecurity: "baseline",
    },
  });
  spec["profile"] = run;
  // end feature: guardrails
  // feature: guardrails & shared
  // A Secret and a ConfigMap the profile shares: two more children each, and
  // two more kinds whose every event Metacontroller matches against every Project.
  if (options.shared ?? true) {
    for (const kind of ["Secret", "ConfigMap"]) {
      prerequisites.push({ apiVersion: "v1", kind, metadata: { name: run, namespace: INSTALL_NAMESPACE, labels: { [SHAREABLE_LABEL]: "true" } } as { name: string }, data: { note: kind === "Secret" ? Buffer.from(run).toString("base64") : run } });
    }
    Object.assign(prerequisites[0]!.spec!, { shared: { secrets: [run], configMaps: [run] } });
  }
  // end feature: guardrails & shared
  // feature: integrations
  const steps = Array.from({ length: options.integrations ?? 0 }, (_, index) => ({
    name: `step-${index}`,
    image: IMAGE,
    command: ["true"],
    retries: 0,
    ...(index > 0 ? { after: [`step-${index - 1}`] } : {}),
  }));
  if (steps.length) Object.assign(prerequisites[0]!.spec!, { integrations: steps });
  // end feature: integrations
  // How many Namespaces each Project has: what the costs per Namespace divide by.
  let namespaces = 1;
  // feature: environments
  const environments: Record<string, string>[] = Array.from({ length: options.environments ?? 0 }, (_, index) => ({ name: `${run}-env-${index}` }));
  if (environments.length) {
    spec["environments"] = environments;
    namespaces = environments.length;
  }
  // end feature: environments
  // feature: environments & guardrails
  if (environments.length >= 2) {
    const strict = { ...structuredClone(prerequisites[0]!), metadata: { name: `${run}-prod` } };
    Object.assign(strict.spec!, { resourceQuota: { hard: { pods: "5", "requests.cpu": "1", "requests.memory": "2Gi" } }, podSecurity: "restricted" });
    prerequisites.push(strict);
    environments.at(-1)!["profile"] = strict.metadata.name;
  }
  // end feature: environments & guardrails
  // feature: members
  spec["members"] = [
    { kind: "User", name: `${run}-admin`, role: "admin" },
    { kind: "Group", name: `${run}-devs`, role: "edit" },
  ];
  // end feature: members
  const projects = Array.from({ length: count }, (_, index) => ({
    apiVersion: API_VERSION,
    kind: PARENT.kind,
    metadata: { name: `${run}-${index}`, labels: { [RUN_LABEL]: run } as Record<string, string> },
    spec: structuredClone(spec),
  }));
  // Who creates each Project: the admin running this, or one the run makes.
  const creators: (string | undefined)[] = projects.map(() => undefined);
  // feature: budget
  const requesters = options.requesters ?? 0;
  if (requesters > 0) {
    const devs = `${run}-devs`;
    const each = Math.ceil(count / requesters);
    const grants: [binding: string, role: string][] = [[`${run}-requester`, REQUESTER_ROLE]];
    prerequisites.push({ apiVersion: BUDGET.apiVersion, kind: BUDGET.kind, metadata: { name: run }, spec: { groups: [options.unlimited ? { group: devs, unlimited: true } : { group: devs, projects: each }] } });
    // feature: guardrails
    // The verb use on the run's profiles: choosing one takes it.
    prerequisites.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: run },
      rules: [{ apiGroups: [GROUP], resources: [PROFILE.plural], resourceNames: prerequisites.filter((object) => object.kind === PROFILE.kind).map((object) => object.metadata.name), verbs: ["use"] }],
    });
    grants.push([`${run}-profile`, run]);
    // end feature: guardrails
    prerequisites.push(
      ...grants.map(([name, role]) => ({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: devs }],
      })),
    );
    projects.forEach((project, index) => {
      const developer = `${run}-dev-${Math.floor(index / each)}`;
      creators[index] = developer;
      (project.spec["members"] as { kind: string; name: string; role: string }[]).push({ kind: "User", name: developer, role: "admin" });
    });
  }
  // end feature: budget
  return { prerequisites, projects, creators, namespaces, selector: `${RUN_LABEL}=${run}` };
}


async function must(args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input, never);
  if (!result.ok) throw new Error(`kubectl ${args.join(" ")} failed:\n${result.stderr.trim()}`);
  return result.stdout;
}

// Each poll lists every Project of the run: at 10,000, once a second would be
// much of the API server's work, so polls are a second apart per 1,000.
const POLL_MS = Math.max(1000, count);

/** Polls until `done` holds, for at most the deadline. */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > deadlineMs()) throw new Error(`${what}: not within ${deadlineMs() / 1000} s`);
    await sleep(POLL_MS);
  }
}

// Each sync request's size, in order, so that a report takes the largest of its own.
type Costs = { sync: number; customize: number; finalize: number; syncSizes: number[]; refused: number; requests: Record<string, number> };

/**
 * Memory and CPU, where they can be read: Metacontroller's and the API
 * server's from their process metrics, the webhook's from /proc. The
 * resident size is now; `peak` is the most the process held since it began.
 */
type Usage = Record<string, { cpuSeconds: number; residentBytes: number; peakBytes?: number }>;

async function usage(): Promise<Usage> {
  const found: Usage = {};
  const fromMetrics = (text: string) => ({
    cpuSeconds: Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]),
    residentBytes: Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]),
  });
  const metrics = process.env["METACONTROLLER_METRICS"];
  if (metrics) found["Metacontroller"] = fromMetrics(await (await fetch(metrics)).text());
  const apiServer = await kubectl(["get", "--raw", "/metrics"], undefined, never);
  if (apiServer.ok) found["the API server"] = fromMetrics(apiServer.stdout);
  const pid = process.env["WEBHOOK_PID"];
  if (pid) {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kibibytes = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]) * 1024;
    // utime and stime, the 14th and 15th fields, in clock ticks of 1/100 s.
    const [utime, stime] = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ").slice(11, 13).map(Number);
    found["the webhook"] = { cpuSeconds: (utime! + stime!) / 100, residentBytes: kibibytes("VmRSS"), peakBytes: kibibytes("VmHWM") };
  }
  return found;
}

function reportUsage(what: string, before: Usage, after: Usage, seconds: number) {
  for (const [who, now] of Object.entries(after)) {
    const cpu = now.cpuSeconds - (before[who]?.cpuSeconds ?? now.cpuSeconds);
    const peak = now.peakBytes === undefined ? "" : `, at most ${(now.peakBytes / 2 ** 20).toFixed(0)} MiB`;
    console.log(`${what}, ${who}: ${cpu.toFixed(1)} CPU seconds (${(cpu / seconds).toFixed(2)} cores), ${(now.residentBytes / 2 ** 20).toFixed(0)} MiB resident after${peak}`);
  }
}

async function costs(): Promise<Costs> {
  const log = process.env["WEBHOOK_LOG"];
  const lines = log ? readFileSync(log, "utf8").split("\n") : [];
  const requests: Record<string, number> = {};
  const metrics = process.env["METACONTROLLER_METRICS"];
  if (metrics) {
    for (const [, method, value] of (await (await fetch(metrics)).text()).matchAll(/^rest_client_requests_total\{[^}]*method="(\w+)"[^}]*\} (\S+)$/gm)) {
      requests[method!] = (requests[method!] ?? 0) + Number(value);
    }
  }
  const hooks = lines.filter((line) => /^POST \/(sync|customize|finalize) /.test(line));
  return {
    sync: lines.filter((line) => line.startsWith("POST /sync ")).length,
    customize: lines.filter((line) => line.startsWith("POST /customize ")).length,
    finalize: lines.filter((line) => line.startsWith("POST /finalize ")).length,
    syncSizes: lines.filter((line) => line.startsWith("POST /sync ")).map((line) => Number(/ (\d+)B$/.exec(line)?.[1] ?? 0)),
    refused: hooks.filter((line) => !/^POST \S+ (200|304) /.test(line)).length,
    requests,
  };
}

/** Per Project, and where each has more than one Namespace, per Namespace too. */
const units = () => [{ unit: "Project", count }, ...(namespacesEach > 1 ? [{ unit: "Namespace", count: count * namespacesEach }] : [])];

function report(what: string, before: Costs, after: Costs) {
  for (const { unit, count: many } of units()) {
    const per = (calls: number) => (calls / many).toFixed(1);
    if (process.env["WEBHOOK_LOG"]) {
      console.log(
        `${what}, hook calls per ${unit}: ${per(after.sync - before.sync)} sync, ${per(after.customize - before.customize)} customize, ` +
          `${per(after.finalize - before.finalize)} finalize; the largest sync request ${after.syncSizes.slice(before.syncSizes.length).reduce((largest, size) => Math.max(largest, size), 0)} bytes; ${after.refused - before.refused} answers not 200 or 304`,
      );
    }
    if (process.env["METACONTROLLER_METRICS"]) {
      const methods = Object.keys(after.requests).sort();
      const byMethod = methods.map((method) => `${per((after.requests[method] ?? 0) - (before.requests[method] ?? 0))} ${method}`);
      console.log(`${what}, Metacontroller's API requests per ${unit}: ${byMethod.join(", ")}`);
    }
  }
}

/** The costs once they stop changing: every sync the last change caused has been answered and applied. */
async function settledCosts(): Promise<Costs> {
  let last = await costs();
  await until("the controller settles", async () => {
    await sleep(5000);
    const now = await costs();
    const same = JSON.stringify(now) === JSON.stringify(last);
    last = now;
    return same;
  });
  return last;
}

/**
 * Metacontroller restarted once the fleet is at rest: it lists everything it
 * watches again and syncs every Project, as its cache flush does every 30
 * minutes. Timed until its hook calls and API requests stop changing (a
 * second apart, for 10 s), with what it spent until then.
 */
async function relist(command: string) {
  const before = await costs();
  const restarted = Date.now();
  const restart = spawn("bash", ["-c", command], { stdio: ["ignore", "inherit", "inherit"] });
  const code = await new Promise<number | null>((resolve) => restart.on("exit", resolve));
  if (code !== 0) throw new Error(`METACONTROLLER_RESTART exited with ${code}`);
  // A new process: its counters start from nothing.
  const zero: Costs = { ...before, requests: {} };
  let last = { at: Date.now(), costs: await costs(), usage: await usage() };
  await until("Metacontroller rests after its restart", async () => {
    await sleep(1000);
    const now = await costs();
    if (JSON.stringify(now) !== JSON.stringify(last.costs)) last = { at: Date.now(), costs: now, usage: await usage() };
    return Date.now() - last.at >= 10_000;
  });
  const seconds = (last.at - restarted) / 1000;
  const synced = last.costs.sync - before.sync;
  const each = (value: number) => units().map(({ unit, count: many }) => `${((value * 1000) / many).toFixed(1)} ms per ${unit}`).join(", ");
  console.log(`Metacontroller restarted: at rest again after ${seconds.toFixed(1)} s (${each(seconds)}), ${synced} syncs for ${count} Projects`);
  const cpu = last.usage["Metacontroller"]?.cpuSeconds;
  if (cpu !== undefined) console.log(`the relist, Metacontroller: ${cpu.toFixed(1)} CPU seconds (${each(cpu)}), ${(last.usage["Metacontroller"]!.residentBytes / 2 ** 20).toFixed(0)} MiB resident`);
  report("the relist", zero, last.costs);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

// feature: guardrails
const quotasAt = async (pods: string) => {
  const { items } = JSON.parse(await must(["get", "resourcequotas", "--all-namespaces", "-l", `${PROFILE_LABEL}=${run}`, "-o", "json"]));
  return items.filter((item: any) => item.metadata.name === GUARDRAIL_NAMES.ResourceQuota && item.spec.hard.pods === pods).length;
};

/** How long an edit of the run's profile takes to reach every Project, and what it costs. */
async function editTheProfile(selector: string, settled: Costs) {
  // Every Project is Ready: each of its Namespaces on the profile has its quota.
  const quotas = await quotasAt("10");
  const edited = Date.now();
  await must(["patch", PROFILE.plural, run, "--type=merge", "-p", '{"spec":{"resourceQuota":{"hard":{"pods":"11"}}}}']);
  await until("every quota follows the profile", async () => (await quotasAt("11")) === quotas);
  console.log(`an edit of the profile's quota reached all ${quotas} ResourceQuotas on it (of ${count * namespacesEach} Namespaces) after ${((Date.now() - edited) / 1000).toFixed(1)} s`);
  await until("every Project is Ready again", async () => {
    const { items } = JSON.parse(await must(["get", PARENT.plural, "-l", selector, "-o", "json"]));
    return items.every((item: any) => item.status?.conditions?.some((condition: any) => condition.type === "Ready" && condition.status === "True"));
  });
  console.log(`and every Project was Ready again after ${((Date.now() - edited) / 1000).toFixed(1)} s`);
  report("the edit", settled, await settledCosts());
}
// end feature: guardrails

// feature: budget
/**
 * How long one more developer's create takes against the run's places, and
 * its spent places where its developers reached their limit (the budget
 * policy reads those of the creator's shard): the median of server-side dry
 * runs, which store nothing.
 */
async function timeADevelopersCreate(url: string) {
  const newcomer = `${run}-dev-new`;
  const body = JSON.stringify({ apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name: `${run}-new` }, spec: { members: [{ kind: "User", name: newcomer, role: "admin" }] } });
  const timings: number[] = [];
  for (let attempt = 0; attempt < 40; attempt++) {
    const started = performance.now();
    const answer = await fetch(`${url}/apis/${API_VERSION}/${PARENT.plural}?dryRun=All`, {
      method: "POST",
      headers: { "content-type": "application/json", "Impersonate-User": newcomer, "Impersonate-Group": `${run}-devs` },
      body,
    });
    timings.push(performance.now() - started);
    if (answer.status !== 201) throw new Error(`a developer's dry-run create was refused: ${answer.status} ${await answer.text()}`);
  }
  const { items } = JSON.parse(await must(["get", PLACE.plural, "-o", "json"]));
  const spent = items.filter((item: any) => item.metadata.labels?.[SPENT_LABEL] === "true").length;
  console.log(`a developer's create with ${spent} spent places of ${items.length}: median ${median(timings).toFixed(1)} ms (40 dry runs)`);
}
// end feature: budget

// feature: members
/** How long a member added to every Project takes to get access, and what it costs. */
async function addAMember(selector: string, settled: Costs) {
  const { items } = JSON.parse(await must(["get", PARENT.plural, "-l", selector, "-o", "json"]));
  const references = items.map((item: any) => ({ apiVersion: item.apiVersion, kind: item.kind, metadata: { name: item.metadata.name } }));
  const newcomer = { kind: "User", name: `${run}-newcomer`, role: "view" };
  const added = Date.now();
  await must(["patch", "-f", "-", "--type=json", "-p", JSON.stringify([{ op: "add", path: "/spec/members/-", value: newcomer }])], stringify({ apiVersion: "v1", kind: "List", items: references }));
  await until("every Project is Ready with its new member", async () => {
    const { items: now } = JSON.parse(await must(["get", PARENT.plural, "-l", selector, "-o", "json"]));
    return now.every((item: any) =>
      item.status?.observedGeneration === item.metadata.generation && item.status?.conditions?.some((condition: any) => condition.type === "Ready" && condition.status === "True"),
    );
  });
  console.log(`a member added to every Project had access in all ${count} after ${((Date.now() - added) / 1000).toFixed(1)} s`);
  report("the member change", settled, await settledCosts());
}
// end feature: members

// feature: integrations
/** Until stopped: every Pod of the run's Jobs that has not ended succeeds, as a kubelet would report it. */
async function playTheKubelet(stop: AbortSignal) {
  const ended = JSON.stringify(endedPod("Succeeded", IMAGE));
  while (!stop.aborted) {
    const { items } = JSON.parse(await must(["get", "pods", "-n", INTEGRATIONS_NAMESPACE, "--field-selector=status.phase=Pending", "-o", "json"]));
    for (const pod of items.filter((item: any) => item.metadata.labels?.[LABELS.project]?.startsWith(`${run}-`))) {
      await kubectl(["-n", INTEGRATIONS_NAMESPACE, "patch", "pod", pod.metadata.name, "--subresource=status", "--type=merge", "-p", ended], undefined, never);
    }
    await sleep(500);
  }
}
// end feature: integrations

if (import.meta.filename === process.argv[1]) {
  const options: RunOptions = {
    integrations: Number(process.env["SCALE_INTEGRATIONS"] ?? "0"), // feature: integrations
    shared: process.env["SCALE_SHARED"] !== "0", // feature: guardrails & shared
    requesters: Number(process.env["SCALE_REQUESTERS"] ?? "0"), // feature: budget
    unlimited: process.env["SCALE_UNLIMITED"] === "1", // feature: budget
    environments: Number(process.env["SCALE_ENVIRONMENTS"] ?? "0"), // feature: environments
  };
  const { prerequisites, projects, creators, namespaces, selector } = runObjects(run, count, options);
  namespacesEach = namespaces;
  const kubelet = new AbortController();
  const created: typeof prerequisites = [];
  const proxy = await kubectlProxy(process.env["KUBECTL"] || undefined);
  try {
    for (const object of prerequisites) {
      await must(["create", "-f", "-"], stringify(object));
      created.push(object);
    }
    const before = await costs();
    const usedBefore = await usage();
    if (options.integrations) void playTheKubelet(kubelet.signal); // feature: integrations
    const started = Date.now();
    // Through one kubectl proxy, CREATES_AT_ONCE at a time, each as its creator:
    // a kubectl process each would cost the machine more than the Projects.
    const waiting = projects.map((project, index) => ({ project, creator: creators[index] }));
    await Promise.all(
      Array.from({ length: CREATES_AT_ONCE }, async () => {
        for (let next = waiting.shift(); next; next = waiting.shift()) {
          const { project, creator } = next;
          const headers = { "content-type": "application/json", ...(creator ? { "Impersonate-User": creator, "Impersonate-Group": `${run}-devs` } : {}) };
          const answer = await fetch(`${proxy.url}/apis/${API_VERSION}/${PARENT.plural}`, { method: "POST", headers, body: JSON.stringify(project) });
          if (answer.status !== 201) throw new Error(`Project ${project.metadata.name} was not created: ${answer.status} ${await answer.text()}`);
        }
      }),
    );
    let ready: { created: number; ready: number }[] = [];
    await until(`${count} Projects Ready`, async () => {
      const { items } = JSON.parse(await must(["get", PARENT.plural, "-l", selector, "-o", "json"]));
      ready = items.flatMap((item: any) => {
        const condition = item.status?.conditions?.find((candidate: any) => candidate.type === "Ready");
        if (condition?.status !== "True") return [];
        return [{ created: Date.parse(item.metadata.creationTimestamp), ready: Date.parse(condition.lastTransitionTime) }];
      });
      return ready.length === count;
    });
    // From the Ready conditions' own times, whatever the polls' spacing.
    const allReady = Math.max(...ready.map(({ ready: at }) => at)) / 1000 - Math.floor(started / 1000);
    reportUsage("while creating them", usedBefore, await usage(), allReady);
    console.log(`${count} Projects of ${namespacesEach} Namespaces each (spec: ${JSON.stringify(projects[0]?.spec)}): all Ready after ${allReady.toFixed(0)} s`);
    console.log(`median create to Ready: ${(median(ready.map(({ created, ready: at }) => at - created)) / 1000).toFixed(0)} s (whole seconds, as Kubernetes stamps them)`);
    // Settled: what the next edit costs starts from here.
    const settled = await settledCosts();
    report("creating them", before, settled);
    const restart = process.env["METACONTROLLER_RESTART"];
    if (restart) await relist(restart);
    if (options.requesters) await timeADevelopersCreate(proxy.url); // feature: budget
    await editTheProfile(selector, await settledCosts()); // feature: guardrails
    await addAMember(selector, await settledCosts()); // feature: members
  } finally {
    kubelet.abort();
    proxy.stop();
    const beforeDeleting = await costs();
    const deleting = Date.now();
    await kubectl(["delete", PARENT.plural, "-l", selector, "--wait=true", `--timeout=${deadlineMs() / 1000}s`], undefined, never);
    console.log(`deleted the run's ${count} Projects in ${((Date.now() - deleting) / 1000).toFixed(0)} s`);
    // Their Namespaces go with them, every one of each Project's.
    const ours = new Set(projects.map((project) => project.metadata.name));
    const left = async () => JSON.parse(await must(["get", "namespaces", "-l", PROJECT_LABEL, "-o", "json"])).items.filter((item: any) => ours.has(item.metadata.labels[PROJECT_LABEL])).length;
    await until("the run's Namespaces are gone", async () => (await left()) === 0).then(
      () => console.log(`and all ${count * namespacesEach} of their Namespaces after ${((Date.now() - deleting) / 1000).toFixed(0)} s`),
      (error) => console.error(`left behind: Namespaces of the run's Projects (${error.message})`),
    );
    report("deleting them", beforeDeleting, await settledCosts());
    // What admins write is kept from a stray delete until annotated so.
    for (const object of created.reverse()) {
      await kubectl(["annotate", "-f", "-", `${GROUP}/allow-deletion=true`, "--overwrite"], stringify(object), never);
      const deleted = await kubectl(["delete", "-f", "-"], stringify(object), never);
      if (!deleted.ok) console.error(`left behind: ${object.kind} ${object.metadata.name} (${deleted.stderr.trim()})`);
    }
  }
}
