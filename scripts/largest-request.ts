// The largest sync request Metacontroller can send about a Project a tenant
// can make, built part by part as the API server stores each object and
// Metacontroller sends it, so that the webhook's body limit is sized from
// what can really arrive, not from a round number; and the proof that the
// largest such Project leaves room for the largest status sync writes onto
// it (largest-request.test.ts).
//
// - The Project: its spec at the CRD's limits, every character one that
//   JSON writes as six bytes however deep it is nested (a control character:
//   Go writes `<` so too, but JavaScript, which writes what sync puts in a
//   string, does not), and as many annotations as the size policy
//   (`<the CRD>-size`) lets a tenant write. What a limit counts in
//   characters of JSON already written (a program's report) costs most in
//   `<` instead: one character there, six bytes once Go writes it. The API
//   server keeps it as JSON, escaped as Go escapes it, in one etcd request,
//   which etcd caps at --max-request-bytes: 1.5 MiB by default (measured on
//   the local control plane: one served as 1,572,613 bytes was stored, one a
//   thousand `<` larger was refused with "etcdserver: request is too
//   large").
// - Its status: what sync answers for it, and, for the room it needs, the
//   most the features can make it say.
// feature: integrations
//   (Sixteen integrations reporting all they may.)
// end feature: integrations
// - Its children: sync's answer for it, as Metacontroller stores each object
//   (its label, owner reference, managed fields, and its copy of what it
//   applied). Nobody else writes them: k8s.yaml's ownership guard.
// feature: integrations
//   Its integrations are the most a profile may declare, each taking
//   members and parameters, each reporting all it may, and the Project is
//   being deleted: every teardown's Job beside every run's.
// end feature: integrations
// - Related: the same Namespace again, and what the features watch, as
//   `kubectl apply` stores it.
// feature: guardrails
//   The profile.
// end feature: guardrails
// feature: budget
//   The budget, and all the places it can give its requester.
// end feature: budget
// - The CompositeController, as `kubectl apply` stores it.
// What only cluster admins write (the CompositeController, and what the
// features read of theirs but the most a tenant can make of it) is taken as
// short as k8s.yaml writes it: docs/operating.md says when to raise the
// limit for larger ones.
import { readFileSync, writeFileSync } from "node:fs";
import { API_VERSION, LAST_APPLIED_ANNOTATION, GROUP, NAMESPACE_ANNOTATIONS, NAMESPACES, PARENT, PROJECT_NAME_MAX_LENGTH, finalize, sync, type ObservedChildren, type Project, type SyncResponse } from "../sync.ts";
import { BUILT_IN_PROFILE, DEFAULT_PROFILE, PROFILE, PROFILES } from "../features/guardrails.ts"; // feature: guardrails
import { MAX_MEMBERS, MAX_OWN_MEMBERS, MEMBER_NAME_MAX_LENGTH, ROLES } from "../features/members.ts"; // feature: members
import { MAX_ENVIRONMENTS } from "../features/environments.ts"; // feature: environments
import { BUDGET, BUDGETS, BUILT_IN_BUDGET, MAX_PROJECTS, PLACE, PLACES, REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION, REQUESTER_HASH_LABEL, SPENT_LABEL, placeNameFor, requesterHash, spentNameFor, type Place } from "../features/budget.ts"; // feature: budget
import { INTEGRATION_NAME_MAX_LENGTH, JOBS, OUTPUTS_ANNOTATION, PARAMETERS_MAX_CHARACTERS, REPORT_MAX_CHARACTERS } from "../features/integrations.ts"; // feature: integrations
import { CONFIG_MAPS as SHARED_CONFIG_MAPS, SECRETS as SHARED_SECRETS } from "../features/shared.ts"; // feature: shared
import { GROUP_OF_KIND } from "../test/helpers.ts";
import { CLIENT_SIDE_APPLY_ANNOTATION, goJson, readManifest } from "./manifest.ts";

