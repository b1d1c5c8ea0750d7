// `npm run new-feature -- <name> [--child <apiVersion>/<Kind>] [--resource <plural>]`:
// a new feature, ready to fill, in every place a feature has, each marked as
// its own so that `npm run take-away -- <name>` takes it away again:
//   - features/<name>.ts, which reads one spec field (named after it) and,
//     with --child, asks for one object of that kind in the Namespace
//     while the field is set, and waits for it;
//   - test/<name>.test.ts, its tests, which pass as written;
//   - features/index.ts: its import and its place at the end of FEATURES
//     (in a copy whose last feature was taken away, features/index.ts and
//     the lines that compose features come back first, from the newest
//     commit that had them, renamed as the copy is, and merged with git;
//     a copy without git history is refused, naming why);
//   - k8s.yaml: its spec field in the CRD and, with --child, the child
//     resource the CompositeController owns and the ownership guard's rule;
//   - README.md: its line in the list of features and its children in the
//     opening diagram; docs/operating.md: its reason; docs/testing.md: its
//     test file;
//   - with --child, each fixture: the child's group, empty, as
//     Metacontroller sends it before any such child exists.
// Each goes where a `slot: <what>` comment marks, or after the rows of its
// table. It refuses, writing nothing, a name that is not a lower-case word
// with dashes, or one taken. Every sentence it leaves for a person opens
// with "(FILL IN", and npm test fails, naming each, until all are written.
// Then write its rules (and, with --child, the
// child's fields), `npm run fixtures -- --from-code <name>-sync '<spec>'`
// for a fixture that asks for its children, and `npm test`.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pluralize from "pluralize";
import { currentNames, renameFile, type CoreNames } from "./rename.ts";
import { CHECK, COMPOSITION, featureNames, withoutComposition, withoutFeature, writtenByHand } from "./take-away.ts";

const root = new URL("..", import.meta.url);

export type Child = { apiVersion: string; kind: string; resource: string };
export type NewFeature = { name: string; child?: Child };

const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
const pascal = (name: string) => camel(name).replace(/^./, (letter) => letter.toUpperCase());
/** A kind's resource as Kubernetes spells its own: lower case, `ies` for a final `y`, `es` after a hiss. */
export const resourceOf = (kind: string) => kind.toLowerCase().replace(/y$/, "ie").replace(/(s|x|z|ch|sh)$/, "$1e") + "s";

// Every sentence it writes for a person to write anew opens with these
// words, so that one left in fails npm test (new-feature.test.ts): a tree
// whose feature says "(FILL IN what every Project gets from it)" would
// pass every other test, and tell its readers nothing.
export const TO_FILL = "FILL IN";

/** Each line of these files that still holds a sentence to write, as `path:line: text`. */
export function unfilled(files: Record<string, string>): string[] {
  return Object.entries(files).flatMap(([path, text]) =>
    text.split("\n").flatMap((line, index) => (line.includes(`(${TO_FILL} `) ? [`${path}:${index + 1}: ${line.trim()}`] : [])),
  );
}

/** The reason Ready gives while the feature's children are not all there. */
const reasonOf = (name: string) => `WaitingFor${pascal(name)}`;

/** Why this cannot be a feature's name, if it cannot. */
export function invalidName(name: string, exists: (path: string) => boolean): string | undefined {
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name)) return `${name}: a feature's name is lower-case words joined by '-', as owners or repo-access`;
  if (exists(`features/${name}.ts`)) return `${name}: features/${name}.ts exists`;
  return undefined;
}

