/**
 * # Environments: a Project holds the Namespaces its team needs
 *
 * A team with dev, staging and prod wants one Project, not three. A Project
 * that declares `spec.environments` gets one Namespace per environment,
 * `proj-<name>--<env>`, instead of `proj-<name>`; each is made, kept and
 * deleted as that one is, and the features that work inside a Namespace
 * (features/index.ts says which) plan each with the environment's own
 * fields over the Project's spec.
 *
 * Names: a new Project's name has no `--` (k8s.yaml refuses it at create),
 * and an environment's is a DNS label, which never starts with '-'. So the
 * first `--` of a Namespace's name tells whose it is: no Project's
 * environment is another Project's Namespace. A Project named with `--`
 * before that rule keeps working, may declare no environment, and meets
 * the core's NamespaceConflict, never a takeover, where another's
 * environment came first.
 *
 * Nothing is lost by an edit: a Namespace the Project owns that no
 * environment names any more (a typo renamed it, or it was `proj-<name>`
 * before the Project declared any) stays, planned with the fields its
 * environment last had (recorded on it), so that no edit loosens what
 * guards it, until the Project goes or a person deletes it. What was given
 * there alone stays too: declare it again without it to take it back.
 *
 * An environment may instead name an existing Namespace of any other name
 * (`namespace: payments`); only a cluster admin may write that (k8s.yaml),
 * and brings it under the Project by its labels: everything in it stays.
 */
import * as v from "valibot";
import type { ForeignNamespace, ObservedNamespace, Project, Readiness } from "../sync.ts";
import type { Feature, Place, View } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["InvalidEnvironments", "EnvironmentConflict", "TooManyNamespaces", "WaitingForEnvironments", "ENVIRONMENT_ANNOTATION", "agrrh.com/environment", "environments", "prod", "staging"] as const;

// Spelled out, not taken from sync.ts: a feature imports only types from it
// (environments.test.ts proves the spellings agree).
export const NAMESPACE_PREFIX = "proj-";
export const NAMESPACES = "Namespace.v1";
export const PROJECT_LABEL = "agrrh.com/project";
export const CLAIM_LABEL = "controller-uid"; // feature: adoption
export const ADOPTED_BY_LABEL = "agrrh.com/adopted-by"; // feature: adoption
export const PROJECTS = "projects.agrrh.com";
/** Which environment a Namespace is, on each: how a Namespace no environment names any more is known. */
export const ENVIRONMENT_ANNOTATION = "agrrh.com/environment";
/** The environment's own fields, as JSON: what it is planned by once no environment names it, or while they cannot be read. */
export const FIELDS_ANNOTATION = "agrrh.com/environment-fields";
/** Between the Project's name and the environment's: no new Project's name has it. */
export const SEPARATOR = "--";

// ## The rules
//
// At most so many that the largest Project still fits the request size
// docs/operating.md gives, each with fields of its own. Renaming an
// environment keeps its old Namespace, so the bound counts every Namespace
// the Project owns, kept ones too: past it, none is made.
export const MAX_ENVIRONMENTS = 6;
const NAMESPACE_NAME_MAX_LENGTH = 63;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The longest environment name a Project of this name may use. */
export const environmentNameMaxLength = (project: string) => NAMESPACE_NAME_MAX_LENGTH - NAMESPACE_PREFIX.length - project.length - SEPARATOR.length;
export const environmentNamespace = (project: string, environment: string) => `${NAMESPACE_PREFIX}${project}${SEPARATOR}${environment}`;

export const ENVIRONMENT_RULES = {
  legacy: `a Project whose name contains '${SEPARATOR}' may not declare environments: its Namespaces' names could be another Project's. Recreate it under a name without '${SEPARATOR}'`,
  count: `a Project declares at most ${MAX_ENVIRONMENTS} environments`,
  name: (project: string) =>
    `an environment's name is lowercase letters, digits or '-', starting and ending with a letter or digit, and at most ${environmentNameMaxLength(project)} characters, ` +
    `so that ${environmentNamespace(project, "<name>")} is at most ${NAMESPACE_NAME_MAX_LENGTH} characters, a Namespace name`,
  unique: "each environment is listed once, by name, and no two name the same Namespace",
  namespace: `an environment's namespace is a Namespace name (lowercase letters, digits or '-', at most ${NAMESPACE_NAME_MAX_LENGTH}) not starting with ${NAMESPACE_PREFIX}: those are Projects' own`,
};