/** etcd's default --max-request-bytes, the most one stored object takes. */
export const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** The longest Project name the CRD admits. */
const LONGEST_NAME = "a".repeat(PROJECT_NAME_MAX_LENGTH);
const UID = "00000000-0000-0000-0000-000000000000";
const TIME = "2026-12-01T00:00:00Z";
/** Written as six bytes at least, and more in a JSON string in a string: the most any one character costs. */
const COSTLIEST = "\u0001";
/** One character of JSON text that Go writes as six bytes: the most a character of a report costs. */
const COSTLIEST_IN_JSON = "<";

const { find } = readManifest();
const crd = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
const specSchema = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
const size = find("ValidatingAdmissionPolicy", `${PARENT.plural}.${GROUP}-size`);
/** How many characters of labels and annotations the size policy lets a tenant write. */
export const WRITABLE_CHARACTERS = Number(/variables\.characters <= (\d+)/.exec(JSON.stringify(size.spec.validations))?.[1]);

/** The managed fields the API server records for whoever wrote these fields: a key per field, lists whole. */
function fieldsOf(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return {};
  return Object.fromEntries([[".", {}], ...Object.entries(value).map(([key, child]) => [`f:${key}`, fieldsOf(child)])]);
}

/** A child as the API server keeps what Metacontroller applied for this Project. */
function asStored(child: SyncResponse["children"][number]): any {
  const applied = { ...child, metadata: { ...child.metadata, labels: { ...("labels" in child.metadata ? child.metadata.labels : {}), "controller-uid": UID } } };
  const metadata = {
    ...applied.metadata,
    annotations: { ...("annotations" in child.metadata ? child.metadata.annotations : {}), [LAST_APPLIED_ANNOTATION]: goJson(applied) },
    ownerReferences: [{ apiVersion: API_VERSION, kind: PARENT.kind, name: LONGEST_NAME, uid: UID, controller: true, blockOwnerDeletion: true }],
    uid: UID,
    resourceVersion: "1234567",
    creationTimestamp: TIME,
  };
  const managedFields = [{ manager: "metacontroller", operation: "Update", apiVersion: child.apiVersion, time: TIME, fieldsType: "FieldsV1", fieldsV1: fieldsOf({ ...applied, apiVersion: undefined, kind: undefined }) }];
  const stored: any = { ...applied, metadata: { ...metadata, managedFields } };
  if (child.kind === "Namespace") {
    stored.metadata.labels["kubernetes.io/metadata.name"] = child.metadata.name;
    Object.assign(stored, { spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } });
  }
  return stored;
}

function observedAs(answer: SyncResponse): ObservedChildren {
  const children = Object.fromEntries(Object.values(GROUP_OF_KIND).map((group) => [group, {}])) as any;
  for (const child of answer.children) {
    const key = "namespace" in child.metadata ? `${child.metadata.namespace}/${child.metadata.name}` : child.metadata.name;
    children[GROUP_OF_KIND[child.kind] ?? ""][key] = asStored(child);
  }
  return children;
}

/** An object as `kubectl apply` stores it: with its copy of what was applied. */
function appliedByKubectl(object: any): any {
  return { ...object, metadata: { ...object.metadata, uid: UID, resourceVersion: "1", creationTimestamp: TIME, annotations: { [CLIENT_SIDE_APPLY_ANNOTATION]: goJson(object) } } };
}

/** `n` distinct names of `length` letters, as a name or key must be. */
const names = (n: number, length: number) => Array.from({ length: n }, (_, index) => `x${index.toString(36).padStart(length - 1, "0")}`);

// feature: integrations
const profileIntegrations = find("CustomResourceDefinition", `projectprofiles.${GROUP}`).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.integrations;
/** The longest names an admin gives parameters. */
const PARAMETER_NAMES = names(16, 63);
/** The most integrations a profile declares, each taking members, sixteen parameters, and a teardown, and otherwise as short as can be. */
const MOST_INTEGRATIONS = names(profileIntegrations.maxItems, INTEGRATION_NAME_MAX_LENGTH).map((name) => ({
  name,
  image: "x",
  command: ["x"],
  parameters: PARAMETER_NAMES,
  members: true,
  teardown: true,
}));
/** All a program may report, which sync shows: as long a report as the ownership guard lets its Job's Pod write. */
const LARGEST_REPORT = (() => {
  const keys = names(8, 32);
  const overhead = JSON.stringify(Object.fromEntries(keys.map((key) => [key, ""]))).length;
  const each = Math.floor((REPORT_MAX_CHARACTERS - overhead) / keys.length);
  return JSON.stringify(Object.fromEntries(keys.map((key) => [key, COSTLIEST_IN_JSON.repeat(each)])));
})();
/** Every Job of the answer completed, having reported all it may. */
function everyJobDone(children: ObservedChildren): void {
  for (const job of Object.values<any>(children[JOBS] ?? {})) {
    job.metadata.annotations[OUTPUTS_ANNOTATION] = LARGEST_REPORT;
    job.status = { conditions: [{ type: "Complete", status: "True" }] };
  }
}
// end feature: integrations