/** The new files, by path. */
export function filesFor({ name, child }: NewFeature): Record<string, string> {
  const field = camel(name);
  const reason = reasonOf(name);
  const group = child ? `${child.kind}.${child.apiVersion}` : "";
  const feature = child
    ? `/**
 * # ${pascal(name)}: (${TO_FILL} what every Project gets from it, in one line)
 *
 * (${TO_FILL} the problem it solves for a Project's users, and how: which spec field
 * a person writes, and what the cluster then holds. A ${child.kind} named
 * ${name} in the Project's Namespace while spec.${field} is set, for now.)
 */
import * as v from "valibot";
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["${field}"] as const;

// What a Project says, checked as loosely as the CRD allows (k8s.yaml
// declares the same field).
const spec = { ${field}: v.nullish(v.string()) };

// The kind it owns: Metacontroller sends every one it observed under this
// key, and deletes any the plan no longer asks for.
export const ${field.toUpperCase()}_GROUP = "${group}";
const children = { [${field.toUpperCase()}_GROUP]: v.looseObject({}) };

export const ${field}: Feature<typeof spec, typeof children> = {
  spec,
  children,
  related: {},
  refusals: [],
  reasons: ["${reason}"],
  plan: ({ spec, namespace, children }) => {
    const wanted = spec.${field}
      ? [
          {
            apiVersion: "${child.apiVersion}",
            kind: "${child.kind}",
            metadata: { name: "${name}", namespace },
            // (${TO_FILL} its fields, from spec.${field}.)
          },
        ]
      : [];
    const notYet = wanted.filter((one) => !children[${field.toUpperCase()}_GROUP][\`\${namespace}/\${one.metadata.name}\`]);
    return {
      children: wanted,
      waiting: { reason: "${reason}", notYet: notYet.map((one): [string, string] => [one.kind, one.metadata.name]), toBe: "created" },
    };
  },
};
`
    : `/**
 * # ${pascal(name)}: (${TO_FILL} what every Project gets from it, in one line)
 *
 * (${TO_FILL} the problem it solves for a Project's users, and how: which spec field
 * a person writes, and what the cluster then holds. For now it reads
 * spec.${field} and labels the Namespace with it.)
 */
import * as v from "valibot";
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["${field}"] as const;

// What a Project says, checked as loosely as the CRD allows (k8s.yaml
// declares the same field).
const spec = { ${field}: v.nullish(v.string()) };

export const ${field.toUpperCase()}_LABEL = "${name}";

export const ${field}: Feature<typeof spec> = {
  spec,
  children: {},
  related: {},
  refusals: [],
  reasons: [],
  plan: ({ spec }) => ({ children: [], labels: spec.${field} ? { [${field.toUpperCase()}_LABEL]: spec.${field} } : undefined }),
};
`;
  const test = child
    ? `// The ${name} feature: (${TO_FILL} what a user relies on it for).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { namespaceNameFor, sync } from "../sync.ts";
import { ${field.toUpperCase()}_GROUP } from "../features/${name}.ts";
import { childrenOfKind, clock, namespaces, project, ready, related, withObserved } from "./helpers.ts";

const at = clock("2026-12-01T00:00:00Z");
const active = namespaces({ [namespaceNameFor("shop")]: "Active" });

describe("${name}", () => {
  test("a Project without spec.${field} gets no ${child.kind}", () => {
    assert.deepEqual(childrenOfKind(sync(project("shop"), active, related(), at), ["${child.kind}"]), []);
  });

  test("a Project with spec.${field} gets ${child.kind} ${name} in its Namespace, and waits for it", () => {
    const answer = sync(project("shop", { spec: { ${field}: "yes" } }), active, related(), at);
    const [wanted, ...more] = childrenOfKind(answer, ["${child.kind}"]);
    assert.deepEqual([wanted?.metadata, more], [{ name: "${name}", namespace: namespaceNameFor("shop") }, []]);
    assert.equal(ready(answer).status, "False");
  });

  test("once its ${child.kind} is observed, it waits for nothing", () => {
    const spec = { ${field}: "yes" };
    const first = sync(project("shop", { spec }), active, related(), at);
    const observed = withObserved(active, childrenOfKind(first, ["${child.kind}"]));
    assert.ok(${field.toUpperCase()}_GROUP in observed);
    assert.equal(ready(sync(project("shop", { spec }), observed, related(), at)).reason, "NamespaceActive");
  });
});
`
    : `// The ${name} feature: (${TO_FILL} what a user relies on it for).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { namespaceNameFor, sync } from "../sync.ts";
import { ${field.toUpperCase()}_LABEL } from "../features/${name}.ts";
import { clock, namespaceIn, namespaces, project, related } from "./helpers.ts";

const at = clock("2026-12-01T00:00:00Z");
const active = namespaces({ [namespaceNameFor("shop")]: "Active" });

describe("${name}", () => {
  test("a Project with spec.${field} labels its Namespace with it", () => {
    const answer = sync(project("shop", { spec: { ${field}: "yes" } }), active, related(), at);
    assert.equal(namespaceIn(answer)?.metadata.labels[${field.toUpperCase()}_LABEL], "yes");
  });

  test("a Project without it does not", () => {
    assert.equal(namespaceIn(sync(project("shop"), active, related(), at))?.metadata.labels[${field.toUpperCase()}_LABEL], undefined);
  });
});
`;
  return { [`features/${name}.ts`]: feature, [`test/${name}.test.ts`]: test };
}

