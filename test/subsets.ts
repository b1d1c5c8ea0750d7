// `npm run test:subsets`: every feature comes and goes alone. For each file
// in features/, two trees, each a copy of this working tree (what is
// committed or not, so that a feature just written counts) in a temporary
// directory: one with that feature taken away, with the features whose
// `Needs:` name it; one with it kept alone, with what it needs. Then the
// core, with every feature taken away. In each, as README's "Make it your
// own" runs it: `npm run take-away`, `npm run manifest`, `npm run
// transcripts`; then its own tests: the core's tree runs `npm test` whole,
// every other its type check and its test files but those that come out the
// same in every tree (`SAME_IN_EVERY_TREE`: the commands' own, which read
// a tree's files as text, and main.ts as a process), so main's `npm test`
// and the core's prove them; with
// `--test-all`, every tree's `npm test`. Names of trees as arguments run
// only those (`npm run test:subsets -- core`, or `only-<feature>`,
// `without-<feature>`).
//
// The trees share this repository's node_modules by a symlink, and run
// `--jobs` at once (2 by default, as CI has cores): their tests wait on
// processes and servers as much as they compute. Each tree is removed once
// done, passed or not, unless `--keep`.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { needsOf } from "../scripts/take-away.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

export type Tree = { name: string; takeAway: string[] };

/**
 * The trees that prove each feature comes and goes alone: `without-F` takes
 * away F and every feature that needs it, directly or not; `only-F` takes
 * away all but F and what it needs; `core` takes away all. A tree that would
 * take away the same features as one before it is left out.
 */
export function subsetTrees(needs: Record<string, string[]>): Tree[] {
  const features = Object.keys(needs).sort();
  const closure = (start: string, next: (feature: string) => string[]) => {
    const reached = new Set([start]);
    for (const feature of reached) for (const other of next(feature)) reached.add(other);
    return reached;
  };
  const neededBy = (feature: string) => features.filter((other) => needs[other]?.includes(feature));
  const trees: Tree[] = features.flatMap((feature) => {
    const going = closure(feature, neededBy);
    const kept = closure(feature, (each) => needs[each] ?? []);
    return [
      { name: `without-${feature}`, takeAway: features.filter((each) => going.has(each)) },
      { name: `only-${feature}`, takeAway: features.filter((each) => !kept.has(each)) },
    ];
  });
  trees.push({ name: "core", takeAway: features });
  const seen = new Set<string>();
  return trees.filter(({ takeAway }) => takeAway.length > 0 && !seen.has(takeAway.join(" ")) && seen.add(takeAway.join(" ")));
}

/** What each file in features/ of a tree says it needs. */
export function needsIn(directory: string): Record<string, string[]> {
  const features = join(directory, "features");
  if (!existsSync(features)) return {};
  const files = readdirSync(features).filter((file) => file.endsWith(".ts") && file !== "index.ts");
  return Object.fromEntries(files.map((file) => [file.slice(0, -".ts".length), needsOf(readFileSync(join(features, file), "utf8"))]));
}

/** A copy of the working tree's files, tracked or not ignored, as a repository of one commit: take-away lists what git tracks. */
function copyWorkingTree(to: string) {
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" });
  for (const path of new Set(listed.split("\0").filter(Boolean))) {
    // What the copy links to instead, where .gitignore's `node_modules/` does not cover a link of that name.
    if (!existsSync(join(root, path)) || /^(node_modules|\.cache)(\/|$)/.test(path)) continue;
    mkdirSync(dirname(join(to, path)), { recursive: true });
    if (lstatSync(join(root, path)).isSymbolicLink()) symlinkSync(readlinkSync(join(root, path)), join(to, path));
    else copyFileSync(join(root, path), join(to, path));
  }
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=subsets", "-c", "user.email=subsets@localhost", ...args], { cwd: to, stdio: "ignore" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "--no-verify", "-m", "the working tree");
  symlinkSync(join(root, "node_modules"), join(to, "node_modules"));
  // The runtimes some tests start, as `npm run test:runtimes` installed them here.
  if (existsSync(join(root, ".cache/runtimes"))) {
    mkdirSync(join(to, ".cache"));
    symlinkSync(join(root, ".cache/runtimes"), join(to, ".cache/runtimes"));
  }
}

type Outcome = { tree: Tree; failed?: string; log: string; tests?: string };

/**
 * Tests that come out the same in every tree: those of the commands
 * themselves (what take-away, rename, new-feature, subsets and the
 * walkthrough's reader do to a tree's files, which the same code reads as
 * text) and of what no feature touches (the type check's rules, main.ts as a
 * process). A tree with fewer features proves nothing more of them than the
 * core's tree and main's `npm test`, which run them.
 */
export const SAME_IN_EVERY_TREE = ["take-away.test.ts", "new-feature.test.ts", "rename.test.ts", "rename-trees.test.ts", "subsets.test.ts", "walkthrough.test.ts", "typecheck.test.ts", "process.test.ts"];

