// Builders for the requests the tests send, so each test states only what it
// is about, and the table the runtime test and the benchmark print.
import { readFileSync } from "node:fs";
import * as v from "valibot";
import {
  API_VERSION,
  CLUSTER_ROLES,
  CLUSTER_ROLE_BINDINGS,
  DEFAULT_PROFILE,
  LAST_APPLIED_ANNOTATION,
  LIMIT_RANGES,
  NAMESPACES,
  NETWORK_POLICIES,
  PARENT,
  PROFILE,
  PROFILES,
  RESOURCE_QUOTAS,
  ROLE_BINDINGS,
  type ProfileSpec,
  type ClusterRole,
  type ClusterRoleBinding,
  type Guardrail,
  type Namespace,
  ObservedChildren,
  RelatedObjects,
  type Project,
  SyncRequest,
  type RoleBinding,
  type SyncResponse,
} from "../sync.ts";

// ## Requests for the transport's tests
//
// http.test.ts and process.test.ts test what any hook of this shape does
// over HTTP, so they build their requests from sync.ts's schemas alone and
// need no change when sync.ts is rewritten for another resource.

/** A parent just created, with a name and nothing else, and nothing observed or related yet. */
export function newParentRequest(name: string): SyncRequest {
  const emptyGroups = (schema: { entries: object }) => Object.fromEntries(Object.keys(schema.entries).map((key) => [key, {}]));
  // Parsed, so a schema that asks for more says so here rather than in a puzzling 422.
  return v.parse(SyncRequest, {
    parent: { apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name } },
    children: emptyGroups(ObservedChildren),
    related: emptyGroups(RelatedObjects),
  });
}

/** A parent whose name is too long for the Namespace (or any object) a controller would name after it. */
export const UNUSABLE_NAME = "x".repeat(250);

export type FixtureName = "first-sync" | "steady-sync" | "members-sync";

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
    metadata: { name, ...(generation === null ? {} : { generation }) },
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { status }),
  };
}

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
  return {
    [NAMESPACES]: byName,
    [ROLE_BINDINGS]: {},
    [CLUSTER_ROLES]: {},
    [CLUSTER_ROLE_BINDINGS]: {},
    [RESOURCE_QUOTAS]: {},
    [LIMIT_RANGES]: {},
    [NETWORK_POLICIES]: {},
  };
}

export type AccessObject = RoleBinding | ClusterRole | ClusterRoleBinding;
const ACCESS_KINDS = new Set(["RoleBinding", "ClusterRole", "ClusterRoleBinding"]);

/** The access objects an answer asks for: its bindings and the role that reads the Project. */
export function accessIn(answer: SyncResponse): AccessObject[] {
  return answer.children.filter((child): child is AccessObject => ACCESS_KINDS.has(child.kind));
}

/** The guardrails an answer asks for, from the Project's profile or kept as observed. */
export function guardrailsIn(answer: SyncResponse): Guardrail[] {
  return answer.children.filter((child): child is Guardrail => child.kind !== "Namespace" && !ACCESS_KINDS.has(child.kind));
}

/** Where Metacontroller files a child of each kind the CompositeController owns. */
export const GROUP_OF_KIND: Record<string, keyof ObservedChildren> = {
  Namespace: NAMESPACES,
  RoleBinding: ROLE_BINDINGS,
  ClusterRole: CLUSTER_ROLES,
  ClusterRoleBinding: CLUSTER_ROLE_BINDINGS,
  ResourceQuota: RESOURCE_QUOTAS,
  LimitRange: LIMIT_RANGES,
  NetworkPolicy: NETWORK_POLICIES,
};

/**
 * The same children, with these objects observed as Metacontroller applied
 * them: with its copy of what it applied and its label, namespaced ones under
 * `<namespace>/<name>`, cluster-wide ones by name.
 */
export function withObserved(children: ObservedChildren, objects: (AccessObject | Guardrail)[]): ObservedChildren {
  const observed = structuredClone(children);
  for (const object of objects) {
    const { name } = object.metadata;
    const metadata = {
      ...object.metadata,
      uid: `uid-of-${name}`,
      labels: { ...("labels" in object.metadata ? object.metadata.labels : {}), "controller-uid": "uid-of-project" },
      annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(object) },
    };
    const key = "namespace" in object.metadata ? `${object.metadata.namespace}/${name}` : name;
    const group = GROUP_OF_KIND[object.kind];
    if (!group) throw new Error(`no group of children for ${object.kind}`);
    (observed[group] as Record<string, unknown>)[key] = { ...structuredClone(object), metadata };
  }
  return observed;
}

type Owner = { kind: string; name: string; controller?: boolean };

/**
 * What the customize hook's rules picked up: Namespaces by name, nothing
 * unless given; and ProjectProfiles by name, by default an empty `default`,
 * which asks for no guardrails.
 */
export function related(
  byName: Record<string, { phase?: string; owners?: Owner[] }> = {},
  profiles: Record<string, ProfileSpec | Record<string, unknown>> = { [DEFAULT_PROFILE]: {} },
): RelatedObjects {
  const namespaces: NonNullable<RelatedObjects[typeof NAMESPACES]> = {};
  for (const [name, { phase, owners }] of Object.entries(byName)) {
    const ownerReferences = owners?.map((owner) => ({ apiVersion: API_VERSION, uid: `uid-of-${owner.name}`, ...owner }));
    namespaces[name] = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, ...(ownerReferences ? { ownerReferences } : {}) },
      ...(phase ? { status: { phase } } : {}),
    };
  }
  const profileObjects = Object.fromEntries(
    Object.entries(profiles).map(([name, spec]) => [name, { apiVersion: API_VERSION, kind: PROFILE.kind, metadata: { name }, spec }]),
  );
  return { [NAMESPACES]: namespaces, [PROFILES]: profileObjects };
}

/** The first Namespace an answer asks for: the Project's own, where it asks for one. */
export function namespaceIn(answer: SyncResponse): Namespace | undefined {
  return answer.children.find((child): child is Namespace => child.kind === "Namespace");
}

/** The RoleBindings an answer asks for. */
export function roleBindingsIn(answer: SyncResponse): RoleBinding[] {
  return answer.children.filter((child): child is RoleBinding => child.kind === "RoleBinding");
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
