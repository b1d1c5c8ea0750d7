// `npm run fixtures`: the requests in test/fixtures, which the tests take as
// what Metacontroller sends. Two ways to make them:
//
// `npm run fixtures -- --from-code NAME [SPEC]`, from this copy's own code,
// before any e2e can run: a request about a parent named after the fixture
// (`owners-sync` is about `owners`), with SPEC (JSON) and the CRD's defaults
// as its spec, and the CompositeController of k8s.yaml. `first-sync` is the
// first request, nothing observed; any other is played to its end, as
// Metacontroller would: each answer's children are observed as applied (a
// Namespace Active) and the status written, until the answer stops changing.
// What it cannot play is what no answer says: a Job's or a Pod's progress,
// objects made by others. Replace them with captured ones once the e2e runs.
// It refuses a spec the CRD would refuse (write a field's schema first).
// `npm run fixtures -- --remake` makes every fixture again so, about the
// same parent with the spec fields the CRD still declares: take-away runs
// it, since a captured request still carries what a feature taken away
// read and made. It refuses, and writes nothing, where the CRD would refuse
// a fixture's parent (test/crd-schema.ts judges it as a create would);
// `--set spec.FIELD=VALUE` (VALUE as JSON, or else a string), as often as
// needed, gives every parent that field while remaking, as a field the CRD
// now requires asks. It names each field it drops that the CRD no longer
// declares.
//
// `npm run fixtures -- LOG first-sync=NAME steady-sync=NAME [FIXTURE=NAME]...`:
// the fixtures, captured from what Metacontroller really sent. At log level 6
// Metacontroller logs every hook request whole, one JSON line each
// (`"msg":"Webhook request"`, its `type`, and the request as `body`), so a run
// of `METACONTROLLER_LOG_LEVEL=6 npm run test:e2e:local` leaves, in
// .cache/local-k8s/logs/metacontroller.log, a sync request for every state its
// parents went through. For each fixture named, this writes the request about
// that parent: `first-sync` takes its first (nothing observed yet), every
// other its last (its children as they settled). Then run `npm run
// transcripts`, which makes the steady fixture's status sync's own answer.
//
// The rules the fixtures must follow (manifest.test.ts and readme.test.ts
// hold them): each is a request about the parent sync.ts names, carrying
// every related group sync reads; together their answers ask for every
// child resource the CompositeController declares; and `steady-sync`'s status is sync's answer to it, a fixed point.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { API_VERSION, GROUP, NAMESPACES, ObservedChildren, PARENT, RelatedObjects, customize, sync, type Project, type RelatedResourceRule, type SyncResponse } from "../sync.ts";
import { admissionErrors } from "../test/crd-schema.ts";
import { resourceOf } from "./new-feature.ts";
import { withObserved, type FixtureName } from "../test/helpers.ts";
import { readManifest } from "./manifest.ts";

export const DEFAULT_LOG = ".cache/local-k8s/logs/metacontroller.log";

/** The sync requests about each named parent, from a Metacontroller log, as each fixture takes them. */
export function fixturesFromLog(log: string, wanted: Partial<Record<FixtureName, string>>): Partial<Record<FixtureName, unknown>> {
  const requests = new Map<string, unknown[]>();
  for (const line of log.split("\n")) {
    if (!line.startsWith("{") || !line.includes('"Webhook request"')) continue;
    const entry = JSON.parse(line);
    if (entry.msg !== "Webhook request" || entry.type !== "sync") continue;
    const name = entry.body?.parent?.metadata?.name;
    requests.set(name, [...(requests.get(name) ?? []), entry.body]);
  }
  return Object.fromEntries(
    Object.entries(wanted).map(([fixture, parent]) => {
      const seen = requests.get(parent ?? "") ?? [];
      if (seen.length === 0) {
        throw new Error(`no sync request about ${parent} in the log: was Metacontroller's log level 6 (METACONTROLLER_LOG_LEVEL=6)?`);
      }
      return [fixture, fixture === "first-sync" ? seen[0] : seen[seen.length - 1]];
    }),
  );
}

/** A uid shaped as the API server's, the same for a name every time, so that a fixture made again changes only where the code did. */
const uidOf = (name: string) => createHash("sha256").update(name).digest("hex").slice(0, 32).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");

