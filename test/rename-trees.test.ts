// This repository renamed to resources of other shapes (rename-trees.ts: a
// short and a long prefix, irregular plurals, a feature's kind and the
// parent's label under names of their own) still type-checks and passes the
// tests that read the names: a rename that left a length figure, a plural
// or a kind behind fails here, not in a copy. Three type checks and test
// runs of whole copies take minutes on a busy machine, past npm test's
// minute a file, so npm test skips them, saying so, and `npm run
// test:rename-trees` (RENAME_TREES=all, CI's step 9) runs them: the core's
// tests and the features' that read the names. The whole suite of
// such a copy also needs `npm run manifest && npm run transcripts` first
// (README's "Make it your own").
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { currentNames, filesToRename, namesAfter } from "../scripts/rename.ts";
import { describeNames, generatedNames, renamedTree } from "./rename-trees.ts";

const run = promisify(execFile);
// The tests that read the names sync.ts and k8s.yaml own: the core, its
// schemas and admission, the features that spell kinds, lengths and labels,
// and the uninstall, which speaks of the parents in the plural.
const CORE = ["sync", "crd-schema"];
const FEATURES = [
  "admission",
  "annotation-limits", // feature: annotation-limits
  "guardrails", // feature: guardrails
  "members-admission", // feature: members
  "adoption", // feature: adoption
  "new-feature",
  "uninstall",
];
const RUN = process.env["RENAME_TREES"] === "all";
const TESTS = [...CORE, ...FEATURES]
  .map((name) => `test/${name}.test.ts`)
  .filter((path) => filesToRename().includes(path));

describe("rename: whole trees", () => {
  const current = currentNames();
  const texts = filesToRename().map((path) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8"));
  const all = generatedNames(texts, current);
  const skip = !RUN && "minutes of work: npm run test:rename-trees runs it (CI's step 9)";
  test(`renamed to ${all.map(describeNames).join("; ")}, each type-checks and passes ${TESTS.join(", ")}`, { timeout: 600_000, skip }, async () => {
    await Promise.all(all.map(async (names) => {
      const { from, to } = namesAfter(current, names.to, names.renames);
      const tree = renamedTree(from, to);
      try {
        // A child test runner must not report to this one.
        const { NODE_TEST_CONTEXT: _, ...env } = process.env;
        const options = { cwd: tree, env: { ...env, FORCE_COLOR: "0" }, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 };
        const typeCheck = await run("node_modules/.bin/tsc", ["-p", ".", "--pretty", "false"], options).catch((error) => error);
        assert.equal(typeCheck.code ?? 0, 0, `tsc in ${tree}:\n${typeCheck.stdout}`);
        const tests = await run("node_modules/.bin/tsx", ["--test", "--test-reporter=dot", ...TESTS], options).catch((error) => error);
        assert.equal(tests.code ?? 0, 0, `${TESTS.join(" ")} in ${tree}:\n${String(tests.stdout).slice(-6000)}`);
      } finally {
        rmSync(tree, { recursive: true, force: true });
      }
    }));
  });
});