/** The longest spec the CRD admits, in the costliest characters. */
function largestSpec() {
  // Every field the Namespace's annotations come from, as long as the CRD lets it be.
  const spec: Record<string, unknown> = Object.fromEntries(Object.keys(NAMESPACE_ANNOTATIONS).map((field) => [field, COSTLIEST.repeat(specSchema[field].maxLength)]));
  // feature: members
  const unique = (index: number) => String(index).padStart(3, "0");
  spec["members"] = Array.from({ length: MAX_MEMBERS }, (_, index) => ({
    kind: index % 2 ? "Group" : "User",
    name: COSTLIEST.repeat(MEMBER_NAME_MAX_LENGTH - 3) + unique(index),
    role: ROLES[index % ROLES.length],
  }));
  // end feature: members
  // feature: environments
  // As many Namespaces as a Project may own, kept ones included
  // (features/environments.ts): as many environments as the CRD admits, each an existing Namespace of
  // the longest name: the longest Project name leaves no room for
  // proj-<name>--<environment>.
  // Each Namespace's members, the Project's and its environment's own, as many as one may have. // feature: members
  const own = (spec["members"] as Record<string, unknown>[]).splice(0, MAX_OWN_MEMBERS); // feature: members
  spec["environments"] = Array.from({ length: MAX_ENVIRONMENTS }, (_, index) => ({
    name: `e${index}`,
    namespace: "n".repeat(61) + String(index).padStart(2, "0"),
    members: own, // feature: members
  }));
  // end feature: environments
  spec["deletionProtection"] = true; // feature: deletion-protection
  spec["profile"] = DEFAULT_PROFILE; // feature: guardrails
  // feature: integrations
  // Supplied to the profile's integrations: all the characters of parameters
  // a Project may, in the longest names and values, and a retry for each.
  const supplied = specSchema.integrations;
  const valueMax = supplied.additionalProperties.properties.parameters.additionalProperties.maxLength;
  let left = PARAMETERS_MAX_CHARACTERS;
  spec["integrations"] = Object.fromEntries(
    MOST_INTEGRATIONS.slice(0, supplied.maxProperties).map(({ name: integration, parameters }) => {
      const given: Record<string, string> = {};
      for (const parameter of parameters) {
        if (left <= parameter.length) break;
        const value = Math.min(valueMax, left - parameter.length);
        given[parameter] = COSTLIEST.repeat(value);
        left -= parameter.length + value;
      }
      return [integration, { parameters: given, retry: 2 ** 31 - 1 }];
    }),
  );
  // end feature: integrations
  return spec;
}

/** The largest Project a tenant can make, as the API server stores it, without a status. */
function largestProject(): Project & { metadata: any } {
  const spec = largestSpec();
  // All of what a tenant may write as annotations, in the costliest characters.
  const annotations: Record<string, string> = {};
  annotations[REQUESTER_ANNOTATION] = COSTLIEST.repeat(256); // feature: budget
  annotations[REQUESTER_GROUPS_ANNOTATION] = COSTLIEST.repeat(4096); // feature: budget
  const written = Object.entries(annotations).reduce((sum, [key, value]) => sum + key.length + value.length, 0);
  annotations["filler"] = COSTLIEST.repeat(WRITABLE_CHARACTERS - written - "filler".length);
  return {
    apiVersion: API_VERSION,
    kind: PARENT.kind,
    metadata: {
      name: LONGEST_NAME,
      uid: UID,
      generation: 1,
      resourceVersion: "1234567",
      creationTimestamp: TIME,
      finalizers: [`metacontroller.io/compositecontroller-${find("CompositeController").metadata.name}`],
      annotations,
      managedFields: [
        { manager: "kubectl-create", operation: "Update", apiVersion: API_VERSION, time: TIME, fieldsType: "FieldsV1", fieldsV1: { "f:metadata": fieldsOf({ annotations }), "f:spec": fieldsOf(spec) } },
        { manager: "metacontroller", operation: "Update", apiVersion: API_VERSION, time: TIME, fieldsType: "FieldsV1", fieldsV1: { "f:metadata": { "f:finalizers": {} } } },
      ],
    },
    spec,
  };
}