const emptyGroups = (schema: { entries: object }) => Object.fromEntries(Object.keys(schema.entries).map((group) => [group, {}]));

/**
 * What no answer makes, and a request still carries: what customize's rules
 * find besides the Project's Namespace (what the features watch),
 * and the annotations admission wrote onto the parent at create (who
 * requested it).
 */
export type MadeByOthers = { related?: Record<string, Record<string, unknown>>; annotations?: Record<string, string> };

/** Whether a customize rule picks this object, as Metacontroller's GetRelatedObjects does. */
function picks(rule: RelatedResourceRule, object: { metadata: { name: string; namespace?: string; labels?: Record<string, string> } }): boolean {
  if (rule.namespace !== undefined && object.metadata.namespace !== rule.namespace) return false;
  if ("names" in rule) return rule.names.length === 0 || rule.names.includes(object.metadata.name);
  const labels = object.metadata.labels ?? {};
  const { matchLabels = {}, matchExpressions = [] } = rule.labelSelector;
  return (
    Object.entries(matchLabels).every(([key, value]) => labels[key] === value) &&
    matchExpressions.every(({ key, operator, values = [] }) =>
      operator === "In" ? key in labels && values.includes(labels[key]!) : operator === "NotIn" ? !(key in labels) || !values.includes(labels[key]!) : operator === "Exists" ? key in labels : !(key in labels),
    )
  );
}

/** A request as Metacontroller would send it about a parent with this spec: its first, or once its answers stop changing. */
export function fixtureFromCode(fixture: FixtureName, spec: Record<string, unknown> = {}, name = fixture.replace(/-sync$/, ""), { related = {}, annotations }: MadeByOthers = {}) {
  const { find } = readManifest();
  const crd = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
  // The API server fills in the defaults the CRD declares, before anyone reads the parent.
  const properties: Record<string, { default?: unknown }> = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
  const defaults = Object.fromEntries(Object.entries(properties).flatMap(([field, schema]) => (schema.default === undefined ? [] : [[field, schema.default]])));
  const parent: Project = {
    apiVersion: API_VERSION,
    kind: PARENT.kind,
    metadata: { name, uid: uidOf(name), generation: 1, creationTimestamp: "2026-12-01T00:00:00Z", ...(annotations ? { annotations } : {}) } as Project["metadata"],
    spec: { ...defaults, ...spec },
  };
  const request = { controller: find("CompositeController"), parent, children: emptyGroups(ObservedChildren) as ObservedChildren, related: { ...emptyGroups(RelatedObjects), ...related } as RelatedObjects, finalizing: false };
  if (fixture === "first-sync") return request;
  let previous = "";
  for (let round = 0; round < 20; round++) {
    const answer: SyncResponse = sync(request.parent, request.children, request.related, () => new Date("2026-12-01T00:00:01Z"));
    const now = JSON.stringify(answer);
    if (now === previous) return request;
    previous = now;
    request.parent = { ...request.parent, status: answer.status as Project["status"] };
    request.children = withObserved(emptyGroups(ObservedChildren) as ObservedChildren, answer.children);
    for (const namespace of Object.values(request.children[NAMESPACES])) namespace.status = { phase: "Active" };
    // What customize's rules pick among the children comes as related too
    // (the Project's own Namespace, and what else they pick), beside what
    // others made. Metacontroller asks customize once per generation and
    // keeps its answer 20 minutes: about the parent as first seen, not yet
    // settled, so a steady request still carries what a settled one asks
    // for no more.
    const rules = customize(parent).relatedResources;
    const picked: Record<string, Record<string, unknown>> = {};
    for (const [group, objects] of Object.entries<Record<string, any>>(request.children)) {
      const [kind, apiVersion] = [group.slice(0, group.indexOf(".")), group.slice(group.indexOf(".") + 1)];
      const asked = rules.filter((rule) => rule.apiVersion === apiVersion && rule.resource === resourceOf(kind));
      if (asked.length === 0) continue;
      picked[group] = Object.fromEntries(Object.entries(objects).filter(([, object]) => asked.some((rule) => picks(rule, object))));
    }
    request.related = { ...emptyGroups(RelatedObjects), ...related, ...Object.fromEntries(Object.entries(picked).map(([group, objects]) => [group, { ...related[group], ...objects }])) } as RelatedObjects;
  }
  throw new Error(`${fixture}: sync's answers still change after 20 rounds: is one of them stamped with the time, or does it differ every call?`);
}

