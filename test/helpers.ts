// Builders for the requests the tests send, so each test states only what it
// is about, and the table the runtime test and the benchmark print.
import { readFileSync } from "node:fs";
import {
  CLUSTER_ROLES,
  CLUSTER_ROLE_BINDINGS,
  LAST_APPLIED_ANNOTATION,
  NAMESPACES,
  ROLE_BINDINGS,
  type ClusterRole,
  type ClusterRoleBinding,
  type Namespace,
  type ObservedChildren,
  type Project,
  type RelatedObjects,
  type RoleBinding,
  type SyncResponse,
} from "../sync.ts";

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
    apiVersion: "agrrh.com/v1",
    kind: "Project",
    metadata: { name, ...(generation === null ? {} : { generation }) },
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { status }),
  };
}

/** Observed Namespaces by name, each in the given phase (`null` for none), and no RoleBindings. */
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
  return { [NAMESPACES]: byName, [ROLE_BINDINGS]: {}, [CLUSTER_ROLES]: {}, [CLUSTER_ROLE_BINDINGS]: {} };
}

export type AccessObject = RoleBinding | ClusterRole | ClusterRoleBinding;

/** The access objects an answer asks for: all but its Namespaces. */
export function accessIn(answer: SyncResponse): AccessObject[] {
  return answer.children.filter((child): child is AccessObject => child.kind !== "Namespace");
}

/**
 * The same children, with these objects observed as Metacontroller applied
 * them: with its copy of what it applied, RoleBindings under
 * `<namespace>/<name>`, cluster-wide ones by name.
 */
export function withObserved(children: ObservedChildren, objects: AccessObject[]): ObservedChildren {
  const observed = structuredClone(children);
  for (const object of objects) {
    const { name } = object.metadata;
    const metadata = {
      ...object.metadata,
      uid: `uid-of-${name}`,
      labels: { "controller-uid": "uid-of-project" },
      annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(object) },
    };
    const stored = { ...structuredClone(object), metadata };
    if (object.kind === "RoleBinding") observed[ROLE_BINDINGS][`${object.metadata.namespace}/${name}`] = stored as RoleBinding;
    else if (object.kind === "ClusterRoleBinding") observed[CLUSTER_ROLE_BINDINGS][name] = stored as ClusterRoleBinding;
    else observed[CLUSTER_ROLES][name] = stored;
  }
  return observed;
}

type Owner = { kind: string; name: string; controller?: boolean };

/** What the customize hook's rule picked up, by Namespace name; nothing unless given. */
export function related(byName: Record<string, { phase?: string; owners?: Owner[] }> = {}): RelatedObjects {
  const namespaces: NonNullable<RelatedObjects[typeof NAMESPACES]> = {};
  for (const [name, { phase, owners }] of Object.entries(byName)) {
    const ownerReferences = owners?.map((owner) => ({ apiVersion: "agrrh.com/v1", uid: `uid-of-${owner.name}`, ...owner }));
    namespaces[name] = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, ...(ownerReferences ? { ownerReferences } : {}) },
      ...(phase ? { status: { phase } } : {}),
    };
  }
  return { [NAMESPACES]: namespaces };
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
