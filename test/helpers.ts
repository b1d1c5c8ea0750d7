// Builders for the requests the tests send, so each test states only what it
// is about, and the table the runtime test and the benchmark print.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as v from "valibot";
import {
  API_VERSION,
  LAST_APPLIED_ANNOTATION,
  NAMESPACE_ANNOTATIONS,
  NAMESPACE_PREFIX,
  NAMESPACES,
  PARENT,
  type Child,
  type Namespace,
  ObservedChildren,
  RelatedObjects,
  type Project,
  SyncRequest,
  sync,
  type SyncResponse,
} from "../sync.ts";
import { DEFAULT_PROFILE, PROFILE, PROFILES, type ProfileSpec } from "../features/guardrails.ts"; // feature: guardrails

// ## Requests for the transport's tests
//
// http.test.ts and process.test.ts test what any hook of this shape does
// over HTTP, so they build their requests from sync.ts's schemas alone and
// need no change when sync.ts is rewritten for another resource.

/** Every group a schema declares, empty. */
const emptyGroups = (schema: { entries: object }) => Object.fromEntries(Object.keys(schema.entries).map((key) => [key, {}]));

/** A parent just created, with a name and nothing else, and nothing observed or related yet. */
export function newParentRequest(name: string): SyncRequest {
  // Parsed, so a schema that asks for more says so here rather than in a puzzling 422.
  return v.parse(SyncRequest, {
    parent: { apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name } },
    children: emptyGroups(ObservedChildren),
    related: emptyGroups(RelatedObjects),
  });
}

/** A parent whose name is too long for the Namespace (or any object) a controller would name after it. */
export const UNUSABLE_NAME = "x".repeat(250);

/** A file of test/fixtures, without `.json`: `first-sync`, `steady-sync`, and one per feature that needs its own. */
export type FixtureName = string;

/** A request as Metacontroller sends it, fresh for every call so a test may change it. */
export function fixture(name: FixtureName): { parent: Project; children: ObservedChildren; related: RelatedObjects } & Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`fixtures/${name}.json`, import.meta.url), "utf8"));
}

interface ProjectFields {
  spec?: Project["spec"];
  status?: Project["status"];
  /** Defaults to 1, as for a Project just created; `null` leaves it out. */
  generation?: number | null;
}

export function project(name: string, { spec, status, generation = 1 }: ProjectFields = {}): Project {
  return {
    apiVersion: API_VERSION,
    kind: PARENT.kind,
    metadata: { name, uid: `uid-of-${name}`, ...(generation === null ? {} : { generation }) },
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { status }),
  };
}

// ## The Namespace's annotations
//
// The spec fields the core copies onto the Namespace are sync.ts's
// NAMESPACE_ANNOTATIONS, and only there: the tests build their specs and
// expectations from it, so that a copy with other fields, or none, changes
// that list and the CRD, and its tests still pass.

/** The spec fields that become the Namespace's annotations, in sync.ts's order. */
export const ANNOTATION_FIELDS: readonly string[] = Object.keys(NAMESPACE_ANNOTATIONS);
/** What each becomes when the spec does not say. */
export const DEFAULT_ANNOTATIONS: Readonly<Record<string, string>> = { ...NAMESPACE_ANNOTATIONS };
/** A spec that gives each of them a value of its own, told apart by `tag`: as many annotations, each `<tag> <field>`. */
export const annotationsSpec = (tag: string): Record<string, string> => Object.fromEntries(ANNOTATION_FIELDS.map((field) => [field, `${tag} ${field}`]));
/** The same spec with every field set to `value`. */
export const eachAnnotation = <T>(value: T): Record<string, T> => Object.fromEntries(ANNOTATION_FIELDS.map((field) => [field, value]));
/** The annotations of a Namespace in an answer, by any name. */
export const annotationsOf = (namespace: Namespace | undefined): Record<string, string | undefined> | undefined => namespace?.metadata.annotations;

/**
 * The Namespace a Project of this name owns, as its users are told: sync.ts's
 * prefix, then the name. Stated here, not taken from namespaceNameFor, so
 * that a test of that rule can still fail.
 */
export const namespaceOf = (projectName: string) => `${NAMESPACE_PREFIX}${projectName}`;

/** The text as a regular expression matches it, literally: messages name objects by the names the code defines, dots and all. */
export const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The status of a Project that was Ready once: what it waits for later (an
 * edit of what it asks for) is told in detail, where a Project first
 * being filled says WaitingForNamespace until all it asks for exists.
 */
export const SETTLED = {
  conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-29T00:00:00Z", reason: "NamespaceActive", message: "Namespace was Active." }],
};

/** Observed Namespaces by name, each in the given phase (`null` for none), and no other child. */
export function namespaces(phases: Record<string, string | null> = {}): ObservedChildren {
  const byName: ObservedChildren[typeof NAMESPACES] = {};
  for (const [name, phase] of Object.entries(phases)) {
    byName[name] = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
      ...(phase === null ? {} : { status: { phase } }),
    };
  }
  return { ...emptyGroups(ObservedChildren), [NAMESPACES]: byName };
}

