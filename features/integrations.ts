/**
 * # Integrations: what a Project gets outside the cluster, one Job each
 *
 * A project in a company is more than a Namespace: a GitLab repository with
 * its people in it, a CI runner connected to that repository, a tracker
 * project. Each is the work of an integration: a program an admin declares
 * in the ProjectProfile, run for each Project as a Job in the install's own
 * Namespace `project-integrations`, where its credentials are and where the
 * Project's members have no access. A Project supplies parameters, and
 * chooses nothing that runs.
 *
 * Jobs are immutable, and one left out of an answer is deleted. So a Job's
 * name carries a hash of all it runs with: when that changes (a new
 * revision, other parameters, a retry, a new member where it takes members),
 * the new name is asked for and the old Job is deleted; while it does not,
 * the finished Job stays in every answer as the record that it is done.
 * Integrations run in the profile's order: one is asked for only once each
 * it runs `after` has completed. When the Project is deleted, the finalize
 * hook runs their teardowns, last first, and lets the Project go once they
 * have completed.
 *
 * What a program made outside the cluster is known only from what its own
 * Jobs reported, which sync keeps in the Project's status and tells each
 * later run and teardown (`REPORTS`): never from anything in the Project's
 * Namespace, which its members may write. Each Project's Jobs run as a
 * ServiceAccount of their own, so that what they may write (their reports,
 * the Secrets they hand over) is that Project's alone.
 *
 * What a Project declares (its parameters, its members) and what its
 * integrations reported reach the Jobs through ConfigMaps of the Project's
 * beside them, not in each Job: a Project's sync request then carries that
 * once, whatever the number of integrations and Jobs. A new Job starts only
 * once they say what sync checked for it.
 *
 * Read top to bottom: the names, what a profile declares and a Project
 * supplies, the Jobs, and the plan `sync` and `finalize` compose.
 *
 * Needs: guardrails, members (its ProjectProfile is where integrations are declared, and they are told the members).
 */
import * as v from "valibot";
import type { Child, Readiness } from "../sync.ts";
import type { Feature, Plan } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["integration", "GitLab", "teardown", "teardowns", "project-integrations", "INTEGRATIONS_NAMESPACE"] as const;

// ## The names
//
// Spelled out, not built from sync.ts's names: a feature imports only types
// from sync.ts (integrations.test.ts proves the spellings agree, and
// manifest.test.ts that k8s.yaml's do).
export const INTEGRATIONS_NAMESPACE = "project-integrations";
export const PROFILES = "ProjectProfile.agrrh.com/v1";
export const DEFAULT_PROFILE = "default";
export const JOBS = "Job.batch/v1";
export const SERVICE_ACCOUNTS = "ServiceAccount.v1";
export const CONFIG_MAPS = "ConfigMap.v1";
export const ROLES = "Role.rbac.authorization.k8s.io/v1";
export const ROLE_BINDINGS = "RoleBinding.rbac.authorization.k8s.io/v1";
/** On every Job and its Pods: whose it is, which integration, and whether it runs or tears down. */
export const LABELS = { project: "agrrh.com/project", integration: "agrrh.com/integration", action: "agrrh.com/action" } as const;
/** Where a Job's program reports what users should see (a repository's URL) and what it made: a JSON object of strings. */
export const OUTPUTS_ANNOTATION = "agrrh.com/outputs";
/** The one container of an integration's Pod. */
export const CONTAINER = "integration";
/** What sync tells every program, besides the profile's `env`, which may not use these names. */
export const RESERVED_ENV = ["PROJECT", "PROJECT_UID", "PROJECT_NAMESPACE", "INTEGRATION", "ACTION", "JOB_NAME", "PARAMETERS", "MEMBERS", "AFTER", "REPORTS"] as const;
/** Told, with `environments`, the Project's environments: a name of its own, so that a profile admitted before it says which rule it breaks. */ // feature: integrations & environments
export const ENVIRONMENTS_ENV = "ENVIRONMENTS"; // feature: integrations & environments
/**
 * A program exits so when it will not act until a person does (what it
 * would change is not this Project's): the Job fails at once, without its
 * retries, and what it reported under `refused` says why in Ready.
 */
export const REFUSED_EXIT_CODE = 3;
export const REFUSED_OUTPUT = "refused";
/** On the Project's Namespace, one per integration that hands a Secret of its name over there: what the integration-secrets policy admits. */
export const HAND_OVER_LABEL_PREFIX = "integration-secret.agrrh.com/";

// ## What a profile declares
//
// The admins' part, checked by `sync` as the CRD checks it at admission, in
// the same words: a profile admitted before these rules gets its Projects a
// status that names what is wrong, and no Job.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const INTEGRATION_NAME_MAX_LENGTH = 30;
export const INTEGRATION_RULES = {
  name: `an integration's name is a DNS label of at most ${INTEGRATION_NAME_MAX_LENGTH} characters`,
  unique: "each integration's name appears once",
  after: "after names only integrations listed before this one",
  env: `env may not set ${RESERVED_ENV.join(", ")}: sync sets them`,
  environmentsEnv: `env may not set ${ENVIRONMENTS_ENV}: sync sets it`, // feature: integrations & environments
} as const;

