// The integrations feature: one Job per integration the profile declares,
// in order, with status, retries and teardown.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, GROUP, NAMESPACES as NAMESPACE_GROUP, PROJECT_LABEL, finalize, namespaceNameFor, sync, type Child, type ObservedChildren, type Project, type RelatedObjects, type SyncResponse } from "../sync.ts";
import { DEFAULT_PROFILE as GUARDRAILS_DEFAULT_PROFILE, PROFILE, PROFILES as GUARDRAILS_PROFILES } from "../features/guardrails.ts";
import {
  CONTAINER,
  DEFAULT_PROFILE,
  HAND_OVER_LABEL_PREFIX,
  HAND_OVER_NAME,
  INTEGRATION_RULES,
  INTEGRATIONS_NAMESPACE,
  JOBS,
  JOB_NAME_MAX_LENGTH,
  LABELS,
  OUTPUTS_ANNOTATION,
  PROFILES,
  REFUSED_EXIT_CODE,
  REFUSED_OUTPUT,
  RESERVED_ENV,
  ENVIRONMENTS_ENV, // feature: integrations & environments
  INPUT_KEYS, // feature: integrations & environments
  environmentNamespace, // feature: integrations & environments
  integrations,
  jobNameFor,
  type IntegrationStatus,
  type Job,
} from "../features/integrations.ts";
import { ENVIRONMENT_ANNOTATION, MAX_ENVIRONMENTS, environmentNamespace as environmentsNamespace } from "../features/environments.ts"; // feature: integrations & environments
import { SETTLED, at, escaped, namespaceIn, namespaceOf, namespaces, project, related, verdict, withObserved } from "./helpers.ts";

const PROJECT = "shop";
const NAMESPACE = namespaceOf(PROJECT);

const integration = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  image: "node:24.21.0-alpine",
  command: ["node", `/integration/${name}.mjs`],
  secret: "gitlab",
  ...extra,
});
/** The article's three: a repository and a tracker, independent, and a runner after the repository. */
const THREE = [integration("repository", { parameters: ["visibility"], teardown: true, members: true }), integration("tracker", { teardown: true }), integration("runner", { after: ["repository"], teardown: true, handsOverSecret: true })];

const profiled = (integrations: unknown[] = THREE, profile = DEFAULT_PROFILE) => related({}, { [profile]: { integrations } });
// A Project that was Ready once, so that what it waits for is told in detail.
/** A Project with one member, so that it asks for access the integrations wait for. */
const DANA = { members: [{ kind: "User", name: "dana", role: "admin" }] };
/** What an answer asks for to give the members access: not the integrations' own hand-over. */
const accessIn = (answer: SyncResponse) => answer.children.filter((child) => ["RoleBinding", "ClusterRole", "ClusterRoleBinding"].includes(child.kind) && child.metadata.name !== HAND_OVER_NAME);
const shop = (spec: Record<string, unknown> = {}, extra: { status?: any } = {}): Project => {
  const made = project(PROJECT, { spec: { integrations: { repository: { parameters: { visibility: "internal" } } }, ...spec }, status: SETTLED, ...extra });
  return { ...made, metadata: { ...made.metadata, uid: "uid-of-shop" } };
};
const active = () => namespaces({ [NAMESPACE]: "Active" });

const jobsIn = (answer: SyncResponse) => answer.children.filter((child): child is Job => child.kind === "Job");
const statusOf = (answer: SyncResponse) => answer.status["integrations"] as IntegrationStatus[];
const phases = (answer: SyncResponse) => Object.fromEntries(statusOf(answer).map((entry) => [entry.name, entry.phase]));
const jobFor = (answer: SyncResponse, name: string) => {
  const job = statusOf(answer).find((entry) => entry.name === name)?.job;
  const found = jobsIn(answer).find((candidate) => candidate.metadata.name === job);
  assert.ok(found, `a Job for ${name}`);
  return found;
};
type EnvVar = { name: string; value?: string; valueFrom?: { configMapKeyRef: { name: string; key: string } } };
type ConfigMap = Child & { data: Record<string, string> };
const inputsIn = (answer: SyncResponse) => answer.children.filter((child): child is ConfigMap => child.kind === "ConfigMap" && child.metadata.namespace === INTEGRATIONS_NAMESPACE);
/**
 * A Job's environment as its Pod starts with it: its own values, and what
 * the kubelet reads from the ConfigMaps the same answer asks for, which
 * Metacontroller writes before the Job.
 */
function envOf(answer: SyncResponse, job: Job): Record<string, string | undefined> {
  const env: EnvVar[] = (job.spec as any).template.spec.containers[0].env;
  return Object.fromEntries(
    env.map(({ name, value, valueFrom }) => {
      if (!valueFrom) return [name, value];
      const from = inputsIn(answer).find((map) => map.metadata.name === valueFrom.configMapKeyRef.name);
      assert.ok(from, `${name} is read from a ConfigMap the answer asks for`);
      return [name, from.data[valueFrom.configMapKeyRef.key]];
    }),
  );
}
/** The children with the input ConfigMaps this answer asks for written, as Metacontroller writes them before any Job. */
const writtenFrom = (answer: SyncResponse, children: ObservedChildren) => withObserved(children, inputsIn(answer));
/** sync's answer once Metacontroller has written the inputs it asks for, which new Jobs wait for. */
function syncWritten(project: Project, children: ObservedChildren, related: RelatedObjects, now = at): SyncResponse {
  return sync(project, writtenFrom(sync(project, children, related, now), children), related, now);
}
function finalizeWritten(project: Project, children: ObservedChildren, related: RelatedObjects, now = at) {
  return finalize(project, writtenFrom(finalize(project, children, related, now), children), related, now);
}

type Outcome = "running" | "complete" | { failed: string };
/** The children with these Jobs observed as the Job controller left them. */
function observed(children: ObservedChildren, jobs: [Job, Outcome][], extra: Child[] = []): ObservedChildren {
  const result = withObserved(children, [...jobs.map(([job]) => job), ...extra]);
  for (const [job, outcome] of jobs) {
    const seen = result[JOBS]![`${job.metadata.namespace}/${job.metadata.name}`] as any;
    if (outcome === "complete") seen.status = { conditions: [{ type: "Complete", status: "True" }] };
    else if (outcome !== "running") seen.status = { conditions: [{ type: "Failed", status: "True", reason: outcome.failed, message: "Job has reached the specified backoff limit" }] };
  }
  return result;
}

/** Syncs until the answer stops changing, each Job completing as soon as it is asked for: the Project as the Job controller and a kubelet would leave it. */
function settled(spec: Record<string, unknown> = {}, integrations: unknown[] = THREE) {
  let children = active();
  for (let round = 0; round < 5; round++) {
    const answer = syncWritten(shop(spec), children, profiled(integrations, (spec["profile"] as string | undefined) ?? DEFAULT_PROFILE), at);
    children = observed(active(), jobsIn(answer).map((job) => [job, "complete"]), answer.children.filter((child) => child.kind !== "Job" && child.kind !== "Namespace"));
  }
  return children;
}