// feature: budget
/** The places its requester may hold at most, each as Metacontroller stores it, and the one that says all are taken. */
function largestPlaces(requester: string): Record<string, unknown> {
  const hash = requesterHash(requester);
  const places: Place[] = Array.from({ length: MAX_PROJECTS }, (_, index) => ({
    apiVersion: PLACE.apiVersion,
    kind: PLACE.kind,
    metadata: { name: placeNameFor(hash, index + 1), labels: { [REQUESTER_HASH_LABEL]: hash } },
    spec: { requester, project: LONGEST_NAME, place: index + 1 },
  }));
  places.push({
    apiVersion: PLACE.apiVersion,
    kind: PLACE.kind,
    metadata: { name: spentNameFor(hash), labels: { [REQUESTER_HASH_LABEL]: hash, [SPENT_LABEL]: "true" } },
    spec: { requester, groups: COSTLIEST.repeat(4096), held: MAX_PROJECTS, limit: MAX_PROJECTS, contact: COSTLIEST.repeat(256) },
  });
  return Object.fromEntries(places.map((place) => [place.metadata.name, asStored(place as any)]));
}
// end feature: budget

export function largestLegalRequest() {
  const parent = largestProject();
  const related: Record<string, Record<string, unknown>> = { [NAMESPACES]: {} };
  // feature: guardrails
  // The built-in default as an admin would apply it.
  const profile: any = { apiVersion: PROFILE.apiVersion, kind: PROFILE.kind, metadata: { name: DEFAULT_PROFILE }, spec: structuredClone(BUILT_IN_PROFILE) };
  profile.spec.integrations = MOST_INTEGRATIONS; // feature: integrations
  related[PROFILES] = { [DEFAULT_PROFILE]: appliedByKubectl(profile) };
  // end feature: guardrails
  // feature: shared
  // Shareable sources are the admins' alone, and k8s.yaml ships none: each
  // byte of one costs every request about three (docs/operating.md).
  related[SHARED_SECRETS] = {};
  related[SHARED_CONFIG_MAPS] = {};
  // end feature: shared
  // feature: budget
  related[BUDGETS] = { [BUDGET.name]: appliedByKubectl({ apiVersion: BUDGET.apiVersion, kind: BUDGET.kind, metadata: { name: BUDGET.name }, spec: BUILT_IN_BUDGET }) };
  related[PLACES] = largestPlaces(parent.metadata.annotations[REQUESTER_ANNOTATION]);
  // end feature: budget
  // Until the answer no longer changes: each round is what Metacontroller
  // made of the one before.
  // It holds the first of its requester's places. // feature: budget
  let children = observedAs({ status: {} as any, children: [] });
  children[PLACES] = { [placeNameFor(requesterHash(parent.metadata.annotations[REQUESTER_ANNOTATION]), 1)]: Object.values(related[PLACES]!)[0] as Record<string, unknown> }; // feature: budget
  let answer = sync(parent, children, related as any);
  let finalizing = false;
  const settle = () => {
    for (let round = 0; round < 20; round += 1) {
      const before = children;
      children = observedAs(answer);
      // feature: integrations
      // A Job never changes once made (OnDelete): one asked for again by name is the one observed.
      for (const key of Object.keys(children[JOBS] ?? {})) if (before[JOBS]?.[key]) children[JOBS]![key] = before[JOBS][key];
      everyJobDone(children);
      // end feature: integrations
      related[NAMESPACES] = Object.fromEntries(Object.entries(children[NAMESPACES]));
      const next = (finalizing ? finalize : sync)({ ...parent, status: answer.status } as Project, children, related as any);
      const settled = goJson(next.children) === goJson(answer.children);
      answer = next;
      if (settled) return;
    }
    throw new Error("the largest Project's answers never settle");
  };
  settle();
  // feature: integrations
  // Then deleted, until the last of its teardowns has completed beside its runs.
  finalizing = true;
  settle();
  // end feature: integrations
  // With the most status sync can write, which another state of it gives.
  const stored = { ...parent, status: largestStatus() } as Project;
  const request = { controller: appliedByKubectl(find("CompositeController")), parent: stored, children, related, finalizing };
  return { request, body: goJson(request), answer, parent };
}