const gitIn = (cwd: string | URL) => (args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });

/** The core's names in a commit's sync.ts, as rename reads the live one's. */
function coreNamesIn(sync: string): CoreNames {
  const constant = (name: string) => new RegExp(`^export const ${name} = "([^"]*)"`, "m").exec(sync)?.[1] ?? "";
  const parent = /^export const PARENT = \{ kind: "(\w+)", plural: "([\w-]+)", singular: "([\w-]+)" \}/m.exec(sync);
  if (!parent) throw new Error("the commit that had features/index.ts names no PARENT in its sync.ts");
  return { GROUP: constant("GROUP"), PARENT: { kind: parent[1]!, plural: parent[2]!, singular: parent[3]! }, NAMESPACE_PREFIX: constant("NAMESPACE_PREFIX") };
}

/**
 * What composes features, brought back into a copy that took its last
 * feature away: from the newest commit that had features/index.ts, each
 * file that held the composition, without that commit's features and
 * renamed as the copy is now; a file the copy still has is merged with it
 * as git merges (the copy's own changes kept), and a conflict refuses all.
 */
export function compositionRestored(read: (path: string) => string, directory: string | URL = root): Record<string, string> {
  const git = gitIn(directory);
  // A copy made without .git (a download, a copy of the files) has no commit to bring it back from.
  try {
    git(["rev-parse", "--verify", "HEAD"]);
  } catch {
    throw new Error(`${COMPOSITION}, which composes features, went with the last feature, and this copy has no git history to bring it back from: run new-feature in a git clone, or before the last take-away`);
  }
  // HEAD, while the take-away is not committed; else the parent of the commit that took it.
  const has = (commit: string) => git(["ls-tree", "--name-only", commit, "--", COMPOSITION]).trim() !== "";
  const deletedIn = has("HEAD") ? "" : git(["rev-list", "-1", "HEAD", "--", COMPOSITION]).trim();
  const commit = has("HEAD") ? git(["rev-parse", "HEAD"]).trim() : deletedIn && git(["rev-parse", `${deletedIn}^`]).trim();
  if (!commit) throw new Error(`${COMPOSITION}, which composes features, went with the last feature, and no commit of this copy has it to bring back`);
  const paths = git(["ls-tree", "-r", "--name-only", commit]).split("\n").filter(Boolean);
  const old = (path: string) => git(["show", `${commit}:${path}`]);
  // Only the core's names: the commit's features, and so their kinds, are stripped from what comes back.
  const [was, is] = [currentNames(old("k8s.yaml"), coreNamesIn(old("sync.ts"))), currentNames(read("k8s.yaml"))];
  // The label naming a Namespace's Project, which a rename may have given any name (`--rename`).
  const labelIn = (sync: string, kind: string) => new RegExp(`^export const ${kind.toUpperCase()}_LABEL = "([^"]+)"`, "m").exec(sync)?.[1];
  const labels = [labelIn(old("sync.ts"), was.kind), labelIn(read("sync.ts"), is.kind)];
  const renamed = (index: number) => (labels.every(Boolean) ? [labels[index]!] : []);
  const [from, to] = [{ ...was, kinds: [], labels: renamed(0) }, { ...is, kinds: [], labels: renamed(1) }];
  const features = featureNames(paths);
  const scratch = mkdtempSync(join(tmpdir(), "new-feature-"));
  try {
    return Object.fromEntries(
      paths.flatMap((path) => {
        const text = old(path);
        if (text.includes("\0")) return [];
        const hand = writtenByHand(text);
        const wanted = renameFile(path, features.reduce((current, feature) => withoutFeature(current, feature, path), hand), from, to);
        if (path === COMPOSITION || /^test\/features[.-]/.test(path)) return [[path, wanted]];
        const base = withoutComposition(wanted, path);
        if (base === wanted || !existsSync(new URL(path, root))) return [];
        const current = read(path);
        // Composing lines the copy already has, put back by hand after a refusal below, stay as they are.
        if (withoutComposition(writtenByHand(current), path) !== writtenByHand(current)) return [];
        const files = ["current", "base", "wanted"].map((name) => join(scratch, name));
        [writtenByHand(current), base, wanted].forEach((content, at) => writeFileSync(files[at]!, content));
        let merged: string;
        try {
          merged = execFileSync("git", ["merge-file", "-p", "--no-diff3", ...files], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
        } catch (error) {
          throw new Error(conflictExplained(path, current, (error as { stdout?: string }).stdout ?? "", commit));
        }
        return [[path, merged + current.slice(writtenByHand(current).length)]];
      }),
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Why a file's composing lines could not be put back, for a person who never
 * saw them: where the copy changed the lines beside them (its line numbers),
 * what it has there and what new-feature would write, and what to do.
 */
export function conflictExplained(path: string, current: string, merged: string, commit: string): string {
  const lines = current.split("\n");
  const places: string[] = [];
  let ours: string[] | undefined;
  let theirs: string[] | undefined;
  for (const line of merged.split("\n")) {
    if (line.startsWith("<<<<<<<")) ours = [];
    else if (line.startsWith("=======") && ours && !theirs) theirs = [];
    else if (line.startsWith(">>>>>>>") && ours && theirs) {
      const at = lines.findIndex((_, index) => ours!.every((mine, offset) => lines[index + offset] === mine));
      const where = ours.length === 0 || at < 0 ? "" : ours.length === 1 ? `line ${at + 1}` : `lines ${at + 1}-${at + ours.length}`;
      const quoted = (text: string[]) => text.map((line) => `    ${line}`).join("\n");
      places.push(`  ${where ? `at ${where}, ` : ""}this copy has:\n${quoted(ours)}\n  and new-feature would write:\n${quoted(theirs)}`);
      [ours, theirs] = [undefined, undefined];
    } else (theirs ?? ours)?.push(line);
  }
  return [
    `${path}: this copy changed the lines beside those that composed features (the ones marked "features", which went with the last feature), so new-feature cannot put them back as they were in commit ${commit.slice(0, 12)}:`,
    ...places,
    `Write the marked lines into ${path} by hand beside your own, then run new-feature again; it keeps a file that has them.`,
  ].join("\n");
}

/** Inserts `lines` before the one line that matches `at`, or throws naming the file. */
function before(text: string, at: RegExp, lines: string[], path: string): string {
  const all = text.split("\n");
  const index = all.findIndex((line) => at.test(line));
  if (index < 0 || all.findIndex((line, later) => later > index && at.test(line)) >= 0) throw new Error(`${path}: no single line matches ${at}, where a feature's part goes`);
  return [...all.slice(0, index), ...lines, ...all.slice(index)].join("\n");
}

// How sync orders the child groups, where features/index.ts is: a copy
// whose last feature went has no other child resource to order it among.
const composition = new URL("../features/index.ts", import.meta.url);
const readOrder: ((a: string, b: string) => number) | undefined = existsSync(composition) ? (await import(composition.href)).readOrder : undefined;

/**
 * Inserts a child resource's `lines` where sync reads its group
 * (features/index.ts's `readOrder`): before the first child resource after
 * the Namespace that is read after it, with the comments and mark above
 * that one, or else at the slot.
 */
function inReadOrder(text: string, group: string, slot: RegExp, lines: string[]): string {
  const all = text.split("\n");
  const first = all.findIndex((line) => line === "  childResources:");
  const end = all.findIndex((line) => slot.test(line));
  if (first < 0 || end < first) throw new Error("k8s.yaml: no childResources before the slot, where a feature's child resource goes");
  const entries = all.flatMap((line, at) => (at > first && at < end && /^ {4}- apiVersion: /.test(line) ? [at] : []));
  const order = readOrder;
  const later = order && entries.slice(1).find((at) => {
    const resource = /^ {6}resource: (\S+)$/.exec(all[at + 1] ?? "")?.[1] ?? "";
    return order(group, `${pluralize.singular(resource)}.${all[at]!.slice("    - apiVersion: ".length)}`) < 0;
  });
  if (later === undefined) return before(text, slot, lines, "k8s.yaml");
  let at = later;
  while (/^ {4}# /.test(all[at - 1] ?? "") && !/^ {4}# (end feature|slot):/.test(all[at - 1]!)) at--;
  return [...all.slice(0, at), ...lines, ...all.slice(at)].join("\n");
}

/** Inserts `lines` after the rows of the table whose row matches `row`. */
function afterTable(text: string, row: RegExp, lines: string[], path: string): string {
  const all = text.split("\n");
  const start = all.findIndex((line) => row.test(line));
  if (start < 0) throw new Error(`${path}: no row matches ${row}`);
  let end = start;
  while (all[end + 1]?.startsWith("|")) end++;
  return [...all.slice(0, end + 1), ...lines, ...all.slice(end + 1)].join("\n");
}

/**
 * Each fixture with the new child's group, empty, as Metacontroller sends
 * every group the CompositeController declares: without it, the webhook
 * refuses the request as sent to the wrong controller. Its keys in order,
 * as Metacontroller writes them.
 */
export function fixturesWith(child: Child, fixtures: Record<string, string>): Record<string, string> {
  const group = `${child.kind}.${child.apiVersion}`;
  return Object.fromEntries(
    Object.entries(fixtures).map(([path, text]) => {
      const request = JSON.parse(text);
      request.children = Object.fromEntries(Object.entries({ [group]: {}, ...request.children }).sort(([a], [b]) => (a < b ? -1 : 1)));
      return [path, `${JSON.stringify(request, null, 2)}\n`];
    }),
  );
}

/** Every file the feature changes, as it will be. */
export function editsFor({ name, child }: NewFeature, read: (path: string) => string): Record<string, string> {
  const field = camel(name);
  const mark = (comment: string) => `${comment} feature: ${name}`;
  const slot = (what: string) => new RegExp(`^\\s*(//|#|<!--) slot: ${what}( -->)?$`);
  const edits: Record<string, string> = {};
  const edit = (path: string, change: (text: string) => string) => (edits[path] = change(edits[path] ?? read(path)));

  edit(COMPOSITION, (text) => before(text, slot("imports"), [`import { ${field} } from "./${name}.ts"; ${mark("//")}`], COMPOSITION));
  edit(COMPOSITION, (text) => before(text, slot("features"), [`  ${field}, ${mark("//")}`], COMPOSITION));
  edit("k8s.yaml", (text) =>
    before(text, slot("spec"), [`                ${mark("#")}`, `                ${field}:`, `                  description: (${TO_FILL} what a Project says with it, for kubectl explain.)`, "                  type: string", "                  maxLength: 256", `                # end feature: ${name}`], "k8s.yaml"),
  );
  edit("README.md", (text) => before(text, slot("features"), [`<!-- feature: ${name} -->`, `- ${name}: (${TO_FILL} what every Project gets from it) ([features/${name}.ts](features/${name}.ts));`, `<!-- end feature: ${name} -->`], "README.md"));
  edit("docs/testing.md", (text) => before(text, /^\| `test\/take-away\.test\.ts` \|/, [`| \`test/${name}.test.ts\` | the ${name} feature: (${TO_FILL} what its tests pin) | <!-- feature: ${name} -->`], "docs/testing.md"));
  if (child) {
    const [group, version] = child.apiVersion.includes("/") ? child.apiVersion.split("/") : ["", child.apiVersion];
    const key = `${child.kind}.${child.apiVersion}`;
    edit("k8s.yaml", (text) =>
      inReadOrder(text, key, slot("child resources"), [`    ${mark("#")}`, `    # (${TO_FILL} why each Project owns it, and why this update strategy: InPlace puts back what is changed by hand.)`, `    - apiVersion: ${child.apiVersion}`, `      resource: ${child.resource}`, "      updateStrategy:", "        method: InPlace", `    # end feature: ${name}`]),
    );
    edit("k8s.yaml", (text) =>
      before(text, slot("owned resources"), [`      ${mark("#")}`, `      - apiGroups: ["${group}"]`, '        apiVersions: ["*"]', "        operations: [CREATE, UPDATE, DELETE]", `        resources: [${child.resource}]`, "        scope: Namespaced", `      # end feature: ${name}`], "k8s.yaml"),
    );
    edit("README.md", (text) => {
      // The diagram's markers stand in one column, past the widest group.
      const lines = text.split("\n");
      const closing = /^(\s+│\s+)\}\}\s+│$/;
      const indent = closing.exec(lines.find((line) => closing.test(line)) ?? "")?.[1] ?? "";
      const column = lines.map((line) => (/^\s+│\s+".*\s# feature: /.test(line) ? line.indexOf("# feature: ") : -1)).find((at) => at > 0);
      const entry = `${indent}"${key}": …,`;
      return before(text, closing, [`${entry.padEnd(Math.max(column ?? 0, entry.length + 2))}${mark("#")}`], "README.md");
    });
    edit("docs/operating.md", (text) =>
      afterTable(text, /^\| `NamespaceActive` \| True \|/, [`| \`${reasonOf(name)}\` | False | the Namespace is Active; the message names each ${child.kind} still to be created | <!-- feature: ${name} -->`], "docs/operating.md"),
    );
  }
  return edits;
}

function parse(args: string[]): NewFeature {
  const [name, ...options] = args;
  if (!name || name.startsWith("-")) throw new Error("a feature's name comes first");
  const given = new Map<string, string>();
  for (let index = 0; index < options.length; index += 2) {
    const [flag = "", value] = [options[index], options[index + 1]];
    if (!["--child", "--resource"].includes(flag) || value === undefined) throw new Error(`unknown option ${flag}, or no value after it`);
    given.set(flag.slice(2), value);
  }
  const child = given.get("child");
  if (child === undefined) return { name };
  const match = /^((?:[a-z0-9.-]+\/)?v\d+(?:(?:alpha|beta)\d+)?)\/([A-Z][A-Za-z0-9]*)$/.exec(child);
  if (!match) throw new Error(`--child ${child}: <apiVersion>/<Kind>, as rbac.authorization.k8s.io/v1/RoleBinding or v1/ConfigMap`);
  const [, apiVersion = "", kind = ""] = match;
  return { name, child: { apiVersion, kind, resource: given.get("resource") ?? resourceOf(kind) } };
}

if (import.meta.filename === process.argv[1]) {
  try {
    const feature = parse(process.argv.slice(2));
    const invalid = invalidName(feature.name, (path) => existsSync(new URL(path, root)));
    if (invalid) throw new Error(invalid);
    // Everything is made before anything is written.
    const restored = existsSync(new URL(COMPOSITION, root)) ? {} : compositionRestored((path) => readFileSync(new URL(path, root), "utf8"));
    const read = (path: string) => restored[path] ?? readFileSync(new URL(path, root), "utf8");
    const fixtures = readdirSync(new URL("test/fixtures/", root)).filter((file) => file.endsWith(".json")).map((file) => `test/fixtures/${file}`);
    const written = {
      ...restored,
      ...editsFor(feature, read),
      ...(feature.child ? fixturesWith(feature.child, Object.fromEntries(fixtures.map((path) => [path, read(path)]))) : {}),
      ...filesFor(feature),
    };
    for (const [path, text] of Object.entries(written)) {
      // features/ itself is gone from a clone of a copy that took its last feature away: git keeps no empty folder.
      mkdirSync(new URL(".", new URL(path, root)), { recursive: true });
      writeFileSync(new URL(path, root), text);
    }
    console.log(`new feature ${feature.name}: ${Object.keys(written).join(", ")}`);
    console.log(`next: its rules in features/${feature.name}.ts and its tests, and each sentence that opens with "(${TO_FILL}" (npm test names those left), then ${CHECK.join(", then ")}`);
  } catch (error) {
    console.error(`new-feature: ${(error as Error).message}; nothing was changed`);
    console.error("usage: npm run new-feature -- <name> [--child <apiVersion>/<Kind>] [--resource <plural>]");
    process.exit(2);
  }
}