/** The children of these kinds that an answer asks for. */
export function childrenOfKind<T extends Child>(answer: SyncResponse, kinds: readonly T["kind"][]): T[] {
  return answer.children.filter((child): child is T => kinds.includes(child.kind));
}

/** Where Metacontroller files a child of each kind the CompositeController owns: `RoleBinding` in `RoleBinding.rbac.authorization.k8s.io/v1`. */
export const GROUP_OF_KIND: Record<string, string> = Object.fromEntries(
  Object.keys(ObservedChildren.entries).map((group) => [group.slice(0, group.indexOf(".")), group]),
);

/**
 * The same children, with these objects observed as Metacontroller applied
 * them: with its copy of what it applied and its label, namespaced ones under
 * `<namespace>/<name>`, cluster-wide ones by name.
 */
export function withObserved(children: ObservedChildren, objects: Child[]): ObservedChildren {
  const observed = structuredClone(children);
  for (const object of objects) {
    const { name } = object.metadata;
    const metadata = {
      ...object.metadata,
      uid: `uid-of-${name}`,
      labels: { ...("labels" in object.metadata ? (object.metadata.labels as Record<string, string>) : {}), "controller-uid": "uid-of-project" },
      annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(object) },
    };
    const key = object.metadata.namespace ? `${object.metadata.namespace}/${name}` : name;
    const group = GROUP_OF_KIND[object.kind];
    if (!group) throw new Error(`no group of children for ${object.kind}`);
    (observed[group] as Record<string, unknown>)[key] = { ...structuredClone(object), metadata };
  }
  return observed;
}

type Owner = { kind: string; name: string; controller?: boolean };

// What the customize hook's rules picked up: Namespaces by name, nothing
// unless given.
// feature: guardrails
// And ProjectProfiles by name, by default an empty `default`, which asks for
// no guardrails.
// end feature: guardrails
export function related(
  byName: Record<string, { phase?: string; owners?: Owner[]; labels?: Record<string, string> }> = {},
  profiles: Record<string, ProfileSpec | Record<string, unknown>> = { [DEFAULT_PROFILE]: {} }, // feature: guardrails
): RelatedObjects {
  const namespaces: NonNullable<RelatedObjects[typeof NAMESPACES]> = {};
  for (const [name, { phase, owners, labels }] of Object.entries(byName)) {
    const ownerReferences = owners?.map((owner) => ({ apiVersion: API_VERSION, uid: `uid-of-${owner.name}`, ...owner }));
    namespaces[name] = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, ...(labels ? { labels } : {}), ...(ownerReferences ? { ownerReferences } : {}) },
      ...(phase ? { status: { phase } } : {}),
    };
  }
  const objects: RelatedObjects = { ...emptyGroups(RelatedObjects), [NAMESPACES]: namespaces };
  // feature: guardrails
  objects[PROFILES] = Object.fromEntries(
    Object.entries(profiles).map(([name, spec]) => [name, { apiVersion: PROFILE.apiVersion, kind: PROFILE.kind, metadata: { name }, spec }]),
  );
  // end feature: guardrails
  return objects;
}

/** The first Namespace an answer asks for: the Project's own, where it asks for one. */
export function namespaceIn(answer: SyncResponse): Namespace | undefined {
  return answer.children.find((child): child is Namespace => child.kind === "Namespace");
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

export const clock = (iso: string) => () => new Date(iso);

/** A Markdown table, columns padded so it also reads well in a terminal. */
export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/** Two moments for `sync` to stamp transitions with: a first sync, and a later one. */
export const at = clock("2026-11-30T12:00:00.123Z");
export const later = clock("2026-12-01T08:30:00Z");

export function ready(answer: SyncResponse) {
  const [condition] = answer.status.conditions;
  if (!condition) throw new Error("the answer has no Ready condition");
  return condition;
}

/** What a user reads off the Ready condition, without the times. */
export function verdict(answer: SyncResponse) {
  const { status, reason, message } = ready(answer);
  return { status, reason, message };
}

export type NeverLoseCase = { parent: Project; children: ObservedChildren; related?: RelatedObjects };

/** Namespaces observed Active, each with annotations of its own besides those sync writes. */
export function having(...names: string[]): ObservedChildren {
  const children = namespaces(Object.fromEntries(names.map((name) => [name, "Active"])));
  for (const name of names) {
    children[NAMESPACES][name]!.metadata = { name, annotations: { ...annotationsSpec("what was there"), "team.example.com/owner": "ops" } };
  }
  return children;
}

/**
 * The invariant: an answer that refuses for `reason` still holds every
 * Namespace observed, and, unless `annotationsFollowSpec`, the annotations
 * sync owns exactly as they were.
 */
export function assertKeepsEveryNamespace(reason: string, { parent, children, related: relatedObjects = related() }: NeverLoseCase, annotationsFollowSpec = false) {
  const answer = sync(parent, children, relatedObjects, at);
  assert.equal(ready(answer).reason, reason);
  for (const name of Object.keys(children[NAMESPACES])) {
    const kept = answer.children.find((child) => child.kind === "Namespace" && child.metadata.name === name) as Namespace | undefined;
    assert.ok(kept, `${name} is in the answer`);
    if (!annotationsFollowSpec) assert.deepEqual(kept.metadata.annotations, annotationsSpec("what was there"));
  }
}
