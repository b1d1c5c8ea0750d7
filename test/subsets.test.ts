// `npm run test:subsets` proves each feature comes and goes alone: which
// trees it makes of this repository's features and their `Needs:`.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { needsIn, subsetTrees } from "./subsets.ts";

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

  test("a tree that takes away what one before it does, or nothing, is made once or not at all", () => {
    assert.deepEqual(subsetTrees({ a: [], b: [] }).map(({ name }) => name), ["without-a", "only-a", "core"]);
    assert.deepEqual(subsetTrees({ a: [] }).map(({ name }) => name), ["without-a"]);
    assert.deepEqual(subsetTrees({}), []);
  });

  test("this repository: each feature taken away with what needs it, and a tree with none", () => {
    const needs = needsIn(fileURLToPath(new URL("..", import.meta.url)));
    const trees = subsetTrees(needs);
    for (const feature of Object.keys(needs)) {
      const without = trees.find(({ name }) => name === `without-${feature}`);
      assert.ok(without?.takeAway.includes(feature), feature);
      for (const needing of Object.keys(needs).filter((other) => needs[other]!.includes(feature))) assert.ok(without!.takeAway.includes(needing), `${needing} needs ${feature}`);
    }
    // The core's tree, or one that already takes all: without-F, where every other feature needs F.
    if (Object.keys(needs).length > 0) assert.ok(trees.some(({ takeAway }) => takeAway.join(" ") === Object.keys(needs).sort().join(" ")), "a tree takes every feature away");
  });
});