/** fixtureFromCode, refused where the CRD would refuse the parent: no request Metacontroller could send. */
export function admittedFixtureFromCode(fixture: FixtureName, spec: Record<string, unknown> = {}, manifest = readManifest()) {
  const made = fixtureFromCode(fixture, spec);
  const schema = manifest.find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema;
  const refused = admissionErrors(schema, { ...made.parent, status: undefined });
  if (refused.length > 0) throw new Error(`the CRD refuses a parent with spec ${JSON.stringify(spec)}: ${refused.join("; ")}; write the field's schema in k8s.yaml first, or give another spec`);
  return made;
}

/** Keys in order at every depth, as kubectl (Go's encoding/json) writes a map. */
const sortedKeys = (value: unknown): unknown =>
  Array.isArray(value) ? value.map(sortedKeys) : value && typeof value === "object" ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, each]) => [key, sortedKeys(each)])) : value;

/**
 * kubectl's record of the parent it applied, made again for the spec as it
 * now is: a record of the old spec would lie about what was applied. It
 * names the fields the old record named, and those that differ from the
 * CRD's default (a field given by hand, such as a new required one), not
 * those the API server filled in; a field the CRD no longer declares goes.
 */
export function withLastApplied(annotations: Record<string, string>, spec: Record<string, unknown>, defaults: Record<string, unknown>): Record<string, string> {
  const recorded = annotations[KUBECTL_LAST_APPLIED];
  if (recorded === undefined) return annotations;
  const applied = JSON.parse(recorded);
  const given = (field: string) => field in (applied.spec ?? {}) || JSON.stringify(spec[field]) !== JSON.stringify(defaults[field]);
  const record = { ...applied, spec: Object.fromEntries(Object.entries(spec).filter(([field]) => given(field))) };
  return { ...annotations, [KUBECTL_LAST_APPLIED]: `${JSON.stringify(sortedKeys(record))}\n` };
}
export const KUBECTL_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Each fixture made again from code, about the same parent with the spec
 * fields the CRD still declares: what take-away leaves. A parent the CRD now
 * refuses (a field it requires that the fixture lacks, a value out of its
 * rules) is refused here too, naming why, and nothing is written: a fixture
 * is a request about a parent the API server stored.
 */
export function remadeFixtures(read: (file: string) => string, files: string[], manifest = readManifest(), set: Record<string, unknown> = {}): Record<string, string> {
  const schema = manifest.find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema;
  const declared = Object.keys(schema.properties.spec.properties);
  const specOf = (parent: { spec?: Record<string, unknown> }) => ({ ...Object.fromEntries(Object.entries(parent.spec ?? {}).filter(([field]) => declared.includes(field))), ...set });
  const lacking = new Set<string>();
  const refused = files.flatMap((file) => {
    const { parent } = JSON.parse(read(file));
    const spec = specOf(parent);
    for (const field of schema.properties.spec.required ?? []) if (!(field in spec)) lacking.add(field);
    const errors = admissionErrors(schema, { ...parent, status: undefined, spec });
    return errors.length === 0 ? [] : [`${file}: the CRD refuses its parent ${parent.metadata?.name}: ${errors.join("; ")}`];
  });
  const setting = [...lacking].map((field) => ` --set spec.${field}=<value>`).join("");
  if (refused.length > 0) throw new Error(`${refused.join("\n")}\nremake with what the CRD asks for${setting ? ` (npm run fixtures -- --remake${setting})` : ""}, or give the field a default in k8s.yaml`);
  const defaults: Record<string, unknown> = Object.fromEntries(Object.entries<{ default?: unknown }>(schema.properties.spec.properties).map(([field, each]) => [field, each.default]));
  return Object.fromEntries(
    files.map((file) => {
      const { parent, related = {} } = JSON.parse(read(file));
      const spec = specOf(parent);
      const annotations = parent.metadata.annotations && withLastApplied(parent.metadata.annotations, spec, defaults);
      // What others made is kept where the code left still asks for it; what
      // Metacontroller made (its label on it) is the play's to make again.
      const kept = Object.fromEntries(
        Object.entries<Record<string, any>>(related)
          .filter(([group]) => group in RelatedObjects.entries)
          .map(([group, objects]) => [group, Object.fromEntries(Object.entries(objects).filter(([, object]) => !object?.metadata?.labels?.["controller-uid"]))]),
      );
      const made = fixtureFromCode(file.replace(/\.json$/, ""), spec, parent.metadata.name, { related: kept, annotations });
      return [file, `${JSON.stringify(made, null, 2)}\n`];
    }),
  );
}

