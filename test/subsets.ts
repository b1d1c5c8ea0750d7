// `npm run test:subsets`: every feature comes and goes alone. For each file
// in features/, two trees, each a copy of this working tree (what is
// committed or not, so that a feature just written counts) in a temporary
// directory: one with that feature taken away, with the features whose
// `Needs:` name it; one with it kept alone, with what it needs. Then the
// core, with every feature taken away. In each, as README's "Make it your
// own" runs it: `npm run take-away`, `npm run manifest`, `npm run
// transcripts`, and the type check; the core's `npm test` too, or every
// tree's with `--test-all`. Names of trees as arguments run only those
// (`npm run test:subsets -- core`, or `only-<feature>`, `without-<feature>`).
//
// The trees share this repository's node_modules by a symlink, and run one
// after another: about 10 s each on 2 cores, 40 s more for a full `npm test`.
// Each tree is removed once done, passed or not, unless `--keep`.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { needsOf } from "./take-away.ts";

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

type Outcome = { tree: Tree; failed?: string; log: string };

function run(tree: Tree, directory: string, fullTest: boolean): Outcome {
  const log = join(directory, "subsets.log");
  const commands: [string, string[]][] = [
    ["npm", ["run", "-s", "take-away", "--", ...tree.takeAway]],
    ["npm", ["run", "-s", "manifest"]],
    ["npm", ["run", "-s", "transcripts"]],
    fullTest ? ["npm", ["test"]] : ["npm", ["run", "-s", "typecheck"]],
  ];
  let output = "";
  for (const [command, args] of commands) {
    const result = spawnSync(command, args, { cwd: directory, encoding: "utf8", env: { ...process.env, FORCE_COLOR: "0" } });
    output += `$ ${command} ${args.join(" ")}\n${result.stdout}${result.stderr}`;
    writeFileSync(log, output);
    if (result.status !== 0) return { tree, failed: `${command} ${args.join(" ")}`, log: output };
  }
  return { tree, log: output };
}

if (import.meta.filename === process.argv[1]) {
  const args = process.argv.slice(2);
  const keep = args.includes("--keep");
  const testAll = args.includes("--test-all");
  const named = args.filter((arg) => !arg.startsWith("--"));
  const needs = needsIn(root);
  const trees = subsetTrees(needs).filter(({ name }) => named.length === 0 || named.includes(name));
  const unknown = named.filter((name) => !trees.some((tree) => tree.name === name));
  if (unknown.length) {
    console.error(`test:subsets: no tree ${unknown.join(", ")}; the trees are ${subsetTrees(needs).map(({ name }) => name).join(", ")}`);
    process.exit(2);
  }
  const base = mkdtempSync(join(tmpdir(), "subsets-"));
  const failures: Outcome[] = [];
  for (const tree of trees) {
    const started = Date.now();
    const directory = join(base, tree.name);
    // The core's tree, by whatever name: without-F takes every feature where all the others need F.
    const fullTest = testAll || tree.takeAway.length === Object.keys(needs).length;
    let outcome: Outcome;
    try {
      copyWorkingTree(directory);
      outcome = run(tree, directory, fullTest);
    } catch (error) {
      outcome = { tree, failed: "copying the working tree", log: String(error) };
    }
    const seconds = Math.round((Date.now() - started) / 1000);
    const summary = fullTest && !outcome.failed ? `npm test: ${outcome.log.trim().split("\n").at(-1)}` : fullTest ? "npm test" : "type check";
    console.log(`${tree.name} (taking away ${tree.takeAway.join(", ")}): ${outcome.failed ? `FAILED at ${outcome.failed}` : `${summary} ok`} in ${seconds} s`);
    if (outcome.failed) failures.push(outcome);
    if (!keep) rmSync(directory, { recursive: true, force: true });
  }
  if (!keep) rmSync(base, { recursive: true, force: true });
  else console.log(`the trees are in ${base}`);
  for (const { tree, failed, log } of failures) console.log(`--- ${tree.name}, ${failed}:\n${log.split("\n").slice(-60).join("\n")}`);
  if (failures.length) {
    console.log(`${failures.length} of ${trees.length} trees failed: ${failures.map(({ tree }) => tree.name).join(", ")}`);
    process.exit(1);
  }
  console.log(`all ${trees.length} trees passed`);
}