describe("integrations: in order, one Job each", () => {
  test("a Project gets a Job for each integration that waits for none, and the one after another waits", () => {
    const answer = syncWritten(shop(), active(), profiled(), at);
    assert.deepEqual(phases(answer), { repository: "Running", tracker: "Running", runner: "Waiting" });
    assert.deepEqual(jobsIn(answer).map((job) => job.metadata.labels[LABELS.integration]), ["repository", "tracker"]);
    assert.equal(statusOf(answer).find((entry) => entry.name === "runner")?.message, "waiting for repository to succeed");
    assert.deepEqual(verdict(answer).reason, "WaitingForIntegrations");
    assert.match(verdict(answer).message, new RegExp(String.raw`^Namespace ${escaped(NAMESPACE)} is Active; waiting for Job shop-repository-\w+, shop-tracker-\w+, shop-runner-\w+ to be complete\.$`));
  });

  test("a Job runs in the install's Namespace as the Project's own ServiceAccount, with its Secret, the Project's parameters and what it reported before", () => {
    const answer = syncWritten(shop(), active(), profiled(), at);
    const job = jobFor(answer, "repository");
    assert.equal(job.metadata.namespace, INTEGRATIONS_NAMESPACE);
    const pod = (job.spec as any).template.spec;
    assert.equal(pod.serviceAccountName, NAMESPACE, "named after the Project's Namespace, and so no other Project's");
    assert.deepEqual(answer.children.filter((child) => child.kind === "ServiceAccount"), [{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: NAMESPACE, namespace: INTEGRATIONS_NAMESPACE } }]);
    const [container] = pod.containers;
    assert.deepEqual(container.envFrom, [{ secretRef: { name: "gitlab" } }]);
    const env = envOf(answer, job);
    assert.deepEqual(
      { ...env, JOB_NAME: undefined },
      {
        PROJECT,
        PROJECT_NAMESPACE: NAMESPACE,
        INTEGRATION: "repository",
        ACTION: "run",
        JOB_NAME: undefined,
        PROJECT_UID: "uid-of-shop",
        AFTER: "",
        PARAMETERS: '{"visibility":"internal"}',
        MEMBERS: "[]",
        REPORTS: "{}",
      },
    );
    assert.equal(env.JOB_NAME, job.metadata.name);
    assert.equal(pod.restartPolicy, "Never");
    assert.equal(job.metadata.labels[LABELS.project], PROJECT);
  });

  test("an integration's Pod meets Pod Security restricted, field by field, and cannot write to its own filesystem", () => {
    for (const job of jobsIn(syncWritten(shop(), active(), profiled(), at))) {
      const pod = (job.spec as any).template.spec;
      // restricted: never root (and so a user other than 0), the runtime's seccomp profile...
      assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } }, job.metadata.name);
      // ...no privilege escalation and no capability; a read-only root filesystem besides.
      assert.deepEqual(
        pod.containers.map((container: any) => container.securityContext),
        [{ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } }],
        job.metadata.name,
      );
    }
  });

  test("a program that refuses stops its Job at once: the refusal's exit code fails it without its retries", () => {
    const job = jobFor(syncWritten(shop(), active(), profiled(), at), "repository");
    assert.deepEqual((job.spec as any).podFailurePolicy, { rules: [{ action: "FailJob", onExitCodes: { containerName: CONTAINER, operator: "In", values: [REFUSED_EXIT_CODE] } }] });
  });

  test("no ServiceAccount or ConfigMap is asked for a Project whose profile has no integrations", () => {
    const answer = syncWritten(shop({ integrations: undefined }), active(), profiled([]), at);
    assert.deepEqual(answer.children.filter((child) => child.kind === "ServiceAccount" || child.kind === "ConfigMap"), []);
  });

  test("a Job is the same whatever the Project's members and parameters: they reach it once, through the Project's ConfigMap beside it", () => {
    const many = Array.from({ length: 100 }, (_, index) => ({ kind: "User", name: `${"x".repeat(240)}-${index}`, role: index ? "view" : "admin" }));
    // Once the members' access is in place, which the Jobs wait for.
    const started = (spec: Record<string, unknown>) => {
      const first = syncWritten(shop(spec), active(), profiled(), at);
      return syncWritten(shop(spec), observed(active(), [], first.children.filter((child) => child.kind !== "Job" && child.kind !== "Namespace")), profiled(), at);
    };
    const small = started({});
    const large = started({ members: many, integrations: { repository: { parameters: { visibility: "<".repeat(256) } } } });
    const withoutName = (job: Job) => ({ ...job, metadata: { ...job.metadata, name: "" }, spec: { ...job.spec, template: { ...(job.spec as any).template, spec: { ...(job.spec as any).template.spec, containers: [{ ...(job.spec as any).template.spec.containers[0], env: envWithoutJobName(job) }] } } } });
    const envWithoutJobName = (job: Job) => ((job.spec as any).template.spec.containers[0].env as EnvVar[]).filter((each) => each.name !== "JOB_NAME");
    for (const name of ["repository", "tracker"]) assert.deepEqual(withoutName(jobFor(large, name)), withoutName(jobFor(small, name)), name);
    assert.notEqual(jobFor(large, "repository").metadata.name, jobFor(small, "repository").metadata.name, "new inputs are a new Job");
    assert.equal(jobFor(large, "tracker").metadata.name, jobFor(small, "tracker").metadata.name, "one that takes no members runs once");
    assert.deepEqual(inputsIn(large).map((map) => map.metadata), [{ name: NAMESPACE, namespace: INTEGRATIONS_NAMESPACE }, { name: `${NAMESPACE}.reports`, namespace: INTEGRATIONS_NAMESPACE }]);
    assert.equal(JSON.parse(envOf(large, jobFor(large, "repository")).MEMBERS ?? "[]").length, 100);
    assert.equal(envOf(large, jobFor(large, "tracker")).MEMBERS, undefined, "told only to those that take members");
  });

  test("a Project's reports ConfigMap is never another Project's inputs, whatever the names", () => {
    const shops = inputsIn(syncWritten(shop(), active(), profiled(), at)).map((map) => map.metadata.name);
    const reportsOfShop = shops[1]!;
    assert.doesNotMatch(reportsOfShop, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "it could be a Namespace's name, and so another Project's inputs");
    assert.notEqual(reportsOfShop, namespaceNameFor(`${PROJECT}-reports`));
  });

  test("a new Job waits until the ConfigMaps it reads are written as sync asks, and its entry says so", () => {
    const before = sync(shop(), active(), profiled(), at);
    assert.deepEqual(jobsIn(before), []);
    assert.deepEqual(inputsIn(before).map((map) => map.metadata.name), [NAMESPACE, `${NAMESPACE}.reports`]);
    assert.equal(statusOf(before)[0]?.message, `waiting for its inputs, ConfigMaps ${INTEGRATIONS_NAMESPACE}/${NAMESPACE} and ${INTEGRATIONS_NAMESPACE}/${NAMESPACE}.reports, to be written`);
    assert.deepEqual(jobsIn(sync(shop(), writtenFrom(before, active()), profiled(), at)).length, 2);
  });

  test("where a write of the inputs failed, no new Job starts on what sync no longer says; the others' Jobs stay", () => {
    const children = settled();
    const joined = { members: [{ kind: "User", name: "alice@example.com", role: "admin" }] };
    const stale = sync(shop(joined), children, profiled(), at);
    assert.equal(statusOf(stale)[0]?.phase, "Waiting", "the repository, which takes members, waits");
    assert.deepEqual(jobsIn(stale).map((job) => job.metadata.labels[LABELS.integration]), ["tracker", "runner"], "the others' Jobs stay");
    const current = sync(shop(joined), writtenFrom(stale, children), profiled(), at);
    assert.equal(statusOf(current)[0]?.phase, "Running");
    assert.equal(envOf(current, jobFor(current, "repository")).MEMBERS, '[{"kind":"User","name":"alice@example.com","role":"admin"}]');
  });

  test("no Job, and so no ServiceAccount, is asked for before the Project's Namespace is Active", () => {
    for (const children of [namespaces(), namespaces({ [NAMESPACE]: null })]) {
      const answer = syncWritten(shop(), children, profiled(), at);
      assert.deepEqual(jobsIn(answer), []);
      assert.deepEqual(answer.children.filter((child) => child.kind === "ServiceAccount"), []);
      assert.deepEqual(phases(answer), { repository: "Waiting", tracker: "Waiting", runner: "Waiting" });
    }
  });

  test("a Job waits for every piece of the members' access before it is asked for, so that no program acts for a Project whose people cannot yet see it", () => {
    const first = syncWritten(shop(DANA), active(), profiled(), at);
    assert.deepEqual(jobsIn(first), []);
    assert.deepEqual(statusOf(first).map((entry) => entry.message), ["waiting for the Project's Namespace and access", "waiting for the Project's Namespace and access", "waiting for repository to succeed"]);
    const access = accessIn(first);
    assert.ok(access.length > 1, "the members' access is more than one object");
    for (const missing of access) {
      const partly = observed(active(), [], access.filter((piece) => piece !== missing));
      assert.deepEqual(jobsIn(syncWritten(shop(DANA), partly, profiled(), at)), [], `without ${missing.kind} ${missing.metadata.name}`);
    }
    const given = syncWritten(shop(DANA), observed(active(), [], access), profiled(), at);
    assert.deepEqual(jobsIn(given).map((job) => job.metadata.labels[LABELS.integration]), ["repository", "tracker"]);
  });

  test("a Job waits for the quota and the isolation, which hold what its program's effects can reach, and not for the LimitRange", () => {
    const guarded = related({}, { [DEFAULT_PROFILE]: { resourceQuota: { hard: { pods: "20" } }, limitRange: { default: { cpu: "500m" } }, networkPolicy: {}, integrations: THREE } });
    const first = syncWritten(shop(), active(), guarded, at);
    assert.deepEqual(jobsIn(first), []);
    const guardrail = (kind: string) => first.children.filter((child) => child.kind === kind);
    const quotaOnly = observed(active(), [], guardrail("ResourceQuota"));
    assert.deepEqual(jobsIn(syncWritten(shop(), quotaOnly, guarded, at)), [], "the isolation is not there yet");
    const isolationOnly = observed(active(), [], guardrail("NetworkPolicy"));
    assert.deepEqual(jobsIn(syncWritten(shop(), isolationOnly, guarded, at)), [], "the quota is not there yet");
    const both = observed(active(), [], [...guardrail("ResourceQuota"), ...guardrail("NetworkPolicy")]);
    assert.deepEqual(jobsIn(syncWritten(shop(), both, guarded, at)).map((job) => job.metadata.labels[LABELS.integration]), ["repository", "tracker"]);
  });

  test("once a Job has started, a new one no longer waits for the members' access: a binding being put right holds nothing back", () => {
    const first = syncWritten(shop(DANA), active(), profiled(), at);
    const access = accessIn(first);
    const started = syncWritten(shop(DANA), observed(active(), [], access), profiled(), at);
    const withoutRoleBindings = access.filter((piece) => piece.kind !== "RoleBinding");
    const children = observed(active(), [[jobFor(started, "repository"), "complete"], [jobFor(started, "tracker"), "running"]], withoutRoleBindings);
    const answer = syncWritten(shop(DANA), children, profiled(), at);
    assert.equal(phases(answer).runner, "Running");
    assert.ok(jobFor(answer, "runner"));
  });

  test("while the members' access is not in place, Ready waits for it and adds that the integrations start once it is", () => {
    const first = syncWritten(shop(DANA), active(), profiled(), at);
    const { status, reason, message } = verdict(first);
    assert.deepEqual([status, reason], ["False", "WaitingForRoleBindings"]);
    const pieces = accessIn(first).map((piece) => `${piece.kind} ${piece.metadata.name}`);
    for (const piece of pieces) assert.ok(message.includes(piece.split(" ")[1]!), `${piece} is named`);
    assert.match(message, new RegExp(String.raw`^Namespace ${escaped(NAMESPACE)} is Active; waiting for RoleBinding [^;]+;[^;]+;[^;]+ to be as asked; integrations start once they are in place\.$`));
  });

  test("while the guardrails are not in place, Ready names what each later feature holds back, in the features' order", () => {
    const guarded = related({}, { [DEFAULT_PROFILE]: { resourceQuota: { hard: { pods: "20" } }, integrations: THREE } });
    assert.deepEqual(verdict(syncWritten(shop(DANA), active(), guarded, at)), {
      status: "False",
      reason: "WaitingForGuardrails",
      message: `Namespace ${NAMESPACE} is Active; waiting for ResourceQuota project-quota to be as its profile says; members get access once they are in place; integrations start once they are in place.`,
    });
  });

  test("an integration that waits only for the one it runs after is not held back: Ready does not say so", () => {
    const guarded = related({}, { [DEFAULT_PROFILE]: { resourceQuota: { hard: { pods: "20" } }, integrations: THREE } });
    const first = syncWritten(shop(), active(), guarded, at);
    const started = syncWritten(shop(), observed(active(), [], first.children.filter((child) => child.kind === "ResourceQuota")), guarded, at);
    // The quota is gone once the first Jobs run: the runner waits for the repository alone.
    const children = observed(active(), [[jobFor(started, "repository"), "running"], [jobFor(started, "tracker"), "running"]]);
    const answer = syncWritten(shop(), children, guarded, at);
    assert.equal(statusOf(answer).find((entry) => entry.name === "runner")?.message, "waiting for repository to succeed");
    assert.deepEqual(verdict(answer), { status: "False", reason: "WaitingForGuardrails", message: `Namespace ${NAMESPACE} is Active; waiting for ResourceQuota project-quota to be as its profile says.` });
  });

  test("a new Project says WaitingForNamespace while its integrations wait for their inputs to be written, though all it asked for exists", () => {
    const fresh = (spec: Record<string, unknown>, status?: Project["status"]) => project(PROJECT, { spec: { integrations: { repository: { parameters: spec } } }, ...(status ? { status } : {}) });
    const first = sync(fresh({ visibility: "internal" }), active(), profiled(), at);
    assert.equal(verdict(first).reason, "WaitingForNamespace");
    // The inputs as the first answer asked, then the parameters changed: every child asked for exists, but what the Jobs would read is stale.
    const existing = observed(active(), [], first.children.filter((child) => child.kind !== "Namespace"));
    const stale = sync(fresh({ visibility: "private" }, first.status), existing, profiled(), at);
    assert.deepEqual(jobsIn(stale), []);
    assert.deepEqual(stale.children.map((child) => `${child.kind} ${child.metadata.name}`), first.children.map((child) => `${child.kind} ${child.metadata.name}`), "nothing new is asked for");
    assert.deepEqual(verdict(stale), verdict(first));
  });

  test("teardowns wait for no access: they start while the Project's Namespace is itself being deleted", () => {
    const children = { ...settled(), [NAMESPACE_GROUP]: namespaces({ [NAMESPACE]: "Terminating" })[NAMESPACE_GROUP] };
    const answer = finalizeWritten(shop(), children, profiled(), at);
    const teardowns = jobsIn(answer).filter((job) => job.metadata.labels[LABELS.action] === "teardown");
    assert.deepEqual(teardowns.map((job) => job.metadata.labels[LABELS.integration]).sort(), ["runner", "tracker"]);
  });

  test("the Job after another is asked for once that one has completed, and not while it runs", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const running = observed(active(), [[jobFor(first, "repository"), "running"], [jobFor(first, "tracker"), "running"]]);
    assert.deepEqual(phases(syncWritten(shop(), running, profiled(), at)).runner, "Waiting");
    const done = observed(active(), [[jobFor(first, "repository"), "complete"], [jobFor(first, "tracker"), "running"]]);
    const answer = syncWritten(shop(), done, profiled(), at);
    assert.deepEqual(phases(answer), { repository: "Succeeded", tracker: "Running", runner: "Running" });
    assert.ok(jobFor(answer, "runner"));
  });

  test("all completed, the Project is Ready, and every finished Job stays in the answer as the record that it is done", () => {
    const children = settled();
    const answer = syncWritten(shop(), children, profiled(), at);
    assert.deepEqual(phases(answer), { repository: "Succeeded", tracker: "Succeeded", runner: "Succeeded" });
    assert.equal(jobsIn(answer).length, 3);
    assert.deepEqual(verdict(answer), { status: "True", reason: "NamespaceActive", message: `Namespace ${NAMESPACE} is Active, and integrations repository, tracker, runner done.` });
  });

  test("a Job once asked for stays, whatever comes to wait for later", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const started = observed(active(), [[jobFor(first, "repository"), "running"]]);
    const children = { ...started, [NAMESPACE_GROUP]: namespaces({ [NAMESPACE]: "Terminating" })[NAMESPACE_GROUP] };
    assert.deepEqual(jobsIn(syncWritten(shop(), children, profiled(), at)).map((job) => job.metadata.name), [jobFor(first, "repository").metadata.name]);
  });

  test("a profile without integrations adds nothing to the status or the answer", () => {
    const answer = syncWritten(shop({ integrations: undefined }), active(), profiled([]), at);
    assert.equal("integrations" in answer.status, false);
    assert.deepEqual(jobsIn(answer), []);
  });
});