/** The fields of each fixture's parent that the CRD no longer declares, which a remake drops: `first-sync.json: spec.license`. */
export function undeclaredFields(read: (file: string) => string, files: string[], manifest = readManifest()): string[] {
  const declared = Object.keys(manifest.find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties);
  return files.flatMap((file) => Object.keys(JSON.parse(read(file)).parent.spec ?? {}).filter((field) => !declared.includes(field)).map((field) => `${file}: spec.${field}`));
}

/** `--set spec.FIELD=VALUE` pairs as a spec: VALUE as JSON where it parses, else the string itself. */
export function parseSets(args: string[]): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (let index = 0; index < args.length; index += 2) {
    const match = args[index] === "--set" ? /^spec\.([A-Za-z][\w-]*)=(.*)$/s.exec(args[index + 1] ?? "") : null;
    if (!match) throw new Error(`unknown argument ${args[index]} ${args[index + 1] ?? ""}: --remake takes only --set spec.FIELD=VALUE, as --set spec.owner=alice`.replace(" :", ":"));
    const [, field = "", value = ""] = match;
    try {
      set[field] = JSON.parse(value);
    } catch {
      set[field] = value;
    }
  }
  return set;
}

if (import.meta.filename === process.argv[1] && process.argv[2] === "--remake") {
  const directory = new URL("../test/fixtures/", import.meta.url);
  const files = readdirSync(directory).filter((file) => file.endsWith(".json"));
  const read = (each: string) => readFileSync(new URL(each, directory), "utf8");
  try {
    const set = parseSets(process.argv.slice(3));
    const dropped = undeclaredFields(read, files);
    for (const [file, text] of Object.entries(remadeFixtures(read, files, readManifest(), set))) writeFileSync(new URL(file, directory), text);
    for (const each of dropped) console.log(`test/fixtures/${each} dropped, which the CRD no longer declares`);
    console.log(`test/fixtures: ${files.join(", ")} made again from this copy's code`);
  } catch (error) {
    console.error(`fixtures: ${(error as Error).message}\nnothing was written`);
    process.exit(1);
  }
} else if (import.meta.filename === process.argv[1] && process.argv[2] === "--from-code") {
  const [, fixture, spec = "{}"] = process.argv.slice(2);
  if (!fixture || !/^[a-z0-9-]+$/.test(fixture)) {
    console.error("usage: npm run fixtures -- --from-code NAME [SPEC], as owners-sync '{\"owners\":[\"alice\"]}'");
    process.exit(2);
  }
  try {
    const made = admittedFixtureFromCode(fixture, JSON.parse(spec));
    writeFileSync(new URL(`../test/fixtures/${fixture}.json`, import.meta.url), `${JSON.stringify(made, null, 2)}\n`);
    console.log(`test/fixtures/${fixture}.json: made from this copy's code; replace it with a captured one once the e2e runs`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
} else if (import.meta.filename === process.argv[1]) {
  const [log = DEFAULT_LOG, ...pairs] = process.argv.slice(2);
  const wanted = Object.fromEntries(pairs.map((pair) => pair.split("=")));
  if (pairs.length === 0 || pairs.some((pair) => !/^[a-z-]+=\S+$/.test(pair))) {
    console.error("usage: npm run fixtures -- LOG first-sync=NAME steady-sync=NAME [FIXTURE=NAME]... (each fixture of test/fixtures and its parent)");
    process.exit(2);
  }
  try {
    for (const [fixture, request] of Object.entries(fixturesFromLog(readFileSync(log, "utf8"), wanted))) {
      writeFileSync(new URL(`../test/fixtures/${fixture}.json`, import.meta.url), `${JSON.stringify(request, null, 2)}\n`);
      console.log(`test/fixtures/${fixture}.json: the request about ${wanted[fixture]}`);
    }
    console.log("now run npm run transcripts");
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