const whole = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const Integration = v.looseObject({
  name: v.pipe(v.string(), v.regex(DNS_LABEL, INTEGRATION_RULES.name), v.maxLength(INTEGRATION_NAME_MAX_LENGTH, INTEGRATION_RULES.name)),
  image: v.pipe(v.string(), v.nonEmpty()),
  command: v.pipe(v.array(v.string()), v.minLength(1)),
  env: v.optional(
    v.pipe(
      v.record(v.string(), v.string()),
      v.check((env) => RESERVED_ENV.every((name) => !(name in env)), INTEGRATION_RULES.env),
      v.check((env) => !(ENVIRONMENTS_ENV in env), INTEGRATION_RULES.environmentsEnv), // feature: integrations & environments
    ),
    {},
  ),
  /** Its Secret of credentials, in INTEGRATIONS_NAMESPACE: the admins create it; sync only names it. */
  secret: v.optional(v.string()),
  /** A ConfigMap mounted at /integration: the program itself, as the webhook runs from one. */
  configMap: v.optional(v.string()),
  after: v.optional(v.array(v.string()), []),
  retries: v.optional(whole(0, 10), 2),
  deadlineSeconds: v.optional(whole(10, 86400), 600),
  teardown: v.optional(v.boolean(), false),
  revision: v.optional(whole(0, 2 ** 31 - 1), 0),
  /** The parameters a Project may supply; no others. */
  parameters: v.optional(v.array(v.string()), []),
  /** Whether it is told the Project's members (and so runs again when they change). */
  members: v.optional(v.boolean(), false),
  /** Whether it is told the Project's environments (and so runs again when they change). */ // feature: integrations & environments
  environments: v.optional(v.boolean(), false), // feature: integrations & environments
  /** Whether it may write one Secret, named after it, into the Project's Namespace. */
  handsOverSecret: v.optional(v.boolean(), false),
});
export type Integration = v.InferOutput<typeof Integration>;

export const Integrations = v.pipe(
  v.array(Integration),
  v.check((list) => new Set(list.map((each) => each.name)).size === list.length, INTEGRATION_RULES.unique),
  v.check((list) => list.every((each, index) => each.after.every((name) => list.slice(0, index).some((before) => before.name === name))), INTEGRATION_RULES.after),
);

// ## What a Project supplies
//
// Per integration: its parameters, a retry counter the Project's admins
// raise to run it again, and, once a teardown cannot succeed, leave to skip
// it. Read by `sync` from the spec as it is, so that a wrong value gets a
// status rather than a refused request. Parameters are settings, not data:
// all of a Project's together are few enough that its Jobs' ConfigMap
// always fits what Metacontroller may write (the CRD holds the same).
export const PARAMETERS_MAX_CHARACTERS = 4096;
export const SUPPLIED_RULES = {
  parameters: `a Project's parameters come to at most ${PARAMETERS_MAX_CHARACTERS} characters, names and values together`,
} as const;
const characters = (text: string) => [...text].length;
const Supplied = v.pipe(v.record(
  v.string(),
  v.looseObject({
    parameters: v.optional(v.record(v.string(), v.string()), {}),
    retry: v.optional(whole(0, 2 ** 31 - 1), 0),
    skipTeardown: v.optional(v.boolean(), false),
  }),
), v.check((supplied) => Object.values(supplied).flatMap(({ parameters }) => Object.entries(parameters)).reduce((sum, [name, value]) => sum + characters(name) + characters(value), 0) <= PARAMETERS_MAX_CHARACTERS, SUPPLIED_RULES.parameters));
type Supplied = v.InferOutput<typeof Supplied>[string];
const NOTHING_SUPPLIED: Supplied = { parameters: {}, retry: 0, skipTeardown: false };

// Members are the members feature's to check; an integration that takes
// them is told each one's kind, name and role, as the spec lists them.
const Members = v.array(v.looseObject({ kind: v.string(), name: v.string(), role: v.string(), namespace: v.optional(v.string()) }));

// feature: integrations & environments
// Environments are the environments feature's to check; an integration that
// takes them is told each one's name and Namespace, as the spec declares
// them, spelled as that feature names them (integrations.test.ts proves it).
const Environments = v.array(v.looseObject({ name: v.string(), namespace: v.nullish(v.string()) }));
export const environmentNamespace = (project: string, environment: string) => `proj-${project}--${environment}`;
// end feature: integrations & environments