describe("integrations: failures and runs again", () => {
  const failing = () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    return observed(active(), [[jobFor(first, "repository"), "complete"], [jobFor(first, "tracker"), { failed: "BackoffLimitExceeded" }]]);
  };

  /** The children with the repository's Job observed carrying these conditions, and the tracker's complete. */
  const conditioned = (conditions: { type: string; status: string; reason?: string; message?: string }[]) => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const children = observed(active(), [[jobFor(first, "repository"), "running"], [jobFor(first, "tracker"), "complete"]]);
    (children[JOBS]![`${INTEGRATIONS_NAMESPACE}/${jobFor(first, "repository").metadata.name}`] as any).status = { conditions };
    return syncWritten(shop(), children, profiled(), at);
  };

  test("a Job has succeeded only once Complete is True: SuccessCriteriaMet, set while its Pods still stop, or Complete False or Unknown is still running, and the one after it waits", () => {
    for (const conditions of [[{ type: "SuccessCriteriaMet", status: "True" }], [{ type: "Complete", status: "False" }], [{ type: "Complete", status: "Unknown" }], [{ type: "SuccessCriteriaMet", status: "True" }, { type: "Complete", status: "False" }]]) {
      const answer = conditioned(conditions);
      assert.deepEqual(phases(answer), { repository: "Running", tracker: "Succeeded", runner: "Waiting" }, JSON.stringify(conditions));
      assert.equal(verdict(answer).reason, "WaitingForIntegrations");
    }
    const done = conditioned([{ type: "SuccessCriteriaMet", status: "True" }, { type: "Complete", status: "True" }]);
    assert.deepEqual(phases(done), { repository: "Succeeded", tracker: "Succeeded", runner: "Running" });
  });

  test("a Job has failed only once Failed is True: FailureTarget, set while its Pods still stop, or Failed False or Unknown is still running, and Ready says no failure", () => {
    const failing = { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
    for (const conditions of [[{ type: "FailureTarget", status: "True", ...failing }], [{ type: "Failed", status: "False", ...failing }], [{ type: "Failed", status: "Unknown", ...failing }]]) {
      const answer = conditioned(conditions);
      assert.equal(phases(answer).repository, "Running", JSON.stringify(conditions));
      assert.equal(verdict(answer).reason, "WaitingForIntegrations");
    }
    const failed = conditioned([{ type: "FailureTarget", status: "True", ...failing }, { type: "Failed", status: "True", ...failing }]);
    assert.equal(phases(failed).repository, "Failed");
    assert.equal(verdict(failed).reason, "IntegrationFailed");
  });

  test("a teardown waits for its integration's Job until that one is Complete or Failed, not merely on its way there", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const repository = jobFor(first, "repository");
    for (const [type, waits] of [["SuccessCriteriaMet", true], ["FailureTarget", true], ["Complete", false], ["Failed", false]] as const) {
      const children = observed(active(), [[repository, "running"], [jobFor(first, "tracker"), "complete"]]);
      (children[JOBS]![`${INTEGRATIONS_NAMESPACE}/${repository.metadata.name}`] as any).status = { conditions: [{ type, status: "True" }] };
      const answer = finalizeWritten(shop(), children, profiled(), at);
      const tearsDown = jobsIn(answer).some((job) => job.metadata.labels[LABELS.action] === "teardown" && job.metadata.labels[LABELS.integration] === "repository");
      assert.equal(tearsDown, !waits, type);
    }
  });

  test("a failed Job's reason and message are in its entry and in Ready, with the command that runs it again", () => {
    const answer = syncWritten(shop(), failing(), profiled(), at);
    const tracker = statusOf(answer).find((entry) => entry.name === "tracker");
    assert.deepEqual([tracker?.phase, tracker?.reason, tracker?.message], ["Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"]);
    const { reason, message } = verdict(answer);
    assert.equal(reason, "IntegrationFailed");
    assert.match(message, new RegExp(String.raw`^Integration tracker failed: Job ${escaped(INTEGRATIONS_NAMESPACE)}\/shop-tracker-\w+ says BackoffLimitExceeded: Job has reached the specified backoff limit\. Once the cause is put right, run it again: `));
    assert.ok(message.endsWith(`kubectl patch project shop --type=merge -p '{"spec":{"integrations":{"tracker":{"retry":1}}}}'`), message);
  });

  test("the retry Ready names asks for a new Job, and leaves the failed one out, so Metacontroller deletes it", () => {
    const children = failing();
    const failed = syncWritten(shop(), children, profiled(), at);
    const retried = syncWritten(shop({ integrations: { repository: { parameters: { visibility: "internal" } }, tracker: { retry: 1 } } }), children, profiled(), at);
    assert.notEqual(jobFor(retried, "tracker").metadata.name, jobFor(failed, "tracker").metadata.name);
    assert.ok(!jobsIn(retried).some((job) => job.metadata.name === jobFor(failed, "tracker").metadata.name));
    assert.equal(jobFor(retried, "repository").metadata.name, jobFor(failed, "repository").metadata.name, "what succeeded stays");
    assert.equal(verdict(retried).reason, "WaitingForIntegrations");
    assert.match(verdict(retried).message, /and Job shop-tracker-\w+ to be removed\.$/);
  });

  test("a raised revision runs that integration again, and only that one", () => {
    const children = settled();
    const before = syncWritten(shop(), children, profiled(), at);
    const revised = [THREE[0], { ...THREE[1], revision: 1 }, THREE[2]];
    const after = syncWritten(shop(), children, profiled(revised), at);
    assert.deepEqual(phases(after), { repository: "Succeeded", tracker: "Running", runner: "Succeeded" });
    assert.notEqual(jobFor(after, "tracker").metadata.name, jobFor(before, "tracker").metadata.name);
  });

  test("a new member runs again only the integrations that take members", () => {
    const children = settled();
    const joined = syncWritten(shop({ members: [{ kind: "User", name: "alice@example.com", role: "admin" }] }), children, profiled(), at);
    assert.deepEqual(phases(joined), { repository: "Running", tracker: "Succeeded", runner: "Succeeded" });
    assert.equal(envOf(joined, jobFor(joined, "repository")).MEMBERS, '[{"kind":"User","name":"alice@example.com","role":"admin"}]');
  });

  test("while an integration runs again, its status keeps what it reported last", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const reported = observed(active(), [[jobFor(first, "repository"), "complete"]]);
    (reported[JOBS]![`${INTEGRATIONS_NAMESPACE}/${jobFor(first, "repository").metadata.name}`] as any).metadata.annotations[OUTPUTS_ANNOTATION] = '{"url":"https://gitlab.example/shop"}';
    const shown = syncWritten(shop(), reported, profiled(), at);
    assert.deepEqual(statusOf(shown)[0]?.outputs, { url: "https://gitlab.example/shop" });
    const again = syncWritten(shop({ integrations: { repository: { parameters: { visibility: "private" } } } }), reported, profiled(), at);
    assert.deepEqual(statusOf(again)[0]?.outputs, { url: "https://gitlab.example/shop" }, "from the Job that reported it, while it is observed");
    assert.deepEqual(statusOf(syncWritten(shop({ integrations: { repository: { parameters: { visibility: "private" } } } }), active(), profiled(), at))[0]?.outputs, undefined, "nothing is kept without it or a previous status");
    const kept = syncWritten(shop({ integrations: { repository: { parameters: { visibility: "private" } } } }, { status: shown.status }), reported, profiled(), at);
    assert.deepEqual([statusOf(kept)[0]?.phase, statusOf(kept)[0]?.outputs], ["Running", { url: "https://gitlab.example/shop" }]);
  });

  /** The children with the repository's Job complete, having reported `report`. */
  const reportedBy = (first: SyncResponse, report: string, outcome: Outcome = "complete") => {
    const children = observed(active(), [[jobFor(first, "repository"), outcome]]);
    (children[JOBS]![`${INTEGRATIONS_NAMESPACE}/${jobFor(first, "repository").metadata.name}`] as any).metadata.annotations[OUTPUTS_ANNOTATION] = report;
    return children;
  };

  test("what an integration reported is told to the Project's next Jobs in REPORTS, and which they run after in AFTER: nothing a tenant can write", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const children = reportedBy(first, '{"url":"https://gitlab.example/teams/shop","id":"100"}');
    const answer = syncWritten(shop(), children, profiled(), at);
    const runner = envOf(answer, jobFor(answer, "runner"));
    assert.equal(runner.REPORTS, '{"repository":{"url":"https://gitlab.example/teams/shop","id":"100"}}');
    assert.equal(runner.AFTER, "repository");
    const again = syncWritten(shop({ integrations: { repository: { parameters: { visibility: "private" } } } }), children, profiled(), at);
    assert.equal(envOf(again, jobFor(again, "repository")).REPORTS, '{"repository":{"url":"https://gitlab.example/teams/shop","id":"100"}}');
    assert.equal(jobFor(answer, "repository").metadata.name, jobFor(first, "repository").metadata.name, "a report runs nothing again");
  });

  test("once the Job that reported is gone, what it reported comes from the status, to the run after it and to the teardown", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const shown = syncWritten(shop(), reportedBy(first, '{"id":"100"}'), profiled(), at);
    const retried = syncWritten(shop({ integrations: { repository: { parameters: { visibility: "private" } } } }, { status: shown.status }), active(), profiled(), at);
    assert.equal(envOf(retried, jobFor(retried, "repository")).REPORTS, '{"repository":{"id":"100"}}');
  });

  const PRIVATE = { integrations: { repository: { parameters: { visibility: "private" } } } };
  /** The children with these Jobs complete, each having reported its report. */
  const reporting = (children: ObservedChildren, jobs: [Job, string][]) => {
    const result = observed(children, jobs.map(([job]) => [job, "complete"]));
    for (const [job, report] of jobs) (result[JOBS]![`${INTEGRATIONS_NAMESPACE}/${job.metadata.name}`] as any).metadata.annotations[OUTPUTS_ANNOTATION] = report;
    return result;
  };

  test("a re-run Job that reports differently from what the status holds is what counts: in the status, and in REPORTS to the Jobs after it", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const shown = syncWritten(shop(), reportedBy(first, '{"id":"100"}'), profiled(), at);
    const rerun = syncWritten(shop(PRIVATE, { status: shown.status }), active(), profiled(), at);
    const rerunJob = jobFor(rerun, "repository");
    assert.notEqual(rerunJob.metadata.name, jobFor(first, "repository").metadata.name);
    const answer = syncWritten(shop(PRIVATE, { status: shown.status }), reporting(active(), [[rerunJob, '{"id":"200"}']]), profiled(), at);
    assert.deepEqual(statusOf(answer)[0]?.outputs, { id: "200" });
    assert.equal(envOf(answer, jobFor(answer, "runner")).REPORTS, '{"repository":{"id":"200"}}');
  });

  test("while the Job it ran before is still observed beside the re-run, the re-run's report counts, whichever Metacontroller lists first", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const rerun = syncWritten(shop(PRIVATE), active(), profiled(), at);
    const [before, after] = [jobFor(first, "repository"), jobFor(rerun, "repository")];
    for (const jobs of [[[before, '{"id":"100"}'], [after, '{"id":"200"}']], [[after, '{"id":"200"}'], [before, '{"id":"100"}']]] as [Job, string][][]) {
      const answer = syncWritten(shop(PRIVATE), reporting(active(), jobs), profiled(), at);
      assert.deepEqual(statusOf(answer)[0]?.outputs, { id: "200" }, jobs[0]![0].metadata.name);
    }
    const notYet = syncWritten(shop(PRIVATE), observed(reporting(active(), [[before, '{"id":"100"}']]), [[after, "running"]]), profiled(), at);
    assert.deepEqual(statusOf(notYet)[0]?.outputs, { id: "100" }, "until the re-run reports, the one before holds");
  });

  test("a teardown Job's report never stands for its integration's: what the run reported stays in the status and in REPORTS, through the teardown", () => {
    const ONE = [THREE[0]];
    const first = syncWritten(shop(), active(), profiled(ONE), at);
    const ran = reporting(active(), [[jobFor(first, "repository"), '{"id":"100"}']]);
    const tearing = finalizeWritten(shop(), ran, profiled(ONE), at);
    const teardown = jobsIn(tearing).find((job) => job.metadata.labels[LABELS.action] === "teardown");
    assert.ok(teardown, "the repository's teardown starts");
    assert.deepEqual(statusOf(tearing)[0]?.outputs, { id: "100" }, "what it made is shown while it is torn down");
    for (const report of ['{"id":"gone"}', '{"deleted":"true"}']) {
      const unreported = structuredClone(ran);
      delete (unreported[JOBS]![`${INTEGRATIONS_NAMESPACE}/${jobFor(first, "repository").metadata.name}`] as any).metadata.annotations[OUTPUTS_ANNOTATION];
      for (const [children, status] of [[ran, undefined], [unreported, tearing.status]] as const) {
        const torn = finalizeWritten(shop({}, { status }), reporting(children, [[teardown, report]]), profiled(ONE), at);
        assert.deepEqual(statusOf(torn)[0]?.outputs, { id: "100" }, report);
        assert.equal(envOf(torn, teardown).REPORTS, '{"repository":{"id":"100"}}', report);
      }
    }
  });

  test("once the Job that reported is gone, the status's report reaches a teardown in every round, not only the first", () => {
    const ONE = [THREE[0]];
    const first = syncWritten(shop(), active(), profiled(ONE), at);
    const shown = syncWritten(shop(), reportedBy(first, '{"id":"100"}'), profiled(ONE), at);
    // Run again, the new Job not yet reporting; the Project is then deleted.
    const rerun = syncWritten(shop(PRIVATE, { status: shown.status }), active(), profiled(ONE), at);
    const children = observed(active(), [[jobFor(rerun, "repository"), "complete"]]);
    let status = rerun.status;
    for (let round = 0; round < 3; round++) {
      const answer = finalizeWritten(shop(PRIVATE, { status }), children, profiled(ONE), at);
      const teardown = jobsIn(answer).find((job) => job.metadata.labels[LABELS.action] === "teardown");
      assert.ok(teardown, `round ${round}`);
      assert.equal(envOf(answer, teardown).REPORTS, '{"repository":{"id":"100"}}', `round ${round}`);
      status = answer.status;
    }
  });

  test("a Job whose program refused says the program's words in Ready, and how to run it again once an admin has put it right", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const children = reportedBy(first, JSON.stringify({ [REFUSED_OUTPUT]: "GitLab repository teams/shop exists and this Project did not make it, so it is left as it is." }), { failed: "PodFailurePolicy" });
    const { reason, message } = verdict(syncWritten(shop(), children, profiled(), at));
    assert.equal(reason, "IntegrationFailed");
    assert.match(message, new RegExp(String.raw`^Integration repository refused, and Job ${escaped(INTEGRATIONS_NAMESPACE)}\/shop-repository-\w+ stopped: GitLab repository teams\/shop exists and this Project did not make it, so it is left as it is\. Once the cause is put right, run it again: kubectl patch `));
  });

  test("a report that is not a few short strings, 1024 characters of JSON at most, is not shown", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const nine = JSON.stringify(Object.fromEntries(Array.from({ length: 9 }, (_, index) => [`key${index}`, "x"])));
    const long = JSON.stringify(Object.fromEntries(Array.from({ length: 3 }, (_, index) => [`key${index}`, "x".repeat(500)])));
    for (const report of ["not json", '{"token":{"nested":true}}', '["a"]', `{"url":"${"x".repeat(513)}"}`, nine, long]) {
      const children = observed(active(), [[jobFor(first, "repository"), "complete"]]);
      (children[JOBS]![`${INTEGRATIONS_NAMESPACE}/${jobFor(first, "repository").metadata.name}`] as any).metadata.annotations[OUTPUTS_ANNOTATION] = report;
      assert.equal(statusOf(syncWritten(shop(), children, profiled(), at))[0]?.outputs, undefined, report);
    }
  });
});

