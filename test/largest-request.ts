// The largest sync request Metacontroller can send about a Project the API
// server has stored, built part by part as the API server stores each object
// and Metacontroller sends it, so that the webhook's body limit is sized from
// what can really arrive, not from a round number (largest-request.test.ts).
//
// - The Project: its spec at the CRD's limits, every character one that Go's
//   JSON writes as six bytes (`<`), and then as large as the API server
//   stores a custom resource at all. It keeps one as JSON, escaped as Go
//   escapes it, in one etcd request, which etcd caps at --max-request-bytes:
//   1.5 MiB by default. Measured on the local control plane: a Project
//   served as 1,572,613 bytes was stored; one with a thousand `<` more was
//   refused with "etcdserver: request is too large". An admin member can
//   grow their own Project that far with annotations.
// - Its children: sync's answer for it, as Metacontroller stores each object
//   (its label, owner reference, managed fields, and its copy of what it
//   applied). Nobody else writes them: k8s.yaml's ownership guard.
// - Related: the same Namespace again, and what the features watch (the
//   default profile and budget as `kubectl apply` stores them; the Project
//   has no requester, whose other Projects would come too).
// - The CompositeController, as `kubectl apply` stores it.
// Objects that only cluster admins write (a profile, the CompositeController)
// are taken as k8s.yaml ships them: docs/operating.md says when to raise the
// limit for larger ones.
import { API_VERSION, LAST_APPLIED_ANNOTATION, GROUP, NAMESPACES, PARENT, sync, type ObservedChildren, type Project, type SyncResponse } from "../sync.ts";
import { DEFAULT_PROFILE, PROFILE, PROFILES } from "../features/guardrails.ts"; // feature: guardrails
import { MAX_MEMBERS, MEMBER_NAME_MAX_LENGTH, ROLES } from "../features/members.ts"; // feature: members
import { BUDGET, BUDGETS, SIBLINGS } from "../features/budget.ts"; // feature: budget
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
  return spec;
}

export function largestLegalRequest() {
  const related: Record<string, Record<string, unknown>> = { [NAMESPACES]: {} };
  related[PROFILES] = { [DEFAULT_PROFILE]: appliedByKubectl(find(PROFILE.kind, DEFAULT_PROFILE)) }; // feature: guardrails
  // feature: budget
  // A Project with a requester brings their other Projects too, each up to
  // this size again: docs/budget.md says what that costs, and whom.
  related[BUDGETS] = { [BUDGET.name]: appliedByKubectl(find(BUDGET.kind, BUDGET.name)) };
  related[SIBLINGS] = {};
  // end feature: budget
  const parent: Project & { metadata: any } = {
    apiVersion: API_VERSION,
    kind: PARENT.kind,
    metadata: {
      name: LONGEST_NAME,
      uid: UID,
      generation: 1,
      resourceVersion: "1234567",
      creationTimestamp: TIME,
      managedFields: [{ manager: "kubectl-create", operation: "Update", apiVersion: API_VERSION, time: TIME, fieldsType: "FieldsV1", fieldsV1: { "f:spec": fieldsOf(largestSpec()) } }],
    },
    spec: largestSpec(),
  };
  // Until the answer no longer changes: Namespace, then guardrails, then access.
  let children = observedAs({ status: {} as any, children: [] });
  let answer = sync(parent, children, related as any);
  for (let round = 0; round < 5; round += 1) {
    children = observedAs(answer);
    related[NAMESPACES] = Object.fromEntries(Object.entries(children[NAMESPACES]));
    const next = sync({ ...parent, status: answer.status } as Project, children, related as any);
    const settled = goJson(next.children) === goJson(answer.children);
    answer = next;
    if (settled) break;
  }
  parent.status = answer.status as Project["status"];
  // The rest of what etcd takes, as annotations an admin member may write.
  const room = ETCD_MAX_REQUEST_BYTES - Buffer.byteLength(goJson({ ...parent, metadata: { ...parent.metadata, annotations: { filler: "" } } }));
  parent.metadata.annotations = { filler: COSTLIEST.repeat(Math.floor(room / 6)) + "x".repeat(room % 6) };
  const request = { controller: appliedByKubectl(find("CompositeController")), parent, children, related, finalizing: false };
  return { request, body: goJson(request), answer };
}