const spec = {
  profile: v.nullish(v.string()),
  members: v.nullish(v.array(v.unknown())),
  integrations: v.nullish(v.unknown()),
  environments: v.nullish(v.array(v.unknown())), // feature: integrations & environments
};
const Identified = v.looseObject({ metadata: v.looseObject({ uid: v.nullish(v.string()) }) });

// ## What is observed
//
// A Job is read for its labels, its outcome (the conditions the Job
// controller writes), and what its program reported.
const Condition = v.looseObject({ type: v.string(), status: v.string(), reason: v.nullish(v.string()), message: v.nullish(v.string()) });
const ObservedJob = v.looseObject({
  metadata: v.optional(
    v.looseObject({
      labels: v.nullish(v.record(v.string(), v.string())),
      annotations: v.nullish(v.record(v.string(), v.string())),
    }),
  ),
  status: v.nullish(v.looseObject({ conditions: v.nullish(v.array(Condition)) })),
});
type ObservedJob = v.InferOutput<typeof ObservedJob>;
// The hand-over Role is read for the Secrets it names, so that one kept as
// it is while the profile cannot be read names the same.
const ObservedRole = v.looseObject({ rules: v.nullish(v.array(v.looseObject({ resourceNames: v.nullish(v.array(v.string())) }))) });
// The inputs ConfigMap is read for its data, so that one kept as it is
// while the profile cannot be read says the same.
const ObservedInputs = v.looseObject({ data: v.nullish(v.record(v.string(), v.string())) });
const children = { [JOBS]: ObservedJob, [SERVICE_ACCOUNTS]: v.looseObject({}), [CONFIG_MAPS]: ObservedInputs, [ROLES]: ObservedRole, [ROLE_BINDINGS]: v.looseObject({}) };
const related = { [PROFILES]: v.looseObject({ spec: v.nullish(v.unknown()) }) };

// The previous status, for what a Job reported before it was run again.
const PreviousEntries = v.fallback(
  v.looseObject({ integrations: v.array(v.looseObject({ name: v.string(), outputs: v.optional(v.record(v.string(), v.string())) })) }),
  { integrations: [] },
);

export type Phase = "Waiting" | "Running" | "Succeeded" | "Failed" | "TearingDown" | "TornDown";
export type IntegrationStatus = {
  name: string;
  phase: Phase;
  /** The Job this phase is about, once it is asked for. */
  job?: string;
  reason?: string;
  message?: string;
  outputs?: Record<string, string>;
};

// ## The Jobs

export type Job = {
  apiVersion: "batch/v1";
  kind: "Job";
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec?: Record<string, unknown>;
};
type Action = "run" | "teardown";

// Not node:crypto: a feature imports nothing of the runtime. A 53-bit hash
// (cyrb53) in base 36 is plenty: it tells apart the inputs of one
// integration of one Project, which the name holds too.
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36).padStart(11, "0");
}

/**
 * At most 57 characters: as much of the names as fits, then the hash. The
 * Job controller names each Pod `<Job>-<5 characters>` only while that fits
 * the 63 of a generated name; whole, the Pod's name tells which Job it runs
 * for, which is how k8s.yaml admits a report only from the Job's own Pod.
 */
export const JOB_NAME_MAX_LENGTH = 57;
export function jobNameFor(project: string, integration: string, action: Action, inputs: unknown): string {
  const readable = `${project}-${integration}${action === "teardown" ? "-teardown" : ""}`.slice(0, JOB_NAME_MAX_LENGTH - 12).replace(/-+$/, "");
  return `${readable}-${hash(JSON.stringify([project, integration, action, inputs]))}`;
}

// Each Project's Jobs run as a ServiceAccount of their own in
// INTEGRATIONS_NAMESPACE, named after the Project's Namespace: what one
// Project's integrations may write (their Jobs' reports, the Secrets they
// hand over) is then theirs alone, whatever program runs. Shared by a
// Project's integrations, it is only ever bound in that Project's Namespace.
const serviceAccountFor = (namespace: string): Child => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: namespace, namespace: INTEGRATIONS_NAMESPACE } });

