// `npm run take-away` removes a feature by its markers: what it removes, what
// it keeps, and that every feature's markers across the repository close.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { FEATURES } from "../sync.ts";
import { filesOf, neededByKept, needsOf, withoutFeature, writtenByHand } from "./take-away.ts";

const root = new URL("..", import.meta.url);
// Tracked and still there: a copy that has taken features away may not have committed it.
const tracked = execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((path) => path && existsSync(new URL(path, root)));
// The files there, committed or not: a feature just written counts.
const featuresDirectory = new URL("features/", root);
const features = existsSync(featuresDirectory) ? readdirSync(featuresDirectory).filter((file) => file.endsWith(".ts")).map((file) => file.slice(0, -".ts".length)) : [];

describe("take-away: markers", () => {
  test("a line that ends with the feature's marker goes, in TypeScript, YAML and Markdown alike", () => {
    const text = ["keep", "  members, // feature: members", "  - rolebindings  # feature: members", "| Members | x | <!-- feature: members -->", "also kept"].join("\n");
    assert.equal(withoutFeature(text, "members"), "keep\nalso kept");
  });

  test("a block from its opening line to its end line goes, markers included, nested blocks of others with it", () => {
    const text = ["a", "  # feature: members", "  b", "  // feature: guardrails", "  c", "  // end feature: guardrails", "  # end feature: members", "d"].join("\n");
    assert.equal(withoutFeature(text, "members"), "a\nd");
  });

  test("another feature's markers, and a name that only starts like this one, are left alone", () => {
    const text = ["x // feature: guardrails", "y // feature: members-extra", "# feature: membership", "z", "# end feature: membership"].join("\n");
    assert.equal(withoutFeature(text, "members"), text);
  });

  test("a marker that is only mentioned mid-line is no marker", () => {
    const text = "each line that ends with `// feature: members` goes, says the guide.";
    assert.equal(withoutFeature(text, "members"), text);
  });

  test("a feature's file names the features it needs; integrations needs the guardrails' profiles", () => {
    assert.deepEqual(needsOf("/**\n * # X\n *\n * Needs: guardrails, members (why).\n */"), ["guardrails", "members"]);
    assert.deepEqual(needsOf("/** Needs nothing. */"), []);
    if (features.includes("integrations")) assert.deepEqual(needsOf(readFileSync(new URL("integrations.ts", featuresDirectory), "utf8")), ["guardrails"]);
  });

  test("taking away a feature that a kept one needs is refused; taking both is not", () => {
    const files = { "features/integrations.ts": " * Needs: guardrails (why).", "features/guardrails.ts": "", "features/members.ts": "" };
    const read = (path: string) => files[path as keyof typeof files];
    assert.equal(neededByKept(["guardrails"], Object.keys(files), read), "integrations needs guardrails: take them away together, or neither");
    assert.equal(neededByKept(["guardrails", "integrations"], Object.keys(files), read), undefined);
    assert.equal(neededByKept(["members"], Object.keys(files), read), undefined);
  });

  test("a block left open is refused, naming the file and line", () => {
    assert.throws(() => withoutFeature("a\n<!-- feature: members -->\nb", "members", "README.md"), /^Error: README\.md:2: feature members is opened and never ended$/);
  });

  test("a feature owns its file in features/, its page in docs/, and the test files named after it", () => {
    const paths = ["features/members.ts", "test/members.test.ts", "test/members-cases.ts", "test/fixtures/members-sync.json", "test/sync.test.ts", "docs/members.md", "docs/cluster.md", "docs/members-old.md"];
    assert.deepEqual(filesOf("members", paths), ["features/members.ts", "test/members.test.ts", "test/members-cases.ts", "test/fixtures/members-sync.json", "docs/members.md"]);
  });
});

describe("take-away: every feature of this repository", () => {
  test("sync.ts composes every file in features/, and nothing else", () => {
    assert.equal(FEATURES.length, features.length, features.join(", "));
  });

  for (const feature of features) {
    test(`${feature}: every block it opens is closed, in every file`, () => {
      for (const path of tracked) {
        assert.doesNotThrow(() => withoutFeature(writtenByHand(readFileSync(new URL(path, root), "utf8")), feature, path));
      }
    });

    test(`${feature}: sync.ts composes it on one marked line, and imports it on another`, () => {
      const sync = readFileSync(new URL("sync.ts", root), "utf8");
      const marked = sync.split("\n").filter((line) => line.endsWith(`// feature: ${feature}`));
      assert.equal(marked.length, 2, marked.join("\n"));
      assert.ok(marked.some((line) => line.startsWith("import ") && line.includes(`"./features/${feature}.ts"`)));
    });
  }
});
