// The largest sync request Metacontroller can send about a Project a member
// can make, built part by part as the API server stores each object and
// Metacontroller sends it, so that the webhook's body limit is sized from
// what can really arrive, not from a round number; and the proof that the
// largest such Project leaves room for the largest status sync writes onto
// it (largest-request.test.ts).
//
// - The Project: its spec at the CRD's limits, every character one that Go's
//   JSON writes as six bytes (`<`), and as many annotations as
//   projects.agrrh.com-size lets a member write. The API server keeps it as
//   JSON, escaped as Go escapes it, in one etcd request, which etcd caps at
//   --max-request-bytes: 1.5 MiB by default (measured on the local control
//   plane: one served as 1,572,613 bytes was stored, one a thousand `<`
//   larger was refused with "etcdserver: request is too large").
// - Its status: what sync answers for it, and, for the room it needs, the
//   most any profile can make it say (sixteen integrations reporting all
//   they may).
// - Its children: sync's answer for it, as Metacontroller stores each object
//   (its label, owner reference, managed fields, and its copy of what it
//   applied). Nobody else writes them: k8s.yaml's ownership guard.
// - Related: the same Namespace again, and what the features watch (the
//   default profile and budget as `kubectl apply` stores them, and all the
//   places a budget can give its requester).
// - The CompositeController, as `kubectl apply` stores it.
// Objects that only cluster admins write (a profile, the CompositeController)
// are taken as k8s.yaml ships them: docs/operating.md says when to raise the
// limit for larger ones.
import { API_VERSION, LAST_APPLIED_ANNOTATION, GROUP, NAMESPACES, PARENT, sync, type ObservedChildren, type Project, type SyncResponse } from "../sync.ts";
import { DEFAULT_PROFILE, PROFILE, PROFILES } from "../features/guardrails.ts"; // feature: guardrails
import { MAX_MEMBERS, MEMBER_NAME_MAX_LENGTH, ROLES } from "../features/members.ts"; // feature: members
import { BUDGET, BUDGETS, MAX_PROJECTS, PLACE, PLACES, REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION, placeNameFor, requesterHash, spentNameFor, type Place } from "../features/budget.ts"; // feature: budget
import { INTEGRATION_NAME_MAX_LENGTH, JOBS, OUTPUTS_ANNOTATION } from "../features/integrations.ts"; // feature: integrations
import { GROUP_OF_KIND } from "./helpers.ts";
import { CLIENT_SIDE_APPLY_ANNOTATION, goJson, readManifest } from "./manifest.ts";

/** etcd's default --max-request-bytes, the most one stored object takes. */
export const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** The longest Project name the CRD admits. */
const LONGEST_NAME = "a".repeat(58);
const UID = "00000000-0000-0000-0000-000000000000";
const TIME = "2026-12-01T00:00:00Z";
/** Written by Go as six bytes: the most any one character of a string costs. */
const COSTLIEST = "<";

const { find } = readManifest();
const crd = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
const specSchema = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
const size = find("ValidatingAdmissionPolicy", `${PARENT.plural}.${GROUP}-size`);
/** How many characters of labels and annotations projects.agrrh.com-size lets a member write. */
export const MEMBERS_CHARACTERS = Number(/variables\.characters <= (\d+)/.exec(JSON.stringify(size.spec.validations))?.[1]);

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

/** The longest spec the CRD admits, in the costliest characters. */
function largestSpec() {
  const spec: Record<string, unknown> = {
    description: COSTLIEST.repeat(specSchema.description.maxLength),
    license: COSTLIEST.repeat(specSchema.license.maxLength),
  };
  // feature: members
  const unique = (index: number) => String(index).padStart(3, "0");
  spec["members"] = Array.from({ length: MAX_MEMBERS }, (_, index) => ({
    kind: index % 2 ? "Group" : "User",
    name: COSTLIEST.repeat(MEMBER_NAME_MAX_LENGTH - 3) + unique(index),
    role: ROLES[index % ROLES.length],
  }));
  // end feature: members
  spec["deletionProtection"] = true; // feature: deletion-protection
  spec["profile"] = DEFAULT_PROFILE; // feature: guardrails
  // feature: integrations
  const supplied = specSchema.integrations;
  const parameters = supplied.additionalProperties.properties.parameters;
  spec["integrations"] = Object.fromEntries(
    names(supplied.maxProperties, INTEGRATION_NAME_MAX_LENGTH).map((integration) => [
      integration,
      {
        parameters: Object.fromEntries(names(parameters.maxProperties, 63).map((parameter) => [parameter, COSTLIEST.repeat(parameters.additionalProperties.maxLength)])),
        retry: 2 ** 31 - 1,
        skipTeardown: true,
      },
    ]),
  );
  // end feature: integrations
  return spec;
}