// Its Jobs' inputs, in two ConfigMaps beside them whose keys their env
// reads: what the Project declares, named after its Namespace, and what its
// integrations reported, with `.reports` after it: a dot, which no
// Namespace name holds, so that it is never another Project's inputs
// (`proj-shop-reports` is Project shop-reports'). A Job is sized by the
// profile alone; what the Project's members write, and what its programs
// report, come once per Project, and each ConfigMap, Metacontroller's copy
// of it included, stays within the 256 KiB of annotations an object may
// carry (largest-request.test.ts). The kubelet reads the values when a Pod
// starts, and a new Job is asked for only once they are as sync asks.
export const INPUT_KEYS = {
  members: "members",
  environments: "environments", // feature: integrations & environments
  reports: "reports",
  parameters: (integration: string) => `parameters.${integration}`,
} as const;
export const reportsNameFor = (namespace: string) => `${namespace}.reports`;
type ConfigMap = Child & { data: Record<string, string> };
const configMap = (name: string, data: Record<string, string>): ConfigMap => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: INTEGRATIONS_NAMESPACE }, data });
function inputsFor(namespace: string, read: Read, reports: Reports): ConfigMap[] {
  return [
    configMap(namespace, {
      ...(read.declared.some((each) => each.members) ? { [INPUT_KEYS.members]: JSON.stringify(read.members.map(({ kind, name, role }) => ({ kind, name, role }))) } : {}),
      ...(read.declared.some((each) => each.environments) ? { [INPUT_KEYS.environments]: JSON.stringify(read.environments) } : {}), // feature: integrations & environments
      ...Object.fromEntries(read.declared.map(({ name }) => [INPUT_KEYS.parameters(name), JSON.stringify(read.supplied[name]?.parameters ?? {})])),
    }),
    configMap(reportsNameFor(namespace), { [INPUT_KEYS.reports]: JSON.stringify(reports) }),
  ];
}
const sameData = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => b[key] === value);

/** The Role and RoleBinding that let the Project's integrations write the Secrets they hand over into its Namespace. */
export const HAND_OVER_NAME = "integrations";

function handOver(namespace: string, integrations: string[]): Child[] {
  const metadata = { name: HAND_OVER_NAME, namespace };
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata,
      // RBAC cannot name what a create makes: k8s.yaml's integration-secrets
      // policy admits only the Secrets the Namespace's labels name.
      rules: [
        { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
        { apiGroups: [""], resources: ["secrets"], resourceNames: integrations, verbs: ["update", "patch"] },
      ],
    } as Child,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: HAND_OVER_NAME },
      subjects: [{ kind: "ServiceAccount", name: namespace, namespace: INTEGRATIONS_NAMESPACE }],
    } as Child,
  ];
}

type Reports = Record<string, Record<string, string>>;
type Context = {
  project: string;
  uid: string;
  namespace: string;
  members: v.InferOutput<typeof Members>;
  environments: { name: string; namespace: string }[]; // feature: integrations & environments
  reports: Reports;
};

/** What a Job runs with; any change to it is a new Job. What it is told of earlier reports is not: they change as it runs. */
type Told = {
  members: Context["members"];
  environments: Context["environments"]; // feature: integrations & environments
};
function inputsOf(integration: Integration, supplied: Supplied, context: Told) {
  // What it is told makes its identity, not the flag: a profile that takes
  // none names every Job as before the flag existed, so none runs again.
  const {
    after: _after,
    teardown: _teardown,
    handsOverSecret: _handsOver,
    environments: _environments, // feature: integrations & environments
    ...runs
  } = integration;
  return {
    ...runs,
    supplied: { parameters: supplied.parameters, retry: supplied.retry },
    ...(integration.members ? { members: context.members } : {}),
    ...(integration.environments ? { environments: context.environments } : {}), // feature: integrations & environments
  };
}

function jobFor(integration: Integration, supplied: Supplied, context: Context, action: Action): Job {
  const name = jobNameFor(context.project, integration.name, action, inputsOf(integration, supplied, context));
  const labels = { [LABELS.project]: context.project, [LABELS.integration]: integration.name, [LABELS.action]: action };
  const env = {
    ...integration.env,
    PROJECT: context.project,
    PROJECT_NAMESPACE: context.namespace,
    INTEGRATION: integration.name,
    ACTION: action,
    JOB_NAME: name,
    PROJECT_UID: context.uid,
    AFTER: integration.after.join(","),
  };
  const input = (name: string, key: string) => ({ valueFrom: { configMapKeyRef: { name, key } } });
  const inputs = {
    PARAMETERS: input(context.namespace, INPUT_KEYS.parameters(integration.name)),
    ...(integration.members ? { MEMBERS: input(context.namespace, INPUT_KEYS.members) } : {}),
    ...(integration.environments ? { [ENVIRONMENTS_ENV]: input(context.namespace, INPUT_KEYS.environments) } : {}), // feature: integrations & environments
    // What each integration made before, as only its own Jobs' Pods could
    // have reported it: a program reads nothing a tenant can write to learn that.
    REPORTS: input(reportsNameFor(context.namespace), INPUT_KEYS.reports),
  };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace: INTEGRATIONS_NAMESPACE, labels },
    spec: {
      backoffLimit: integration.retries,
      activeDeadlineSeconds: integration.deadlineSeconds,
      podFailurePolicy: { rules: [{ action: "FailJob", onExitCodes: { containerName: CONTAINER, operator: "In", values: [REFUSED_EXIT_CODE] } }] },
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          serviceAccountName: context.namespace,
          // Pod Security `restricted`, which the Namespace enforces.
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            {
              name: CONTAINER,
              image: integration.image,
              command: integration.command,
              env: [...Object.entries(env).map(([key, value]) => ({ name: key, value })), ...Object.entries(inputs).map(([key, from]) => ({ name: key, ...from }))],
              ...(integration.secret ? { envFrom: [{ secretRef: { name: integration.secret } }] } : {}),
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
              resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
              ...(integration.configMap ? { volumeMounts: [{ name: "program", mountPath: "/integration", readOnly: true }] } : {}),
            },
          ],
          ...(integration.configMap ? { volumes: [{ name: "program", configMap: { name: integration.configMap } }] } : {}),
        },
      },
    },
  };
}