describe("integrations: what a profile declares and a Project supplies", () => {
  const refusal = (answer: SyncResponse) => {
    const { reason, message } = verdict(answer);
    assert.equal(reason, "InvalidIntegrations");
    return message;
  };

  test("a parameter the integration does not take is refused, naming what it takes", () => {
    const answer = syncWritten(shop({ integrations: { repository: { parameters: { visibility: "public", owner: "me" } } } }), active(), profiled(), at);
    assert.match(refusal(answer), /^spec\.integrations\.repository\.parameters\.owner: repository takes visibility\. Until that is fixed/);
    assert.deepEqual(jobsIn(answer), []);
  });

  test("an integration the profile does not have is refused", () => {
    assert.match(refusal(syncWritten(shop({ integrations: { jira: {} } }), active(), profiled(), at)), /^spec\.integrations\.jira: profile default has no such integration/);
  });

  test("a retry that is not a whole number is refused, naming where", () => {
    assert.match(refusal(syncWritten(shop({ integrations: { tracker: { retry: "soon" } } }), active(), profiled(), at)), /^spec\.integrations\.tracker\.retry: /);
  });

  test("a profile whose after names a later integration, or none, is refused by the rule", () => {
    const backwards = [integration("runner", { after: ["repository"] }), integration("repository")];
    assert.ok(refusal(syncWritten(shop({ integrations: {} }), active(), profiled(backwards), at)).includes(INTEGRATION_RULES.after));
  });

  test("a profile that lists an integration twice, or sets what sync sets, is refused by the rule", () => {
    const twice = [integration("tracker"), integration("tracker")];
    assert.ok(refusal(syncWritten(shop({ integrations: {} }), active(), profiled(twice), at)).includes(INTEGRATION_RULES.unique));
    for (const name of RESERVED_ENV) {
      const setting = [integration("tracker", { env: { [name]: "mine" } })];
      assert.ok(refusal(syncWritten(shop({ integrations: {} }), active(), profiled(setting), at)).includes(INTEGRATION_RULES.env), name);
    }
  });

  test("while what is declared or supplied is wrong, every observed Job stays and none starts", () => {
    const children = settled();
    const answer = syncWritten(shop({ integrations: { jira: {} } }), children, profiled(), at);
    assert.deepEqual(jobsIn(answer).map((job) => job.metadata.name).sort(), Object.keys(children[JOBS]!).map((key) => key.split("/")[1]).sort());
  });

  test("without ProjectProfile default, the built-in default declares none: nothing runs, and a Project that supplies one is told so", () => {
    const plain = project(PROJECT, { spec: {} });
    assert.deepEqual(jobsIn(syncWritten(plain, active(), related({}, {}), at)), []);
    const answer = syncWritten(shop(), active(), related({}, {}), at);
    assert.equal(verdict(answer).reason, "InvalidIntegrations");
    assert.match(verdict(answer).message, /spec\.integrations\.repository: profile default has no such integration/);
  });

  test("while the profile is missing, every observed Job stays, with the ConfigMap they read as it is, and the guardrails say why", () => {
    const children = settled({ profile: "team" });
    const answer = syncWritten(shop({ profile: "team" }), children, related({}, {}), at);
    assert.equal(jobsIn(answer).length, 3);
    assert.equal(verdict(answer).reason, "ProfileNotFound");
    const observedInputs = Object.values(children["ConfigMap.v1"] ?? {}).map((map: any) => map.data);
    assert.equal(observedInputs.length, 2);
    assert.deepEqual(inputsIn(answer).map((map) => map.data), observedInputs);
  });
});