// Its other fields are the features' to check, as the Project's are.
const Environment = v.looseObject({ name: v.string(), namespace: v.nullish(v.string()) });
type Environment = v.InferOutput<typeof Environment>;
const spec = { environments: v.nullish(v.array(v.unknown())) };

/** The environments a Project declares, checked as k8s.yaml's CRD checks them, or each rule broken. */
export function environmentsOf(project: Project): { environments: Environment[]; problems: string[] } {
  const declared = (project.spec as { environments?: unknown } | null | undefined)?.environments;
  if (declared === undefined || declared === null) return { environments: [], problems: [] };
  const name = project.metadata.name;
  const parsed = v.safeParse(v.array(Environment), declared);
  if (!parsed.success) return { environments: [], problems: ["spec.environments: each environment is an object with a name"] };
  const environments = parsed.output;
  const problems = [
    ...(name.includes(SEPARATOR) && environments.length > 0 ? [ENVIRONMENT_RULES.legacy] : []),
    ...(environments.length > MAX_ENVIRONMENTS ? [ENVIRONMENT_RULES.count] : []),
    ...environments.flatMap((environment, at) => [
      // One that names a Namespace of its own needs no room for proj-<name>--<environment>.
      ...(DNS1123_LABEL.test(environment.name) && (environment.namespace || environment.name.length <= environmentNameMaxLength(name))
        ? []
        : [`spec.environments[${at}]: ${ENVIRONMENT_RULES.name(name)}`]),
      ...(environment.namespace === undefined || environment.namespace === null || (DNS1123_LABEL.test(environment.namespace) && environment.namespace.length <= NAMESPACE_NAME_MAX_LENGTH && !environment.namespace.startsWith(NAMESPACE_PREFIX))
        ? []
        : [`spec.environments[${at}]: ${ENVIRONMENT_RULES.namespace}`]),
    ]),
    ...(new Set(environments.map((environment) => environment.name)).size < environments.length ||
    new Set(environments.map((environment) => namespaceOf(name, environment))).size < environments.length
      ? [ENVIRONMENT_RULES.unique]
      : []),
  ];
  return { environments, problems };
}

const namespaceOf = (project: string, environment: Environment) => environment.namespace ?? environmentNamespace(project, environment.name);

/** What the features working per Namespace read in this environment's, over the Project's spec (each feature says how: features/index.ts). */
const specOf = ({ name: _name, namespace: _namespace, ...own }: Environment): Record<string, unknown> => own;

// ## The Namespaces
//
// The first environment's Namespace is the one sync.ts names the Project's
// own (one it makes, not one it adopts, where there is such).
function first(project: Project): string | undefined {
  const { environments, problems } = environmentsOf(project);
  if (problems.length > 0 || environments.length === 0) return undefined;
  return namespaceOf(project.metadata.name, environments.find((environment) => !environment.namespace) ?? environments[0]!);
}

// Those declared that are not made for the bound: past MAX_ENVIRONMENTS
// counting every Namespace the Project owns, the Project's own first, then
// in the order declared. None it owns is ever dropped for it.
function pastBound(view: Pick<View, "project" | "owned" | "related">, environments: Environment[]): Set<string> {
  const name = view.project.metadata.name;
  const own = first(view.project);
  const wanted = environments.map((environment) => namespaceOf(name, environment)).filter((namespace) => !view.owned[namespace] && !foreignOf(view, namespace));
  const room = Math.max(0, MAX_ENVIRONMENTS - Object.keys(view.owned).length);
  return new Set([...wanted.filter((namespace) => namespace === own), ...wanted.filter((namespace) => namespace !== own)].slice(room));
}

// A Namespace related and not observed is someone else's: never asked for.
const foreignOf = (view: Pick<View, "owned" | "related">, namespace: string): ForeignNamespace | undefined =>
  view.owned[namespace] ? undefined : (view.related[NAMESPACES] as Record<string, ForeignNamespace> | undefined)?.[namespace];