type Outcome = { done: true } | { failed: { reason: string; message: string } } | { running: true };

function outcomeOf(job: ObservedJob): Outcome {
  const holds = (type: string) => job.status?.conditions?.find((condition) => condition.type === type && condition.status === "True");
  if (holds("Complete")) return { done: true };
  const failed = holds("Failed");
  if (failed) return { failed: { reason: failed.reason ?? "Failed", message: failed.message ?? "" } };
  return { running: true };
}

// What users see of a report: a few short strings, at most REPORT_MAX_CHARACTERS
// of JSON (k8s.yaml's ownership guard refuses a longer one), so that every
// report of a Project fits its Jobs' ConfigMap. A program should never put
// a credential there; a report that is not such an object is ignored.
export const REPORT_MAX_CHARACTERS = 1024;
const Outputs = v.pipe(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9]{0,31}$/)), v.pipe(v.string(), v.maxLength(512))), v.maxEntries(8));
function reportOf(job: ObservedJob | undefined): Record<string, string> | undefined {
  const text = job?.metadata?.annotations?.[OUTPUTS_ANNOTATION];
  if (text === undefined || characters(text) > REPORT_MAX_CHARACTERS) return undefined;
  try {
    const parsed = v.safeParse(Outputs, JSON.parse(text));
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}

// ## The plan

type Observed = { key: string; name: string; integration: string; action: string; job: ObservedJob };

/** A Job kept as it is: it never changes (OnDelete), so its name is all Metacontroller needs. */
const keep = ({ name }: Observed): Job => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: INTEGRATIONS_NAMESPACE, labels: {} },
});

/** What the profile or the Project says wrong, as Ready gives it. */
function invalid(problems: string[], project: string): Readiness {
  return {
    status: "False",
    reason: "InvalidIntegrations",
    message: `${[...new Set(problems)].join("; ")}. Until that is fixed, Project ${project}'s integrations are left as they are, and none starts.`,
  };
}
const problemsIn = (where: string, issues: readonly v.BaseIssue<unknown>[]) =>
  issues.map((issue) => `${where}${issue.path?.length ? `.${v.getDotPath(issue)}` : ""}: ${issue.message}`);

/** "BackoffLimitExceeded: Job has reached the specified backoff limit." */
const sentence = ({ reason, message }: { reason: string; message: string }) => `${reason}: ${message}`.replace(/[.:\s]*$/, ".");

/** What Ready says of a failed Job: the program's own words where it refused, the Job's otherwise. */
function whyFailed(name: string, job: ObservedJob, failure: { reason: string; message: string }): string {
  const refused = reportOf(job)?.[REFUSED_OUTPUT];
  const where = `Job ${INTEGRATIONS_NAMESPACE}/${name}`;
  return refused ? `refused, and ${where} stopped: ${refused.replace(/[.\s]*$/, ".")}` : `failed: ${where} says ${sentence(failure)}`;
}

/** The command a Project's admin runs to change what it supplies to one integration. */
const patchCommand = (project: string, integration: string, patch: object) =>
  `kubectl patch project ${project} --type=merge -p '${JSON.stringify({ spec: { integrations: { [integration]: patch } } })}'`;

const profileNameOf = (spec: { profile?: string | null }) => spec.profile || DEFAULT_PROFILE;

type Read = {
  declared: Integration[];
  supplied: Record<string, Supplied>;
  members: Context["members"];
  environments: Context["environments"]; // feature: integrations & environments
};

