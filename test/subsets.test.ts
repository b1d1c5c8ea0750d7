// `npm run test:subsets` proves each feature comes and goes alone: which
// trees it makes of this repository's features and their `Needs:`.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { SAME_IN_EVERY_TREE, needsIn, subsetTrees, testsOf } from "./subsets.ts";

describe("test:subsets: the trees", () => {
  test("each feature is taken away with what needs it, directly or not, and kept with what it needs, directly or not; the core takes all; d's two trees are c's and a's again", () => {
    const trees = subsetTrees({ a: [], b: ["a"], c: ["b"], d: [] });
    assert.deepEqual(Object.fromEntries(trees.map(({ name, takeAway }) => [name, takeAway.join(" ")])), {
      "without-a": "a b c",
      "only-a": "b c d",
      "without-b": "b c",
      "only-b": "c d",
      "without-c": "c",
      "only-c": "d",
      core: "a b c d",
    });
  });

  test("a tree runs its type check and every test file it keeps but those the same in every tree; the core's, and any with --test-all, npm test", () => {
    const files = ["a.test.ts", "a-admission.test.ts", "sync.test.ts", "helpers.ts", SAME_IN_EVERY_TREE[0]!, "fixtures"];
    const [typecheck, tests] = testsOf(files, false);
    assert.deepEqual(typecheck, ["npm", ["run", "-s", "typecheck"]]);
    assert.deepEqual(tests![1].filter((arg) => !arg.startsWith("-")), ["tsx", "test/a-admission.test.ts", "test/a.test.ts", "test/sync.test.ts"]);
    assert.deepEqual(testsOf(files, true), [["npm", ["test"]]]);
  });

  test("a tree that takes away what one before it does, or nothing, is made once or not at all", () => {
    assert.deepEqual(subsetTrees({ a: [], b: [] }).map(({ name }) => name), ["without-a", "only-a", "core"]);
    assert.deepEqual(subsetTrees({ a: [] }).map(({ name }) => name), ["without-a"]);
    assert.deepEqual(subsetTrees({}), []);
  });

  test("this repository: each feature taken away with what needs it, and kept with what it needs, known by what its tree takes away; and a tree with none", () => {
    const needs = needsIn(fileURLToPath(new URL("..", import.meta.url)));
    const trees = subsetTrees(needs);
    // By what it takes away, not by name: a tree the same as one before it is made once, by that one's name
    // (where one feature needs two others, keeping one of them alone takes away what taking the other away does).
    const features = Object.keys(needs).sort();
    const closure = (start: string, next: (feature: string) => string[]) => {
      const reached = new Set([start]);
      for (const one of reached) next(one).forEach((other) => reached.add(other));
      return reached;
    };
    const made = new Set(trees.map(({ takeAway }) => takeAway.join(" ")));
    for (const feature of features) {
      const going = closure(feature, (one) => features.filter((other) => needs[other]!.includes(one)));
      assert.ok(made.has(features.filter((each) => going.has(each)).join(" ")), `a tree takes away ${feature} and what needs it`);
      const kept = closure(feature, (one) => needs[one]!);
      const others = features.filter((each) => !kept.has(each));
      assert.ok(others.length === 0 || made.has(others.join(" ")), `a tree keeps ${feature} and what it needs alone`);
    }
    // The core's tree, or one that already takes all: without-F, where every other feature needs F.
    if (Object.keys(needs).length > 0) assert.ok(trees.some(({ takeAway }) => takeAway.join(" ") === Object.keys(needs).sort().join(" ")), "a tree takes every feature away");
  });

  test("a feature imports nothing of another's but the core's; a feature's tests another's only where it needs it, or on a line marked as that one's", () => {
    const root = new URL("..", import.meta.url);
    const needs = needsIn(fileURLToPath(root));
    const features = Object.keys(needs);
    const reach = (feature: string) => {
      const reached = new Set([feature]);
      for (const one of reached) (needs[one] ?? []).forEach((other) => reached.add(other));
      return reached;
    };
    const reaches: string[] = [];
    for (const feature of features) {
      const own = readdirSync(new URL("test/", root)).filter((file) => file.startsWith(`${feature}.`) || file.startsWith(`${feature}-`));
      for (const [path, allowed] of [[`features/${feature}.ts`, new Set([feature])] as const, ...own.map((file) => [`test/${file}`, reach(feature)] as const)]) {
        readFileSync(new URL(path, root), "utf8")
          .split("\n")
          .forEach((line, index) => {
            const [, other] = /^(?:import|\}) .*from "(?:\.\.\/features|\.)\/([a-z0-9-]+)\.ts"/.exec(line) ?? [];
            const marked = /\/\/ feature: ([a-z0-9-]+(?:(?:, | & )[a-z0-9-]+)*)$/.exec(line)?.[1]?.split(/, | & /) ?? [];
            if (other && features.includes(other) && !allowed.has(other) && !marked.includes(other)) reaches.push(`${path}:${index + 1} imports ${other}`);
          });
      }
    }
    assert.deepEqual(reaches, []);
  });
});