describe("integrations: handing a Secret to the Project's Namespace", () => {
  test("the Project's own ServiceAccount gets a Role on the Secrets its integrations hand over, named after them, and the Namespace's labels name them", () => {
    const answer = syncWritten(shop(), active(), profiled(), at);
    const handOver = answer.children.filter((child) => child.metadata.name === HAND_OVER_NAME);
    assert.deepEqual(handOver, [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: HAND_OVER_NAME, namespace: NAMESPACE },
        rules: [
          { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
          { apiGroups: [""], resources: ["secrets"], resourceNames: ["runner"], verbs: ["update", "patch"] },
        ],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: HAND_OVER_NAME, namespace: NAMESPACE },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: HAND_OVER_NAME },
        subjects: [{ kind: "ServiceAccount", name: NAMESPACE, namespace: INTEGRATIONS_NAMESPACE }],
      },
    ]);
    assert.equal(namespaceIn(answer)?.metadata.labels[`${HAND_OVER_LABEL_PREFIX}runner`], "true");
    assert.equal(namespaceIn(answer)?.metadata.labels[`${HAND_OVER_LABEL_PREFIX}repository`], undefined, "only those that hand one over");
  });

  test("the hand-over stays as it is while the profile is missing, naming the same Secrets, and is not waited for by the members", () => {
    const children = settled();
    const missing = syncWritten(shop(), children, related({}, {}), at);
    assert.deepEqual(missing.children.filter((child) => child.metadata.name === HAND_OVER_NAME), syncWritten(shop(), children, profiled(), at).children.filter((child) => child.metadata.name === HAND_OVER_NAME));
    const members = { members: [{ kind: "User", name: "alice@example.com", role: "admin" }] };
    const withMembers = settled(members);
    assert.equal(verdict(syncWritten(shop(members), withMembers, profiled(), at)).status, "True");
  });
});

