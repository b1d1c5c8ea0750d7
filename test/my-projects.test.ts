// scripts/kubectl-my_projects, the plugin people install to see the
// Projects they are in, run against a kubectl stand-in that records each
// call: what it asks the API server, with the caller's own flags every time,
// and what it prints. e2e step 53 runs it, installed, against a real one.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { GROUP, PARENT } from "../sync.ts";
import { sync } from "../sync.ts"; // feature: members & environments
import { readManifest } from "../scripts/manifest.ts"; // feature: members & environments
import { environmentNamespace } from "../features/environments.ts"; // feature: members & environments
import { at, namespaces, project, related } from "./helpers.ts"; // feature: members & environments
import { KREW_MANIFEST, PLUGIN_FILE, namingArchive, pluginArchive, sha256 } from "../scripts/krew.ts";

const SCRIPT = fileURLToPath(new URL("../scripts/kubectl-my_projects", import.meta.url));
const RESOURCE = `${PARENT.plural}.${GROUP}`;

// A kubectl that writes each call's arguments, one call a line, and answers
// `auth can-i` with $CAN_LIST, `create` (the rules review) with $RULES, or
// fails it with $REVIEW_FAILS, and `get` with a table of the names before
// the flags.
const bin = mkdtempSync(join(tmpdir(), "my-projects-"));
after(() => rmSync(bin, { recursive: true, force: true }));
writeFileSync(
  join(bin, "kubectl"),
  `#!/bin/sh
printf "%s\\n" "$*" >>"$CALLS"
case "$1" in
  auth) echo "$CAN_LIST"; [ "$CAN_LIST" = yes ] ;;
  create) if [ -n "$REVIEW_FAILS" ]; then echo "$REVIEW_FAILS" >&2; exit 1; fi; printf '%s' "$RULES" ;;
  get) echo NAME; shift 2; while [ $# -gt 0 ] && [ "\${1#-}" = "$1" ]; do echo "$1"; shift; done ;;
esac
`,
);
chmodSync(join(bin, "kubectl"), 0o755);