/** The largest Project a member can make, as the API server stores it, without a status. */
function largestProject(): Project & { metadata: any } {
  const spec = largestSpec();
  // All of what a member may write as annotations, in the costliest characters.
  const annotations: Record<string, string> = {};
  annotations[REQUESTER_ANNOTATION] = COSTLIEST.repeat(256); // feature: budget
  annotations[REQUESTER_GROUPS_ANNOTATION] = COSTLIEST.repeat(4096); // feature: budget
  const written = Object.entries(annotations).reduce((sum, [key, value]) => sum + key.length + value.length, 0);
  annotations["filler"] = COSTLIEST.repeat(MEMBERS_CHARACTERS - written - "filler".length);
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

/** The places its requester may hold at most, each as Metacontroller stores it, and the one that says all are taken. */
function largestPlaces(requester: string): Record<string, unknown> {
  const hash = requesterHash(requester);
  const places: Place[] = Array.from({ length: MAX_PROJECTS }, (_, index) => ({
    apiVersion: PLACE.apiVersion,
    kind: PLACE.kind,
    metadata: { name: placeNameFor(hash, index + 1), labels: { "agrrh.com/requester-hash": hash } },
    spec: { project: LONGEST_NAME, place: index + 1 },
  }));
  places.push({
    apiVersion: PLACE.apiVersion,
    kind: PLACE.kind,
    metadata: { name: spentNameFor(hash), labels: { "agrrh.com/requester-hash": hash, "agrrh.com/budget-spent": "true" } },
    spec: { requester, groups: COSTLIEST.repeat(4096), held: MAX_PROJECTS, limit: MAX_PROJECTS, contact: COSTLIEST.repeat(256) },
  });
  return Object.fromEntries(places.map((place) => [place.metadata.name, asStored(place as any)]));
}

export function largestLegalRequest() {
  const parent = largestProject();
  const related: Record<string, Record<string, unknown>> = { [NAMESPACES]: {} };
  related[PROFILES] = { [DEFAULT_PROFILE]: appliedByKubectl(find(PROFILE.kind, DEFAULT_PROFILE)) }; // feature: guardrails
  // feature: budget
  related[BUDGETS] = { [BUDGET.name]: appliedByKubectl(find(BUDGET.kind, BUDGET.name)) };
  related[PLACES] = largestPlaces(parent.metadata.annotations[REQUESTER_ANNOTATION]);
  // end feature: budget
  // Until the answer no longer changes: each round is what Metacontroller
  // made of the one before. It holds the first of its requester's places.
  let children = observedAs({ status: {} as any, children: [] });
  children[PLACES] = { [placeNameFor(requesterHash(parent.metadata.annotations[REQUESTER_ANNOTATION]), 1)]: Object.values(related[PLACES]!)[0] as Record<string, unknown> }; // feature: budget
  let answer = sync(parent, children, related as any);
  for (let round = 0; round < 6; round += 1) {
    children = observedAs(answer);
    related[NAMESPACES] = Object.fromEntries(Object.entries(children[NAMESPACES]));
    const next = sync({ ...parent, status: answer.status } as Project, children, related as any);
    const settled = goJson(next.children) === goJson(answer.children);
    answer = next;
    if (settled) break;
  }
  const stored = { ...parent, status: answer.status } as Project;
  const request = { controller: appliedByKubectl(find("CompositeController")), parent: stored, children, related, finalizing: false };
  return { request, body: goJson(request), answer, parent };
}

/**
 * The most status any profile can make sync write: sixteen integrations of
 * the longest names, each reporting eight of the longest strings, each failed
 * with the program's refusal, on the largest Project.
 */
export function largestStatus(): unknown {
  const parent = largestProject();
  const integrations = names(16, INTEGRATION_NAME_MAX_LENGTH).map((name) => ({ name, image: "x", command: ["x"], parameters: names(16, 63), members: true }));
  const related: Record<string, Record<string, unknown>> = { [NAMESPACES]: {} };
  related[PROFILES] = { [DEFAULT_PROFILE]: { spec: { integrations } } }; // feature: guardrails
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
      job.metadata.annotations[OUTPUTS_ANNOTATION] = JSON.stringify(Object.fromEntries(names(8, 32).map((key) => [key, COSTLIEST.repeat(512)])));
      job.status = { conditions: [{ type: "Failed", status: "True", reason: "PodFailurePolicy", message: COSTLIEST.repeat(1024) }] };
    }
    // end feature: integrations
    answer = sync({ ...parent, status: answer.status } as Project, children, related as any);
  }
  return answer.status;
}