describe("integrations: teardown when the Project is deleted", () => {
  const deleting = (spec: Record<string, unknown> = {}) => shop(spec);

  test("finalize tears down last first: the runner, and the tracker, before the repository", () => {
    const answer = finalizeWritten(deleting(), settled(), profiled(), at);
    assert.equal(answer.finalized, false);
    assert.deepEqual(phases(answer), { repository: "TearingDown", tracker: "TearingDown", runner: "TearingDown" });
    const teardowns = jobsIn(answer).filter((job) => job.metadata.labels[LABELS.action] === "teardown");
    assert.deepEqual(teardowns.map((job) => job.metadata.labels[LABELS.integration]).sort(), ["runner", "tracker"]);
    assert.equal(statusOf(answer).find((entry) => entry.name === "repository")?.message, "waiting for runner to tear down");
    assert.equal(verdict(answer).reason, "TearingDown");
  });

  test("every Job that ran stays while finalizing, and no run starts anew", () => {
    const children = settled();
    const answer = finalizeWritten(deleting({ integrations: { tracker: { retry: 5 } } }), children, profiled(), at);
    for (const key of Object.keys(children[JOBS]!)) assert.ok(jobsIn(answer).some((job) => key.endsWith(`/${job.metadata.name}`)), key);
    assert.ok(!jobsIn(answer).some((job) => job.metadata.labels[LABELS.action] === "run" && !(`${INTEGRATIONS_NAMESPACE}/${job.metadata.name}` in children[JOBS]!)));
    assert.ok(answer.children.some((child) => child.kind === "Namespace" && child.metadata.name === NAMESPACE), "the Namespace stays");
  });

  test("the Project goes once every teardown has completed", () => {
    let children = settled();
    for (let round = 0; round < 3; round++) {
      const answer = finalizeWritten(deleting(), children, profiled(), at);
      if (answer.finalized) return assert.deepEqual(phases(answer), { repository: "TornDown", tracker: "TornDown", runner: "TornDown" });
      children = observed(settled(), jobsIn(answer).filter((job) => job.metadata.labels[LABELS.action] === "teardown").map((job) => [job, "complete"]));
    }
    assert.fail("never finalized");
  });

  test("an integration that never ran, or has no teardown, is not torn down", () => {
    assert.equal(finalizeWritten(deleting(), active(), profiled(), at).finalized, true, "nothing ran");
    const noTeardowns = THREE.map((each) => ({ ...each, teardown: false }));
    const answer = finalizeWritten(deleting(), settled({}, noTeardowns), profiled(noTeardowns), at);
    assert.equal(answer.finalized, true);
    assert.deepEqual(phases(answer), { repository: "TornDown", tracker: "TornDown", runner: "TornDown" });
  });

  test("a failed teardown says how to run it again, or go without it; skipTeardown lets the rest go on", () => {
    const first = finalizeWritten(deleting(), settled(), profiled(), at);
    const runner = jobsIn(first).find((job) => job.metadata.labels[LABELS.action] === "teardown" && job.metadata.labels[LABELS.integration] === "runner")!;
    const tracker = jobsIn(first).find((job) => job.metadata.labels[LABELS.action] === "teardown" && job.metadata.labels[LABELS.integration] === "tracker")!;
    const children = observed(settled(), [[runner, { failed: "BackoffLimitExceeded" }], [tracker, "complete"]]);
    const stuck = finalizeWritten(deleting(), children, profiled(), at);
    assert.equal(stuck.finalized, false);
    const { reason, message } = verdict(stuck);
    assert.equal(reason, "TeardownFailed");
    assert.ok(message.includes(`'{"spec":{"integrations":{"runner":{"retry":1}}}}'`), message);
    assert.ok(message.endsWith(`kubectl patch project shop --type=merge -p '{"spec":{"integrations":{"runner":{"skipTeardown":true}}}}'`), message);
    const skipped = finalizeWritten(deleting({ integrations: { repository: { parameters: { visibility: "internal" } }, runner: { skipTeardown: true } } }), children, profiled(), at);
    assert.equal(statusOf(skipped).find((entry) => entry.name === "runner")?.message, "teardown skipped: what it made stays");
    assert.ok(jobsIn(skipped).some((job) => job.metadata.labels[LABELS.action] === "teardown" && job.metadata.labels[LABELS.integration] === "repository"), "the repository's teardown starts");
  });

  test("a teardown waits for its integration's own Job to finish", () => {
    const first = syncWritten(shop(), active(), profiled(), at);
    const running = observed(active(), [[jobFor(first, "repository"), "running"], [jobFor(first, "tracker"), "complete"]]);
    const answer = finalizeWritten(deleting(), running, profiled(), at);
    const repository = statusOf(answer).find((entry) => entry.name === "repository");
    assert.match(repository?.message ?? "", /^waiting for Job shop-repository-\w+ to finish$/);
    assert.ok(!jobsIn(answer).some((job) => job.metadata.labels[LABELS.action] === "teardown" && job.metadata.labels[LABELS.integration] === "repository"));
  });

  test("while the profile is missing, a Project whose integrations ran is not let go: nobody knows their teardowns", () => {
    assert.equal(finalizeWritten(deleting(), settled(), related({}, {}), at).finalized, false);
    assert.equal(finalizeWritten(deleting(), active(), related({}, {}), at).finalized, true);
  });
});