/** What a tree runs after take-away, manifest and transcripts: the core's tree, or any with `--test-all`, `npm test`; any other its type check, then its test files but those the same in every tree. */
export function testsOf(files: string[], whole: boolean): [string, string[]][] {
  if (whole) return [["npm", ["test"]]];
  const own = files.filter((file) => file.endsWith(".test.ts") && !SAME_IN_EVERY_TREE.includes(file)).sort();
  // Twice npm test's deadline: trees run two at once, each with half the
  // cores npm test has (seen: a feature's test file past 60 s, at a load of 30).
  return [
    ["npm", ["run", "-s", "typecheck"]],
    ["node", ["--import", "tsx", "--test", "--test-timeout=120000", "--test-reporter=spec", "--test-reporter=./test/summary-reporter.mjs", "--test-reporter-destination=stdout", "--test-reporter-destination=stdout", ...own.map((file) => `test/${file}`)]],
  ];
}

function execute(command: string, args: string[], cwd: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => resolve({ status: null, output: `${output}${error}` }));
    child.on("close", (status) => resolve({ status, output }));
  });
}

async function run(tree: Tree, directory: string, whole: boolean): Promise<Outcome> {
  const log = join(directory, "subsets.log");
  let output = "";
  const step = async (command: string, args: string[]) => {
    const result = await execute(command, args, directory);
    output += `$ ${command} ${args.join(" ")}\n${result.output}`;
    writeFileSync(log, output);
    return result.status === 0 ? undefined : `${command} ${args.slice(0, 4).join(" ")}${args.length > 4 ? " ..." : ""}`;
  };
  for (const [command, args] of [
    ["npm", ["run", "-s", "take-away", "--", ...tree.takeAway]],
    ["npm", ["run", "-s", "manifest"]],
    ["npm", ["run", "-s", "transcripts"]],
  ] as [string, string[]][]) {
    const failed = await step(command, args);
    if (failed) return { tree, failed, log: output };
  }
  const tests = testsOf(readdirSync(join(directory, "test")), whole);
  for (const [command, args] of tests) {
    const failed = await step(command, args);
    if (failed) return { tree, failed, log: output };
  }
  const files = tests.at(-1)![1].filter((arg) => arg.endsWith(".test.ts")).length;
  return { tree, log: output, tests: `${whole ? "npm test" : `type check, ${files} test files`}: ${output.trim().split("\n").at(-1)}` };
}

if (import.meta.filename === process.argv[1]) {
  const args = process.argv.slice(2);
  const keep = args.includes("--keep");
  const testAll = args.includes("--test-all");
  const jobsArg = args.find((arg) => arg.startsWith("--jobs="));
  const jobs = jobsArg ? Number(jobsArg.slice("--jobs=".length)) : 2;
  const named = args.filter((arg) => !arg.startsWith("--"));
  if (!Number.isInteger(jobs) || jobs < 1) {
    console.error(`test:subsets: --jobs=N takes a whole number of trees at once, 1 or more, not ${jobsArg}`);
    process.exit(2);
  }
  const needs = needsIn(root);
  const trees = subsetTrees(needs).filter(({ name }) => named.length === 0 || named.includes(name));
  const unknown = named.filter((name) => !trees.some((tree) => tree.name === name));
  if (unknown.length) {
    console.error(`test:subsets: no tree ${unknown.join(", ")}; the trees are ${subsetTrees(needs).map(({ name }) => name).join(", ")}`);
    process.exit(2);
  }
  const base = mkdtempSync(join(tmpdir(), "subsets-"));
  const started = Date.now();
  const failures: Outcome[] = [];
  const waiting = [...trees];
  const worker = async () => {
    for (let tree = waiting.shift(); tree; tree = waiting.shift()) {
      const began = Date.now();
      const directory = join(base, tree.name);
      // The core's tree, by whatever name: without-F takes every feature where all the others need F.
      const whole = testAll || tree.takeAway.length === Object.keys(needs).length;
      let outcome: Outcome;
      try {
        copyWorkingTree(directory);
        outcome = await run(tree, directory, whole);
      } catch (error) {
        outcome = { tree, failed: "copying the working tree", log: String(error) };
      }
      const seconds = Math.round((Date.now() - began) / 1000);
      console.log(`${tree.name} (taking away ${tree.takeAway.join(", ")}): ${outcome.failed ? `FAILED at ${outcome.failed}` : `${outcome.tests}, ok`} in ${seconds} s`);
      if (outcome.failed) failures.push(outcome);
      if (!keep) rmSync(directory, { recursive: true, force: true });
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, trees.length) }, worker));
  if (!keep) rmSync(base, { recursive: true, force: true });
  else console.log(`the trees are in ${base}`);
  for (const { tree, failed, log } of failures) console.log(`--- ${tree.name}, ${failed}:\n${log.split("\n").slice(-60).join("\n")}`);
  const took = `in ${Math.round((Date.now() - started) / 1000)} s, ${jobs} at once`;
  if (failures.length) {
    console.log(`${failures.length} of ${trees.length} trees failed: ${failures.map(({ tree }) => tree.name).join(", ")} (${took})`);
    process.exit(1);
  }
  console.log(`all ${trees.length} trees passed ${took}`);
}