/** What the profile declares and the Project supplies, checked against each other; or, where that cannot be read, why not. */
function read(
  spec: {
    profile?: string | null;
    members?: unknown[] | null;
    integrations?: unknown;
    environments?: unknown[] | null; // feature: integrations & environments
  },
  related: { [PROFILES]?: Record<string, { spec?: unknown }> },
  project: string,
): Read | { problem?: Readiness } {
  // The built-in default profile, while no ProjectProfile replaces it, declares none.
  const profile = related[PROFILES]?.[profileNameOf(spec)] ?? (profileNameOf(spec) === DEFAULT_PROFILE ? { spec: {} } : undefined);
  // A profile that is missing is the guardrails' to report.
  if (!profile) return {};
  const declared = v.safeParse(Integrations, (profile.spec as { integrations?: unknown } | null | undefined)?.integrations ?? []);
  if (!declared.success) return { problem: invalid(problemsIn(`ProjectProfile ${profileNameOf(spec)}: spec.integrations`, declared.issues), project) };
  const supplied = v.safeParse(Supplied, spec.integrations ?? {});
  if (!supplied.success) return { problem: invalid(problemsIn("spec.integrations", supplied.issues), project) };
  const unknown = Object.entries(supplied.output).flatMap(([name, given]) => {
    const integration = declared.output.find((each) => each.name === name);
    if (!integration) return [`spec.integrations.${name}: profile ${profileNameOf(spec)} has no such integration`];
    return Object.keys(given.parameters)
      .filter((parameter) => !integration.parameters.includes(parameter))
      .map((parameter) => `spec.integrations.${name}.parameters.${parameter}: ${name} takes ${integration.parameters.join(", ") || "no parameters"}`);
  });
  if (unknown.length) return { problem: invalid(unknown, project) };
  // Members are the members feature's to report.
  const members = v.safeParse(Members, spec.members ?? []);
  if (!members.success) return {};
  // feature: integrations & environments
  // Environments are the environments feature's to report; none declared is the Project's one Namespace, PROJECT_NAMESPACE.
  const environments = v.safeParse(Environments, spec.environments ?? []);
  if (!environments.success) return {};
  const told = environments.output.map((environment) => ({ name: environment.name, namespace: environment.namespace ?? environmentNamespace(project, environment.name) }));
  // end feature: integrations & environments
  return {
    declared: declared.output,
    supplied: supplied.output,
    members: members.output,
    environments: told, // feature: integrations & environments
  };
}

/** What the plan needs of the observed Jobs. */
type Observations = {
  observed: Observed[];
  jobOf: (job: Job) => Observed | undefined;
  ran: (integration: string) => boolean;
};

/** Not finalizing: each integration's Job, in the profile's order, so that each `after` is decided first. */
function runs(input: {
  read: Read;
  context: Context;
  seen: Observations;
  notYet?: string;
  unmade?: string[]; // feature: integrations & environments
}): Plan {
  const { read, context, seen, notYet } = input;
  const given = (name: string) => read.supplied[name] ?? NOTHING_SUPPLIED;
  const entries: IntegrationStatus[] = [];
  const jobs: Job[] = [];
  const waitingFor: string[] = [];
  const phases = new Map<string, Phase>();
  let failed: Readiness | undefined;
  let heldBack = false;
  // Those that wait for what another feature reports, and says why: not waited for here, so that Ready says it.
  const reportedElsewhere = new Set<string>();
  for (const integration of read.declared) {
    const job = jobFor(integration, given(integration.name), context, "run");
    const observed = seen.jobOf(job);
    const pending = integration.after.filter((name) => phases.get(name) !== "Succeeded");
    const entry: IntegrationStatus = { name: integration.name, phase: "Waiting", job: job.metadata.name };
    let waitsFor = pending.length ? `${pending.join(", ")} to succeed` : notYet;
    // feature: integrations & environments
    // Told the environments, it is told only Namespaces that are the
    // Project's: one someone else's, or past the bound, is never made, and
    // the environments feature says why.
    if (!waitsFor && integration.environments && input.unmade?.length) {
      waitsFor = `Namespace ${input.unmade.join(", ")} to be this Project's`;
      reportedElsewhere.add(integration.name);
    }
    // end feature: integrations & environments
    if (pending.some((name) => reportedElsewhere.has(name))) reportedElsewhere.add(integration.name);
    if (observed) {
      // A Job once observed stays, whatever else is true now.
      const outcome = outcomeOf(observed.job);
      jobs.push(job);
      entry.phase = "done" in outcome ? "Succeeded" : "failed" in outcome ? "Failed" : "Running";
      if ("failed" in outcome) {
        Object.assign(entry, outcome.failed);
        failed ??= {
          status: "False",
          reason: "IntegrationFailed",
          message:
            `Integration ${integration.name} ${whyFailed(job.metadata.name, observed.job, outcome.failed)}` +
            ` Once the cause is put right, run it again: ${patchCommand(context.project, integration.name, { retry: given(integration.name).retry + 1 })}`,
        };
      }
    } else if (!waitsFor) {
      jobs.push(job);
      entry.phase = "Running";
    } else {
      entry.message = `waiting for ${waitsFor}`;
      heldBack ||= pending.length === 0 && !reportedElsewhere.has(integration.name);
    }
    // While it runs again, what it reported last still holds.
    const outputs = context.reports[integration.name];
    if (outputs) entry.outputs = outputs;
    if (entry.phase !== "Succeeded" && entry.phase !== "Failed" && !reportedElsewhere.has(integration.name)) waitingFor.push(job.metadata.name);
    phases.set(integration.name, entry.phase);
    entries.push(entry);
  }
  const done = entries.filter((entry) => entry.phase === "Succeeded").map((entry) => entry.name);
  return {
    children: jobs,
    status: entries.length ? { integrations: entries } : undefined,
    failed,
    waiting: { reason: "WaitingForIntegrations", notYet: waitingFor.map((name): [string, string] => ["Job", name]), toBe: "complete" },
    heldBack: heldBack ? "integrations start once they are in place" : undefined,
    ready: done.length === read.declared.length && done.length ? `, and integrations ${done.join(", ")} done` : undefined,
  };
}