// The most status the features can make sync write, on the largest Project.
// feature: integrations
// Sixteen integrations of the longest names, each reporting eight of the
// longest strings, each failed with the program's refusal.
// end feature: integrations
export function largestStatus(): unknown {
  const parent = largestProject();
  const related: Record<string, Record<string, unknown>> = { [NAMESPACES]: {} };
  // feature: guardrails
  related[PROFILES] = { [DEFAULT_PROFILE]: { spec: {} } };
  (related[PROFILES][DEFAULT_PROFILE] as any).spec.integrations = MOST_INTEGRATIONS; // feature: integrations
  // end feature: guardrails
  // feature: budget
  related[BUDGETS] = { [BUDGET.name]: { spec: { projects: MAX_PROJECTS, contact: COSTLIEST.repeat(256) } } };
  related[PLACES] = {};
  // end feature: budget
  let children = observedAs({ status: {} as any, children: [] });
  let answer = sync(parent, children, related as any);
  for (let round = 0; round < 6; round += 1) {
    children = observedAs(answer);
    related[PLACES] = Object.fromEntries(Object.entries(children[PLACES] ?? {})); // feature: budget
    // feature: integrations
    for (const job of Object.values<any>(children[JOBS] ?? {})) {
      job.metadata.annotations[OUTPUTS_ANNOTATION] = LARGEST_REPORT;
      job.status = { conditions: [{ type: "Failed", status: "True", reason: "PodFailurePolicy", message: COSTLIEST.repeat(1024) }] };
    }
    // end feature: integrations
    answer = sync({ ...parent, status: answer.status } as Project, children, related as any);
  }
  return answer.status;
}

/** The default body limit for a largest request of that many bytes: 5 % more, for what Kubernetes adds that the build leaves out, in whole KiB. */
export const bodyLimitFor = (bytes: number) => Math.ceil((bytes * 1.05) / 1024) * 1024;

const MAIN_PATH = new URL("../main.ts", import.meta.url);
const OPERATING_PATH = new URL("../docs/operating.md", import.meta.url);

/** Writes main.ts's DEFAULT_BODY_LIMIT_BYTES, the figure its comment gives, and docs/operating.md's table of settings, from the largest request; says what it did. */
export function writeBodyLimit(): string {
  const bytes = Buffer.byteLength(largestLegalRequest().body);
  const limit = bodyLimitFor(bytes);
  const rewritten = [
    [MAIN_PATH, (text: string) => text.replace(/(make is )[0-9,]+( bytes)/, `$1${bytes.toLocaleString("en-US")}$2`).replace(/(DEFAULT_BODY_LIMIT_BYTES = )[0-9_]+;/, `$1${limit.toLocaleString("en-US").replaceAll(",", "_")};`)],
    [OPERATING_PATH, (text: string) => text.replace(/(\| `BODY_LIMIT_BYTES` \| `)[0-9]+(` \|)/, `$1${limit}$2`)],
  ] as const;
  const changed = rewritten.filter(([path, rewrite]) => {
    const before = readFileSync(path, "utf8");
    const after = rewrite(before);
    if (after !== before) writeFileSync(path, after);
    return after !== before;
  });
  if (changed.length === 0) return "main.ts: the default body limit is up to date";
  return `main.ts and docs/operating.md: the default body limit rewritten, ${limit} bytes for a largest request of ${bytes}`;
}

// `npm run manifest` runs this first, as k8s.yaml's code checksum covers main.ts.
if (import.meta.filename === process.argv[1]) console.log(writeBodyLimit());