describe("integrations: nothing outside its own places is the Project's", () => {
  test(`a Job labelled as the Project's outside ${INTEGRATIONS_NAMESPACE} is named as a stray and left out, so Metacontroller deletes it`, () => {
    const planted = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "shop-miner", namespace: "kube-system", labels: { [LABELS.integration]: "tracker", [LABELS.action]: "run" } } } as Job;
    const answer = syncWritten(shop(), observed(settled(), [[planted, "running"]]), profiled(), at);
    assert.equal(verdict(answer).reason, "RemovingStrayChildren");
    assert.match(verdict(answer).message, new RegExp(String.raw`^Job kube-system\/shop-miner carry this Project's controller-uid label outside Namespace ${escaped(NAMESPACE)}`));
    assert.ok(!jobsIn(answer).some((job) => job.metadata.name === "shop-miner"));
  });
});

describe("integrations: names", () => {
  test("a Job's name is short enough for its Pods' names to hold it whole, however long the Project's name, and differs with its inputs", () => {
    const longest = "p".repeat(58);
    for (const action of ["run", "teardown"] as const) {
      const name = jobNameFor(longest, "x".repeat(30), action, {});
      assert.ok(name.length <= JOB_NAME_MAX_LENGTH && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name), name);
    }
    // A generated name is its base cut to 58 characters, then 5 of its own.
    assert.equal(JOB_NAME_MAX_LENGTH + "-".length, 63 - 5);
    assert.notEqual(jobNameFor(PROJECT, "tracker", "run", { revision: 1 }), jobNameFor(PROJECT, "tracker", "run", { revision: 2 }));
    assert.notEqual(jobNameFor(PROJECT, "tracker", "run", {}), jobNameFor(PROJECT, "tracker", "teardown", {}));
    assert.notEqual(jobNameFor(longest, "tracker", "run", {}), jobNameFor(longest, "tracker", "teardown", {}), "where the names are cut short");
  });

  test("the names spelled here are sync.ts's and the guardrails'", () => {
    assert.equal(PROFILES, GUARDRAILS_PROFILES);
    assert.equal(DEFAULT_PROFILE, GUARDRAILS_DEFAULT_PROFILE);
    assert.equal(LABELS.project, PROJECT_LABEL);
    assert.deepEqual(integrations.customize?.(project(PROJECT), { profile: "large" }, false), [{ apiVersion: API_VERSION, resource: PROFILE.plural, names: ["large"] }]);
    assert.ok(OUTPUTS_ANNOTATION.startsWith(`${GROUP}/`));
    assert.ok(PROFILES.endsWith(API_VERSION));
  });
});

