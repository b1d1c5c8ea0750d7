// `npm run new-feature` writes a feature ready to fill in every place a
// feature has; `npm run take-away` of it gives back the repository as it was.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import pluralize from "pluralize";
import { API_VERSION } from "../sync.ts";
import { TO_FILL, compositionRestored, editsFor, filesFor, fixturesWith, invalidName, resourceOf, unfilled, type NewFeature } from "../scripts/new-feature.ts";
import { filesToRename } from "../scripts/rename.ts";
import { COMPOSITION, withoutFeature, writtenByHand } from "../scripts/take-away.ts";

const onDisk = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");
// A copy that took its last feature away gets the composition back first, as the command does.
const restored = existsSync(new URL(`../${COMPOSITION}`, import.meta.url)) ? {} : compositionRestored(onDisk);
const read = (path: string) => restored[path] ?? onDisk(path);
// A name no copy has, so that the test means the same in one that made its own owners.
const EXAMPLE = { name: "zz-example", child: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", resource: "rolebindings" } };

describe("new-feature", () => {
  test("with a child, it changes features/index.ts, k8s.yaml, README.md and the docs' tables; without, no child's places", () => {
    assert.deepEqual(Object.keys(editsFor(EXAMPLE, read)).sort(), ["README.md", "docs/operating.md", "docs/testing.md", COMPOSITION, "k8s.yaml"].sort());
    assert.deepEqual(Object.keys(editsFor({ name: "zz-example" }, read)).sort(), ["README.md", "docs/testing.md", COMPOSITION, "k8s.yaml"].sort());
  });

  for (const feature of [EXAMPLE, { name: "zz-example" }] as NewFeature[]) {
    test(`taking it away gives back every file as it was (${feature.child ? "with" : "without"} a child)`, () => {
      for (const [path, text] of Object.entries(editsFor(feature, read))) {
        const written = writtenByHand(text);
        assert.equal(withoutFeature(written, feature.name, path) + text.slice(written.length), read(path), path);
      }
    });
  }

  test("each part it adds names the feature or its child where the slot is", () => {
    const edits = editsFor(EXAMPLE, read);
    assert.match(edits[COMPOSITION]!, /^import \{ zzExample \} from "\.\/zz-example\.ts"; \/\/ feature: zz-example\n\/\/ slot: imports$/m);
    assert.match(edits[COMPOSITION]!, /^ {2}zzExample, \/\/ feature: zz-example\n {2}\/\/ slot: features$/m);
    assert.match(edits["k8s.yaml"]!, /- apiVersion: rbac\.authorization\.k8s\.io\/v1\n {6}resource: rolebindings\n {6}updateStrategy:\n {8}method: InPlace\n {4}# end feature: zz-example\n/);
    assert.match(edits["k8s.yaml"]!, /- apiGroups: \["rbac\.authorization\.k8s\.io"\]\n[^\n]*\n[^\n]*\n {8}resources: \[rolebindings\]\n[^\n]*\n {6}# end feature: zz-example\n {6}# slot: owned resources/);
    assert.match(edits["README.md"]!, /"RoleBinding\.rbac\.authorization\.k8s\.io\/v1": …, +# feature: zz-example\n\s+│\s+\}\}/);
    assert.match(edits["docs/operating.md"]!, /^\| `WaitingForZzExample` \| False \|/m);
  });

  test("its child resource goes where sync reads its group, whatever features this copy keeps: after the Namespace, by kind", async () => {
    const composition = new URL(`../${COMPOSITION}`, import.meta.url);
    const readOrder: ((a: string, b: string) => number) | undefined = existsSync(composition) ? (await import(composition.href)).readOrder : undefined;
    const groupsIn = (text: string) => {
      const lines = text.slice(text.indexOf("\n  childResources:\n")).split("\n");
      const end = lines.findIndex((line) => /^ {4}# slot: child resources$/.test(line));
      return lines.slice(0, end).flatMap((line, at) => {
        const resource = /^ {6}resource: (\S+)$/.exec(lines[at + 1] ?? "")?.[1];
        return line.startsWith("    - apiVersion: ") && resource ? [`${pluralize.singular(resource)}.${line.slice("    - apiVersion: ".length)}`] : [];
      });
    };
    const before = groupsIn(read("k8s.yaml"));
    for (const child of [{ apiVersion: "coordination.k8s.io/v1", kind: "Lease", resource: "leases" }, { apiVersion: API_VERSION, kind: "ZzClaim", resource: "zzclaims" }]) {
      const after = groupsIn(editsFor({ name: "zz-example", child }, read)["k8s.yaml"]!);
      const at = after.indexOf(`${child.resource.slice(0, -1)}.${child.apiVersion}`);
      assert.ok(at > 0, `${child.kind} after the Namespace`);
      assert.deepEqual(after.toSpliced(at, 1), before, child.kind);
      for (const [index, group] of after.entries()) {
        const order = readOrder?.(`${child.kind}.${child.apiVersion}`, group) ?? 1;
        if (index > 0 && index !== at) assert.ok(index < at ? order >= 0 : order < 0, `${child.kind} and ${group}`);
      }
    }
  });

  test("with a child, each fixture gets its group, empty and in order, as Metacontroller sends every declared group", () => {
    const request = { controller: {}, parent: {}, children: { "Namespace.v1": { x: {} }, "ServiceAccount.v1": {} }, related: {}, finalizing: false };
    const { children } = JSON.parse(fixturesWith(EXAMPLE.child!, { "test/fixtures/a.json": JSON.stringify(request) })["test/fixtures/a.json"] ?? "");
    assert.deepEqual(Object.keys(children), ["Namespace.v1", "RoleBinding.rbac.authorization.k8s.io/v1", "ServiceAccount.v1"]);
    assert.deepEqual([children["RoleBinding.rbac.authorization.k8s.io/v1"], children["Namespace.v1"]], [{}, { x: {} }]);
  });

  test("what it writes for a person to write anew is found, in every file it touches, until it is written", () => {
    for (const feature of [EXAMPLE, { name: "zz-example" }] as NewFeature[]) {
      const written = { ...filesFor(feature), ...editsFor(feature, read) };
      const left = unfilled(written);
      const files = new Set(left.map((line) => line.slice(0, line.indexOf(":"))));
      // Every file but features/index.ts, where only its import and its place go, and
      // docs/operating.md, whose reason says what the code written does.
      assert.deepEqual([...files].sort(), Object.keys(written).filter((path) => ![COMPOSITION, "docs/operating.md"].includes(path)).sort());
      assert.deepEqual(unfilled(Object.fromEntries(Object.entries(written).map(([path, text]) => [path, text.replaceAll(`(${TO_FILL} `, "(")]))), []);
    }
  });

  test("no sentence it left for a person is still in this tree", () => {
    // This file and new-feature.ts speak of the words themselves.
    const files = filesToRename().filter((path) => !/^(scripts|test)\/new-feature(\.test)?\.ts$/.test(path));
    const texts = Object.fromEntries(files.map((path) => [path, read(path)]).filter(([, text]) => !text!.includes("\0")));
    assert.deepEqual(unfilled(texts), []);
  });

  test("its files are the feature and its test, named after it", () => {
    assert.deepEqual(Object.keys(filesFor(EXAMPLE)), ["features/zz-example.ts", "test/zz-example.test.ts"]);
    assert.match(filesFor(EXAMPLE)["features/zz-example.ts"]!, /export const zzExample: Feature<typeof spec, typeof children>/);
  });

  test("a name that is not lower-case words with dashes, or a feature's that exists, is refused", () => {
    const none = () => false;
    assert.equal(invalidName("repo-access", none), undefined);
    assert.match(invalidName("Owners", none) ?? "", /^Owners: a feature's name is lower-case words/);
    assert.match(invalidName("owners-", none) ?? "", /lower-case words/);
    assert.match(invalidName("owners", (path) => path === "features/owners.ts") ?? "", /^owners: features\/owners\.ts exists$/);
  });

  test("in a copy without git history, bringing back the composition is refused in one line naming why, not with git's error", () => {
    const copy = mkdtempSync(join(tmpdir(), "new-feature-no-git-"));
    try {
      assert.throws(
        () => compositionRestored(onDisk, copy),
        (error: Error) => /^features\/index\.ts, which composes features, went with the last feature, and this copy has no git history to bring it back from: run new-feature in a git clone/.test(error.message) && !error.message.includes("\n"),
      );
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  describe("a copy that changed the lines beside those that composed features", () => {
    // A copy whose last commit took the last feature away, and before it one whose page had a line composing features.
    const page = "docs/cluster.md";
    const composed = "# Walkthrough\n\nThe webhook asked only for the name,\nthe labels its features set, <!-- features -->\nand the label.\n";
    const edited = "# Walkthrough\n\nThe webhook asked only for the name and the shelf's colour,\nand the label.\n";
    const withHistory = (test: (copy: string) => void) => {
      const copy = mkdtempSync(join(tmpdir(), "new-feature-conflict-"));
      const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=test", "-c", "user.email=test@localhost", ...args], { cwd: copy, stdio: "ignore" });
      try {
        for (const [path, text] of [["sync.ts", onDisk("sync.ts")], ["k8s.yaml", onDisk("k8s.yaml")], [COMPOSITION, "export {};\n"], [page, composed]] as const) {
          mkdirSync(join(copy, path, ".."), { recursive: true });
          writeFileSync(join(copy, path), text);
        }
        git("init", "-q");
        git("add", "-A");
        git("commit", "-q", "-m", "with features");
        git("rm", "-q", COMPOSITION);
        git("commit", "-q", "-m", "the last feature taken away");
        test(copy);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    };
    const reading = (text: string) => (path: string) => (path === page ? text : onDisk(path));

    test("is refused naming the file, the line the copy changed, both texts and what to do", () =>
      withHistory((copy) =>
        assert.throws(
          () => compositionRestored(reading(edited), copy),
          (error: Error) =>
            error.message.startsWith(`${page}: this copy changed the lines beside those that composed features`) &&
            error.message.includes("at line 3, this copy has:\n    The webhook asked only for the name and the shelf's colour,\n") &&
            error.message.includes("new-feature would write:\n    The webhook asked only for the name,\n    the labels its features set, <!-- features -->") &&
            error.message.includes(`Write the marked lines into ${page} by hand`),
        ),
      ));

    test("keeps the file as it is once its marked lines are written back by hand", () =>
      withHistory((copy) => {
        const mended = edited.replace(",\n", ",\nthe labels its features set, <!-- features -->\n");
        assert.equal(compositionRestored(reading(mended), copy)[page], undefined);
      }));

    test("an untouched page gets its lines back", () =>
      withHistory((copy) => assert.equal(compositionRestored(reading("# Walkthrough\n\nThe webhook asked only for the name,\nand the label.\n"), copy)[page], composed)));
  });

  test("a kind's resource is spelt as Kubernetes spells its own", () => {
    assert.deepEqual(["RoleBinding", "NetworkPolicy", "Ingress", "ConfigMap"].map(resourceOf), ["rolebindings", "networkpolicies", "ingresses", "configmaps"]);
  });
});