/** Those the Project keeps though no environment names them: its environments' of before, and its own of before it declared any. */
function keptOf(view: Pick<View, "project" | "owned">, declared: Set<string>, declaring: boolean): Place[] {
  const own = `${NAMESPACE_PREFIX}${view.project.metadata.name}`;
  return Object.entries(view.owned).flatMap(([namespace, observed]: [string, ObservedNamespace]): Place[] => {
    if (declared.has(namespace)) return [];
    const annotations = observed.metadata?.annotations ?? {};
    const environment = annotations[ENVIRONMENT_ANNOTATION];
    if (environment !== undefined) return [{ namespace, spec: fieldsOf(annotations[FIELDS_ANNOTATION]), annotations: pick(annotations, [ENVIRONMENT_ANNOTATION, FIELDS_ANNOTATION]) }];
    return declaring && namespace === own ? [{ namespace, spec: {}, annotations: {} }] : [];
  });
}

// Written by sync alone (only Metacontroller writes a Project's Namespace): anything else is no fields.
function fieldsOf(json: string | undefined): Record<string, unknown> {
  try {
    const fields: unknown = JSON.parse(json ?? "{}");
    return fields !== null && typeof fields === "object" && !Array.isArray(fields) ? (fields as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
const pick = (from: Record<string, string>, keys: string[]) => Object.fromEntries(keys.flatMap((key) => (from[key] === undefined ? [] : [[key, from[key]]])));

// A Namespace no environment names any more, or all of them while the
// environments cannot be read, is planned by the fields its environment
// had: what the features give it stays as it was, and nothing in it
// escapes that.
function places(view: View): Place[] {
  const { environments, problems } = environmentsOf(view.project);
  if (problems.length > 0) return keptOf(view, new Set(), false);
  const name = view.project.metadata.name;
  const past = pastBound(view, environments);
  const declared = environments.filter((environment) => !foreignOf(view, namespaceOf(name, environment)) && !past.has(namespaceOf(name, environment)));
  return [
    ...declared.map((environment) => ({ namespace: namespaceOf(name, environment), spec: specOf(environment), annotations: annotationsOf(environment) })),
    ...keptOf(view, new Set(environments.map((environment) => namespaceOf(name, environment))), environments.length > 0),
  ];
}

const annotationsOf = (environment: Environment) => ({ [ENVIRONMENT_ANNOTATION]: environment.name, [FIELDS_ANNOTATION]: JSON.stringify(specOf(environment)) });

// ## The status
type State = "Active" | "Pending" | "Terminating" | "NotActive" | "Conflict" | "Kept";
const stateOf = (observed: ObservedNamespace | undefined, foreign: boolean): State => {
  if (foreign) return "Conflict";
  if (!observed) return "Pending";
  const phase = observed.status?.phase;
  return phase === "Active" ? "Active" : phase === "Terminating" ? "Terminating" : "NotActive";
};

function conflict(project: Project, taken: [environment: Environment, namespace: string, foreign: ForeignNamespace][]): Readiness {
  const which = taken.map(([environment, namespace]) => `Namespace ${namespace} of environment ${environment.name}`).join(", ");
  const labels: string[] = [
    `${ADOPTED_BY_LABEL}=${project.metadata.name} ${CLAIM_LABEL}=$(kubectl get ${PROJECTS} ${project.metadata.name} -o jsonpath='{.metadata.uid}')`, // feature: adoption
  ];
  // The commands last, each whole to its end, so that a person can paste it.
  const bring = taken.flatMap(([environment, namespace, foreign]) =>
    environment.namespace && (foreign.metadata.ownerReferences ?? []).length === 0 && labels.length
      ? [` A cluster admin brings ${namespace} under this Project, with all it holds: kubectl label namespace ${namespace} ${labels.join(" ")}`]
      : [],
  );
  const are = taken.length === 1 ? "already exists and is not this Project's, so it is left as it is" : "already exist and are not this Project's, so they are left as they are";
  return { status: "False", reason: "EnvironmentConflict", message: `${which} ${are}; the other environments are made as declared.${bring.join("")}` };
}

function tooMany(owned: View["owned"], bounded: { environment: Environment; namespace: string }[]): Readiness {
  const which = bounded.map(({ environment, namespace }) => `Namespace ${namespace} of environment ${environment.name}`).join(", ");
  return {
    status: "False",
    reason: "TooManyNamespaces",
    message:
      `${which} ${bounded.length === 1 ? "is" : "are"} not made: this Project owns ${Object.keys(owned).length} Namespaces, and may own at most ${MAX_ENVIRONMENTS}, those no environment names any more included. ` +
      `Every Namespace it owns is kept. A cluster admin deletes a kept Namespace it no longer needs (kubectl delete namespace <name>), and the next is made.`,
  };
}

export const environments: Feature<typeof spec> = {
  spec,
  children: {},
  // The core's Namespaces, as it reads them (customize below asks for these names too).
  related: {},
  refusals: ["InvalidEnvironments"],
  reasons: ["EnvironmentConflict", "TooManyNamespaces", "WaitingForEnvironments"],
  namespaces: { first, all: places },
  // Each environment's Namespace by name, so that one that is not the
  // Project's is seen. Metacontroller finds them by listing every Namespace,
  // so a settled Project (each of its Namespaces its own) asks for none, as
  // the core does for its own: one in the way is seen once customize is
  // asked again, within its cache's 20 minutes.
  customize: (project, _spec, settled) => {
    const { environments, problems } = environmentsOf(project);
    if (settled || problems.length > 0 || environments.length === 0) return [];
    return [{ apiVersion: "v1", resource: "namespaces", names: environments.map((environment) => namespaceOf(project.metadata.name, environment)) }];
  },
  plan: (input) => {
    const { project, namespace: own, owned } = input;
    const view = { owned, related: input.related as unknown as View["related"] };
    const { environments, problems } = environmentsOf(project);
    if (problems.length > 0) {
      return {
        children: [],
        unavailable: {
          status: "False",
          reason: "InvalidEnvironments",
          message: `${problems.join("; ")}. Until that is fixed, every Namespace of this Project is kept as it is, and none is made.`,
        },
      };
    }
    if (environments.length === 0 && keptOf(input, new Set(), false).length === 0) return { children: [] };
    const name = project.metadata.name;
    const declared = environments.map((environment) => {
      const namespace = namespaceOf(name, environment);
      const foreign = foreignOf(view, namespace);
      return { environment, namespace, foreign, state: stateOf(owned[namespace], foreign !== undefined) };
    });
    const kept = keptOf(input, new Set(declared.map(({ namespace }) => namespace)), environments.length > 0).map(({ namespace, annotations }) => ({
      namespace,
      environment: annotations?.[ENVIRONMENT_ANNOTATION],
      state: "Kept" as State,
    }));
    const past = pastBound({ ...view, project }, environments);
    const bounded = declared.filter(({ namespace }) => past.has(namespace));
    // Its own past the bound, the core would ask for it: nothing is asked for.
    if (own !== undefined && past.has(own)) return { children: [], unavailable: tooMany(owned, bounded) };
    const taken = declared.flatMap(({ environment, namespace, foreign }) => (foreign ? [[environment, namespace, foreign] as [Environment, string, ForeignNamespace]] : []));
    const others = declared.filter(({ namespace, foreign }) => namespace !== own && !foreign && !past.has(namespace));
    const keeping = kept.length
      ? `; no environment names Namespace ${kept.map(({ namespace }) => namespace).join(", ")} any more: kept with all it holds, it goes with the Project (unless protected), or by hand with kubectl delete namespace`
      : "";
    const listed = [
      ...declared.map(({ environment, namespace, state }) => ({ name: environment.name, namespace, state })),
      ...kept.map(({ namespace, environment, state }) => ({ ...(environment === undefined ? {} : { name: environment }), namespace, state })),
    ];
    return {
      children: [],
      annotations: declared.filter(({ namespace }) => namespace === own).map(({ environment }) => annotationsOf(environment))[0],
      status: {
        environments: listed,
        // A table's cell shows the first value of a list: kubectl get projects reads these.
        environmentNames: listed.map((entry) => entry.name ?? "-").join(","),
        environmentNamespaces: listed.map((entry) => entry.namespace).join(","),
      },
      failed: taken.length ? conflict(project, taken) : bounded.length ? tooMany(owned, bounded) : undefined,
      waiting: {
        reason: "WaitingForEnvironments",
        notYet: others.filter(({ state }) => state !== "Active").map(({ namespace }) => ["Namespace", namespace]),
        toBe: "Active",
      },
      ready: `${others.length ? `, and so ${others.length === 1 ? "is" : "are"} ${others.map(({ namespace }) => namespace).join(", ")}` : ""}${keeping}`,
    };
  },
};