/**
 * Finalizing: every Job that ran stays as the record of what was made, and
 * the teardowns run last first: one only once each integration that runs
 * after it has torn down, and once its own Jobs have finished.
 */
function teardowns(input: { read: Read; context: Context; seen: Observations; notYet?: string }): Plan {
  const { read, context, seen, notYet } = input;
  const given = (name: string) => read.supplied[name] ?? NOTHING_SUPPLIED;
  const entries: IntegrationStatus[] = [];
  const jobs: Job[] = [];
  const waitingFor: string[] = [];
  const tornDown = new Set<string>();
  let failed: Readiness | undefined;
  for (const integration of [...read.declared].reverse()) {
    const supply = given(integration.name);
    // What it reported stays in its entry while it is torn down, the one
    // place it is kept once its Job is gone, for every later teardown's REPORTS.
    const outputs = context.reports[integration.name];
    if (!integration.teardown || supply.skipTeardown || !seen.ran(integration.name)) {
      tornDown.add(integration.name);
      if (seen.ran(integration.name)) {
        entries.unshift({ name: integration.name, phase: "TornDown", message: integration.teardown ? "teardown skipped: what it made stays" : "it has no teardown", ...(outputs ? { outputs } : {}) });
      }
      continue;
    }
    const job = jobFor(integration, supply, context, "teardown");
    const observed = seen.jobOf(job);
    const entry: IntegrationStatus = { name: integration.name, phase: "TearingDown", job: job.metadata.name, ...(outputs ? { outputs } : {}) };
    const dependents = read.declared.filter((each) => each.after.includes(integration.name) && !tornDown.has(each.name)).map((each) => each.name);
    const running = seen.observed.filter((each) => each.integration === integration.name && each.action === "run" && "running" in outcomeOf(each.job));
    if (observed) {
      const outcome = outcomeOf(observed.job);
      jobs.push(job);
      if ("done" in outcome) {
        entry.phase = "TornDown";
        tornDown.add(integration.name);
      } else if ("failed" in outcome) {
        Object.assign(entry, { phase: "Failed", ...outcome.failed });
        failed ??= {
          status: "False",
          reason: "TeardownFailed",
          message:
            `The teardown of integration ${integration.name} ${whyFailed(job.metadata.name, observed.job, outcome.failed)}` +
            ` Project ${context.project} stays until it completes. Run it again once the cause is put right: ${patchCommand(context.project, integration.name, { retry: supply.retry + 1 })};` +
            ` or let the Project go without it, leaving what it made: ${patchCommand(context.project, integration.name, { skipTeardown: true })}`,
        };
      }
    } else if (dependents.length === 0 && running.length === 0 && !notYet) {
      jobs.push(job);
    } else {
      const waits = [...dependents.map((name) => `${name} to tear down`), ...running.map((each) => `Job ${each.name} to finish`)];
      entry.message = `waiting for ${waits.length ? waits.join(", ") : notYet}`;
    }
    if (!tornDown.has(integration.name)) waitingFor.push(job.metadata.name);
    entries.unshift(entry);
  }
  return {
    children: [...seen.observed.filter((each) => each.action === "run").map(keep), ...jobs],
    status: entries.length ? { integrations: entries } : undefined,
    failed,
    waiting: { reason: "TearingDown", notYet: waitingFor.map((name): [string, string] => ["Job", name]), toBe: "complete" },
    finalized: read.declared.every((integration) => tornDown.has(integration.name)),
  };
}