function myProjects(args: string[], { canList = "no", rules = "", reviewFails = "" } = {}) {
  const calls = join(bin, `calls-${Math.random().toString(36).slice(2)}`);
  writeFileSync(calls, "");
  const result = spawnSync("sh", [SCRIPT, ...args], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}:${process.env["PATH"]}`, CALLS: calls, CAN_LIST: canList, RULES: rules, REVIEW_FAILS: reviewFails },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, calls: readFileSync(calls, "utf8").split("\n").filter(Boolean) };
}

describe("kubectl my-projects", () => {
  test("it asks about the parent's own resource, as sync.ts names it", () => {
    const script = readFileSync(SCRIPT, "utf8");
    assert.ok(script.includes(`get ${RESOURCE}`) && script.includes(`(eq (index .apiGroups 0) "${GROUP}") (eq (index .resources 0) "${PARENT.plural}")`), RESOURCE);
  });

  test("a caller who may list Projects gets kubectl get projects, with their own flags", () => {
    const run = myProjects(["--as", "root", "--context", "live"], { canList: "yes" });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(run.calls, [`auth can-i list ${RESOURCE} --as root --context live`, `get ${RESOURCE} --as root --context live`]);
  });

  test("any other gets the Projects their rules name, each once and in order, asked with their own flags", () => {
    const run = myProjects(["--as", "ann"], { rules: "shop\napp\nshop\n" });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.calls.length, 3);
    assert.match(run.calls[1]!, /^create --validate=false -f - --as ann -o go-template=/);
    assert.equal(run.calls[2], `get ${RESOURCE} app shop --as ann`);
    assert.equal(run.stdout, "NAME\napp\nshop\n");
  });

  test("one in no Project reads kubectl's own words for an empty list, and the command succeeds", () => {
    const run = myProjects(["--as", "mallory"]);
    assert.deepEqual([run.status, run.stdout, run.stderr], [0, "", "No resources found\n"]);
    assert.equal(run.calls.filter((call) => call.startsWith("get ")).length, 0);
  });

  test("a failed question (a flag kubectl does not take, a server out of reach) fails the command with kubectl's message, never as an empty answer", () => {
    const run = myProjects(["--no-such-flag"], { reviewFails: "error: unknown flag: --no-such-flag" });
    assert.notEqual(run.status, 0);
    assert.equal(run.stderr, "error: unknown flag: --no-such-flag\n");
  });

  test("it is a POSIX sh script, executable, as kubectl runs a plugin found on PATH", () => {
    assert.equal(readFileSync(SCRIPT, "utf8").split("\n")[0], "#!/bin/sh");
    assert.equal(spawnSync("sh", ["-n", SCRIPT]).status, 0);
    assert.ok((spawnSync("stat", ["-c", "%a", SCRIPT], { encoding: "utf8" }).stdout.trim() as string).endsWith("5"), "executable by all");
  });
});

describe("kubectl my-projects: its krew manifest", () => {
  const manifest = parse(readFileSync(KREW_MANIFEST, "utf8"));
  const [platform] = manifest.spec.platforms;

  test("it names the archive npm run manifest makes of the script as it is now, by its SHA-256: run npm run manifest after any change to the script", async () => {
    assert.equal(platform.sha256, sha256(await pluginArchive()));
  });

  test("npm run manifest writes the sum of the script as it is now into the manifest, and changes nothing else", async () => {
    const text = readFileSync(KREW_MANIFEST, "utf8");
    const stale = text.replace(platform.sha256, "0".repeat(64));
    assert.equal(namingArchive(stale, await pluginArchive()), text);
  });

  test("the archive is the same bytes every time", async () => {
    assert.deepEqual(await pluginArchive(), await pluginArchive());
  });

  test("krew installs the script as the command kubectl runs for the plugin's name, at the package's version", () => {
    assert.equal(`kubectl-${manifest.metadata.name.replaceAll("-", "_")}`, PLUGIN_FILE);
    assert.equal(`scripts/${PLUGIN_FILE}`, SCRIPT.slice(SCRIPT.lastIndexOf("scripts/")));
    assert.deepEqual([platform.bin, platform.files], [PLUGIN_FILE, [{ from: PLUGIN_FILE, to: "." }]]);
    assert.equal(manifest.spec.version, `v${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}`);
  });
});

// feature: members & environments
// The plugin asks for the API server's own table, so what the CRD's columns
// read of a Project's status is what a member sees: each environment's name
// and its Namespace, in the order sync writes them.
describe("kubectl my-projects: each Project's environments", () => {
  const columns = readManifest().find("CustomResourceDefinition", RESOURCE).spec.versions[0].additionalPrinterColumns as { name: string; jsonPath: string; priority?: number }[];
  /**
   * What a `.status.<field>` column shows, as the API server prints a cell:
   * the first value its JSONPath finds, so a list shows its first item alone
   * (seen on 1.36: e2e step 91).
   */
  const shownBy = (column: { jsonPath: string }, status: Record<string, unknown>) => {
    const [, field, each] = /^\.status\.(\w+)(?:\[\*\]\.(\w+))?$/.exec(column.jsonPath) ?? [];
    assert.ok(field, column.jsonPath);
    const value = status[field];
    return each ? String((value as Record<string, string>[] | undefined)?.[0]?.[each] ?? "") : String(value ?? "");
  };
  const environmentColumns = columns.filter((column) => /^\.status\.environment/.test(column.jsonPath));

  test("it asks for the server's table, not columns of its own, with every column shown by default", () => {
    const script = readFileSync(SCRIPT, "utf8");
    assert.doesNotMatch(script, /get projects[^\n]*-o/, "columns of its own would leave the CRD's out");
    assert.deepEqual(environmentColumns.map((column) => [column.name, column.priority ?? 0]), [["Environments", 0], ["Environment Namespaces", 0]]);
  });

  test("a Project with three environments shows their names and their Namespaces, as sync writes its status", () => {
    const shop = project("shop", { spec: { environments: [{ name: "dev" }, { name: "staging" }, { name: "prod", namespace: "payments" }] } });
    const answer = sync(shop, namespaces({ [environmentNamespace("shop", "dev")]: "Active", [environmentNamespace("shop", "staging")]: "Active" }), related(), at);
    const [names, namespacesShown] = environmentColumns.map((column) => shownBy(column, answer.status));
    assert.equal(names, "dev,staging,prod");
    assert.equal(namespacesShown, `${environmentNamespace("shop", "dev")},${environmentNamespace("shop", "staging")},payments`);
  });
});
// end feature: members & environments