// feature: integrations & environments
// An integration that takes environments (a runner that deploys into each)
// is told each one's name and Namespace, from the Project's inputs
// ConfigMap, and runs again when they change; the others' Jobs, and so
// every Job made before, keep their names.
describe("integrations & environments: an integration is told the Project's environments", () => {
  const DECLARED = [{ name: "dev" }, { name: "staging" }, { name: "prod" }];
  const told = (environments: { name: string }[]) => environments.map(({ name }) => ({ name, namespace: environmentsNamespace(PROJECT, name) }));
  const TAKING = [integration("repository"), integration("runner", { environments: true })];
  const RUNNER = TAKING.slice(1);
  /** Its answer once every environment's Namespace is Active and what the features before asked for is there, which the Jobs wait for. */
  const started = (environments: { name: string }[], integrations: unknown[] = TAKING) => {
    const spec = { integrations: undefined, ...(environments.length ? { environments } : {}) };
    const made = namespaces(Object.fromEntries((environments.length ? told(environments).map(({ namespace }) => namespace) : [NAMESPACE]).map((namespace) => [namespace, "Active"])));
    const first = syncWritten(shop(spec), made, profiled(integrations), at);
    return syncWritten(shop(spec), observed(made, [], first.children.filter((child) => child.kind !== "Job" && child.kind !== "Namespace")), profiled(integrations), at);
  };

  test("the environments feature names each Namespace as this one spells it", () => {
    for (const [project, environment] of [["shop", "dev"], ["a", "b-c"], ["x".repeat(20), "prod"]] as const) {
      assert.equal(environmentNamespace(project, environment), environmentsNamespace(project, environment));
    }
  });

  test("one that takes them is told the Project's three environments, each name and Namespace, in the order declared", () => {
    const answer = started(DECLARED);
    assert.deepEqual(JSON.parse(envOf(answer, jobFor(answer, "runner"))[ENVIRONMENTS_ENV] ?? "null"), [
      { name: "dev", namespace: `${NAMESPACE}--dev` },
      { name: "staging", namespace: `${NAMESPACE}--staging` },
      { name: "prod", namespace: `${NAMESPACE}--prod` },
    ]);
    assert.equal(envOf(answer, jobFor(answer, "repository"))[ENVIRONMENTS_ENV], undefined, "told only to those that take environments");
  });

  test("an environment that names a Namespace of its own is told by that name", () => {
    const answer = syncWritten(shop({ integrations: undefined, environments: [{ name: "prod", namespace: "payments" }] }), namespaces({ payments: "Active" }), profiled(TAKING), at);
    const inputs = inputsIn(answer).find((map) => map.metadata.name === "payments");
    assert.equal(inputs?.data[INPUT_KEYS.environments], JSON.stringify([{ name: "prod", namespace: "payments" }]));
  });

  test("a Project that declares none tells an empty list: its one Namespace is PROJECT_NAMESPACE", () => {
    const answer = started([]);
    assert.equal(envOf(answer, jobFor(answer, "runner"))[ENVIRONMENTS_ENV], "[]");
  });

  test("an environment added runs again only the integrations that take them; the others' Jobs keep their names", () => {
    const before = started(DECLARED.slice(0, 2));
    const after = started(DECLARED);
    assert.notEqual(jobFor(after, "runner").metadata.name, jobFor(before, "runner").metadata.name);
    assert.equal(jobFor(after, "repository").metadata.name, jobFor(before, "repository").metadata.name);
  });

  test("a profile without it names every Job as before it existed, so no existing Project's Job runs again", () => {
    const plain = [integration("repository")];
    const answer = started(DECLARED, plain);
    // What a Job ran with before the flag existed, in the order the profile's schema reads it.
    const before = { name: "repository", image: plain[0]!.image, command: plain[0]!.command, env: {}, secret: "gitlab", retries: 2, deadlineSeconds: 600, revision: 0, parameters: [], members: false };
    assert.equal(jobFor(answer, "repository").metadata.name, jobNameFor(PROJECT, "repository", "run", { ...before, supplied: { parameters: {}, retry: 0 } }));
    assert.equal(inputsIn(answer).some((map) => INPUT_KEYS.environments in map.data), false);
  });

  test("one that takes them waits, with no Job, while an environment's Namespace is someone else's, and Ready says EnvironmentConflict", () => {
    const spec = { integrations: undefined, environments: [{ name: "dev" }, { name: "prod" }] };
    const [dev, prod] = [`${NAMESPACE}--dev`, `${NAMESPACE}--prod`];
    const made = namespaces({ [dev]: "Active" });
    const answerWith = (integrations: unknown[]) => {
      const theirs: RelatedObjects = { ...profiled(integrations), [NAMESPACE_GROUP]: related({ [prod]: { phase: "Active" } })[NAMESPACE_GROUP]! };
      const first = syncWritten(shop(spec), made, theirs, at);
      return syncWritten(shop(spec), observed(made, [], first.children.filter((child) => child.kind !== "Job" && child.kind !== "Namespace")), theirs, at);
    };
    // The one after it waits with it, and is not waited for either.
    const answer = answerWith([...RUNNER, integration("deploy", { after: ["runner"] })]);
    assert.deepEqual(jobsIn(answer), []);
    assert.equal(statusOf(answer).find((entry) => entry.name === "runner")?.message, `waiting for Namespace ${prod} to be this Project's`);
    assert.equal(verdict(answer).reason, "EnvironmentConflict", verdict(answer).message);
    // One not told them runs.
    assert.deepEqual(jobsIn(answerWith(TAKING)).map((job) => job.metadata.labels?.[LABELS.integration]), ["repository"]);
  });

  test("one that takes them makes no Job for an environment past the bound, however often it is renamed, and Ready says TooManyNamespaces", () => {
    const kept = Array.from({ length: MAX_ENVIRONMENTS }, (_, at) => `${NAMESPACE}--old${at}`);
    const made = namespaces(Object.fromEntries(kept.map((namespace) => [namespace, "Active"])));
    for (const namespace of kept) (made[NAMESPACE_GROUP][namespace]!.metadata as { annotations?: Record<string, string> }).annotations = { [ENVIRONMENT_ANNOTATION]: namespace.slice(namespace.lastIndexOf("-") + 1) };
    for (const name of ["new", "newer", "newest"]) {
      const spec = { integrations: undefined, environments: [{ name: "old0" }, { name }] };
      const first = syncWritten(shop(spec), made, profiled(RUNNER), at);
      const answer = syncWritten(shop(spec), observed(made, [], first.children.filter((child) => child.kind !== "Job" && child.kind !== "Namespace")), profiled(RUNNER), at);
      assert.deepEqual(jobsIn(answer), [], name);
      assert.equal(verdict(answer).reason, "TooManyNamespaces", `${name}: ${verdict(answer).message}`);
    }
  });
});
// end feature: integrations & environments