export const integrations: Feature<typeof spec, typeof children, typeof related> = {
  spec,
  children,
  related,
  elsewhere: {
    owns: (_project, group, key) => (group === JOBS || group === SERVICE_ACCOUNTS || group === CONFIG_MAPS) && key.startsWith(`${INTEGRATIONS_NAMESPACE}/`),
    are: `its Jobs, ServiceAccount and ConfigMap in Namespace ${INTEGRATIONS_NAMESPACE}`,
  },
  customize: (_project, spec) => [{ apiVersion: "agrrh.com/v1", resource: "projectprofiles", names: [profileNameOf(spec)] }],
  refusals: ["InvalidIntegrations"],
  reasons: ["IntegrationFailed", "WaitingForIntegrations", "TeardownFailed", "TearingDown"],
  plan: ({ project, spec, namespace, active, owned, children, related, earlierInPlace, finalizing }) => {
    const observed: Observed[] = Object.entries(children[JOBS]).flatMap(([key, job]) => {
      const labels = job.metadata?.labels ?? {};
      const integration = labels[LABELS.integration];
      const action = labels[LABELS.action];
      return integration && action ? [{ key, name: key.slice(key.indexOf("/") + 1), integration, action, job }] : [];
    });
    const byKey = new Map(observed.map((job) => [job.key, job]));
    const seen: Observations = {
      observed,
      jobOf: (job) => byKey.get(`${job.metadata.namespace}/${job.metadata.name}`),
      ran: (name) => observed.some((job) => job.integration === name && job.action === "run"),
    };
    // What cannot be read leaves everything as it is: nothing starts, and
    // nothing is torn down, so a Project whose integrations ran stays. The
    // hand-over is kept naming the Secrets it names.
    const observedRole = children[ROLES][`${namespace}/${HAND_OVER_NAME}`];
    const handedOver = (observedRole?.rules ?? []).flatMap((rule) => rule.resourceNames ?? []);
    const handingOver = (names: string[]) => ({
      children: names.length ? handOver(namespace, names) : [],
      labels: Object.fromEntries(names.map((name) => [`${HAND_OVER_LABEL_PREFIX}${name}`, "true"])),
    });
    const serviceAccount = serviceAccountFor(namespace);
    const inputs = read(spec, related, project.metadata.name);
    if (!("declared" in inputs)) {
      const kept = handingOver(handedOver);
      const keptInputs = [namespace, reportsNameFor(namespace)].flatMap((name) => {
        const observedMap = children[CONFIG_MAPS][`${INTEGRATIONS_NAMESPACE}/${name}`];
        return observedMap ? [configMap(name, observedMap.data ?? {})] : [];
      });
      const identity = observed.length ? [serviceAccount, ...keptInputs] : [];
      return { children: [...observed.map(keep), ...identity, ...kept.children], labels: kept.labels, invalid: inputs.problem, finalized: finalizing ? observed.length === 0 : undefined };
    }
    // The last report of each integration, which is what it made: from the
    // Job it runs now, or one it ran before while that is still observed
    // (being deleted), or, once that is gone, from the status. Never from a
    // teardown: what it reports is what it removed.
    const previous = v.parse(PreviousEntries, project.status ?? {}).integrations;
    const reports: Reports = Object.fromEntries(
      inputs.declared.flatMap((integration) => {
        const { name } = integration;
        const current = jobNameFor(project.metadata.name, name, "run", inputsOf(integration, inputs.supplied[name] ?? NOTHING_SUPPLIED, inputs));
        const ran = observed.filter((job) => job.integration === name && job.action === "run").sort((a, b) => Number(b.name === current) - Number(a.name === current));
        const report = ran.map((job) => reportOf(job.job)).find(Boolean) ?? previous.find((entry) => entry.name === name)?.outputs;
        return report ? [[name, report]] : [];
      }),
    );
    const uid = v.parse(Identified, project).metadata.uid ?? "";
    const context: Context = {
      project: project.metadata.name,
      uid,
      namespace,
      members: inputs.members,
      environments: inputs.environments, // feature: integrations & environments
      reports,
    };
    // A new Job waits for the Namespace, and for what the features before
    // this one guard with (once any has started, none waits for them again);
    // then for its inputs to be written as asked, so that it never runs on
    // what sync no longer says, where a write of them failed.
    const inPlace = finalizing || (active && (earlierInPlace || observed.length > 0));
    const wanted = inputsFor(namespace, inputs, reports);
    const written = wanted.every((map) => sameData(children[CONFIG_MAPS][`${INTEGRATIONS_NAMESPACE}/${map.metadata.name}`]?.data ?? {}, map.data));
    const notYet = !inPlace ? "the Project's Namespace and access" : written ? undefined : `its inputs, ConfigMaps ${wanted.map((map) => `${INTEGRATIONS_NAMESPACE}/${map.metadata.name}`).join(" and ")}, to be written`;
    const plan = finalizing
      ? teardowns({ read: inputs, context, seen, notYet })
      : runs({
          read: inputs,
          context,
          seen,
          notYet,
          unmade: inputs.environments.filter((told) => !owned[told.namespace]).map((told) => told.namespace), // feature: integrations & environments
        });
    const started = plan.children.length > 0 || observed.length > 0;
    const handOvers = handingOver(started && !finalizing ? inputs.declared.filter((each) => each.handsOverSecret).map((each) => each.name) : handedOver);
    const placed = observed.length > 0 || (!finalizing && inPlace);
    const identity = placed && inputs.declared.length > 0 ? [serviceAccount, ...wanted] : [];
    return { ...plan, children: [...identity, ...plan.children, ...handOvers.children], labels: handOvers.labels };
  },
};
