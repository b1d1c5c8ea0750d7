// `npm run walkthrough`: docs/cluster.md's commands, run in order against a
// throwaway local control plane that scripts/walkthrough.sh starts, and each
// one's output on the page rewritten with what it really printed, so that the
// walkthrough stays true in any copy of the repository (features taken away,
// the resource renamed). `npm run walkthrough -- --check` runs the same and
// writes nothing: it names each command whose output differs from the page,
// and exits 1 if one does. Either way, a command refused where the page shows
// it succeed, or the reverse, fails the run, naming it and its section, and
// nothing is written (`turnedAround`).
//
// What is volatile (ages, timestamps, uids, resourceVersions, the webhook's
// port) is compared as a placeholder, and the causes of a refusal that the
// API server lists in any order are compared in the page's, so a line that
// differs only there keeps the text the page shows and a rerun changes nothing. A line that is the same
// as one on the page keeps its take-away marker (`  # feature: x`).
//
// Where the local control plane cannot run a command as written, the run does
// the least that still gives the real system's output; see `adapt` and the
// prelude of `runAll`. A block the run cannot run at all is marked, unseen by
// the reader, with WALKTHROUGH_AS_WRITTEN on the line before its fence, and
// keeps its output as written.
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readConfig } from "../main.ts";
import { kubectlProcess, type Kubectl } from "./kubectl.ts";

export const WALKTHROUGH_AS_WRITTEN = "<!-- walkthrough: as written -->";
const PAGE = "docs/cluster.md";
const root = fileURLToPath(new URL("..", import.meta.url));

/** One `$ ...` command of the page and the lines it printed there. */
export type Step = {
  /** What bash runs: the command line, and its heredoc if it has one. */
  script: string;
  /** The command's first line, as the page shows it, for naming it. */
  command: string;
  /** 1-based line of the command in the page. */
  line: number;
  /** The lines the page shows it printed, without the block's indentation. */
  output: string[];
  /** Where those lines are in the page, as indexes of its lines: [start, end). */
  outputRange: [number, number];
  indent: string;
  asWritten: boolean;
};

/** Every command of every ```console block, in page order. */
export function parseWalkthrough(page: string): Step[] {
  const lines = page.split("\n");
  const steps: Step[] = [];
  for (let index = 0; index < lines.length; index++) {
    const fence = /^( *)```console$/.exec(lines[index] ?? "");
    if (!fence) continue;
    const indent = fence[1] ?? "";
    const asWritten = lines[index - 1]?.trim() === WALKTHROUGH_AS_WRITTEN;
    const end = lines.findIndex((line, at) => at > index && line === `${indent}\`\`\``);
    if (end < 0) throw new Error(`${PAGE}:${index + 1}: a console block that never ends`);
    const body = lines.slice(index + 1, end).map((line) => line.slice(indent.length));
    let at = 0;
    while (at < body.length) {
      const command = body[at] ?? "";
      if (!command.startsWith("$ ")) throw new Error(`${PAGE}:${index + 2 + at}: a console block that opens with output, not a $ command`);
      const scriptLines = [command.slice(2)];
      const heredoc = /<<-?\s*['"]?(\w+)['"]?/.exec(command)?.[1];
      const line = index + 2 + at;
      at++;
      if (heredoc) {
        const close = body.indexOf(heredoc, at);
        if (close < 0) throw new Error(`${PAGE}:${line}: heredoc ${heredoc} never closes`);
        scriptLines.push(...body.slice(at, close + 1));
        at = close + 1;
      }
      const outputStart = at;
      while (at < body.length && !body[at]?.startsWith("$ ")) at++;
      steps.push({
        script: scriptLines.join("\n"),
        command: command.slice(2),
        line,
        output: body.slice(outputStart, at),
        outputRange: [index + 1 + outputStart, index + 1 + at],
        indent,
        asWritten,
      });
    }
    index = end;
  }
  return steps;
}

// A take-away marker at the end of an output line, as scripts/take-away.ts reads it.
const MARKER = /\s+# feature: [\w-]+(?:(?:, | & )[\w-]+)*$/;
const splitMarker = (line: string): [string, string] => {
  const marker = MARKER.exec(line)?.[0] ?? "";
  return [line.slice(0, line.length - marker.length), marker];
};

// What changes from run to run and says nothing about the system. Each is
// matched narrowly, so that a real change next to it still shows:
//   - a timestamp (creationTimestamp, a CREATED AT or deletionTimestamp column);
//   - a uid (an object's own, and the controller-uid that names its parent);
//   - a resourceVersion, which counts every write the cluster ever took;
//   - in a table, the value under its header's AGE (see `ageColumns`), and
//     nothing else that looks like an age: 500m is a CPU quantity.
// Names are not here: every object the page makes has a fixed name, and the
// one name derived from another (a place named by a hash) is the same each run.
const VOLATILE: [RegExp, string][] = [
  [/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b/g, "<time>"],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, "<uid>"],
  [/\bresourceVersion: "\d+"/g, 'resourceVersion: "<rv>"'],
];

/** Each line as compared: its volatile values as placeholders, trailing blanks gone. */
export function comparable(lines: string[]): string[] {
  const ages = ageColumns(lines);
  return lines.map((line, index) => {
    let text = line;
    const age = ages[index];
    if (age !== undefined && /^\d+[smhd]/.test(text.slice(age))) {
      // The age and the blanks that pad its column: a longer age pads less.
      text = text.slice(0, age) + text.slice(age).replace(/^\S+ */, "<age> ");
    }
    for (const [pattern, placeholder] of VOLATILE) text = text.replace(pattern, placeholder);
    return text.trimEnd();
  });
}

// For each line of a kubectl table, where its AGE column starts: kubectl
// left-aligns a value under its header. A table runs from a header line
// (NAME ... AGE ...) to the next blank line.
function ageColumns(lines: string[]): (number | undefined)[] {
  let age: number | undefined;
  return lines.map((line) => {
    if (line.trim() === "") age = undefined;
    else if (/^NAME\s/.test(line)) {
      const at = / AGE( |$)/.exec(line)?.index;
      age = at === undefined ? undefined : at + 1;
      return undefined;
    }
    return age;
  });
}

/**
 * What the page should show for a command that printed `printed` where the
 * page shows `written`: a line that compares equal keeps the page's text and
 * marker; the others are what was printed. In a table whose layout changed,
 * the printed lines are taken whole, so that its columns stay aligned.
 */
export function renderOutput(written: string[], inRunOrder: string[]): string[] {
  const [texts, markers] = [written.map((line) => splitMarker(line)[0]), written.map((line) => splitMarker(line)[1])];
  const printed = inPageOrder(texts, inRunOrder);
  const [was, is] = [comparable(texts), comparable(printed)];
  const loose = (line: string) => line.replace(/\s+/g, " ");
  const pairs = longestCommon(was.map(loose), is.map(loose));
  if (pairs.length === written.length && pairs.length === printed.length && pairs.every(([a, b]) => was[a] === is[b])) return written;
  const matchOf = new Map(pairs.map(([a, b]) => [b, a]));
  return printed.map((line, index) => {
    const match = matchOf.get(index);
    if (match === undefined) return line;
    return was[match] === is[index] ? (written[match] ?? line) : `${line}${markers[match]}`;
  });
}

/**
 * The printed lines, with the causes an `... is invalid:` error lists (`* `
 * lines) in the order the page shows them. The API server validates a
 * custom resource's fields in Go's map order, which changes from run to
 * run, so it lists the causes of one refusal in any order.
 */
function inPageOrder(written: string[], printed: string[]): string[] {
  const shownAt = new Map(comparable(written).map((key, index) => [key, index]));
  const keys = comparable(printed);
  const ordered = [...printed];
  for (let start = 0; start < printed.length; start++) {
    if (!/ is invalid:\s*$/.test(printed[start] ?? "")) continue;
    let end = start + 1;
    while (printed[end]?.startsWith("* ")) end++;
    const causes = Array.from({ length: end - start - 1 }, (_, offset) => start + 1 + offset);
    const rank = (index: number) => shownAt.get(keys[index] ?? "") ?? Number.MAX_SAFE_INTEGER;
    causes.sort((a, b) => rank(a) - rank(b) || a - b).forEach((from, offset) => (ordered[start + 1 + offset] = printed[from] ?? ""));
    start = end - 1;
  }
  return ordered;
}

/** The pairs (index in a, index in b) of a longest common subsequence of a and b. */
function longestCommon(a: string[], b: string[]): [number, number][] {
  const lengths = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i]![j] = a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) pairs.push([i++, j++]);
    else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

/** The lines only one of the two has, in order: `- ` the page's, `+ ` the printed. */
export function differences(written: string[], rendered: string[]): string[] {
  const pairs = longestCommon(written, rendered);
  const lines: string[] = [];
  let [i, j] = [0, 0];
  for (const [a, b] of [...pairs, [written.length, rendered.length]]) {
    while (i < (a ?? 0)) lines.push(`- ${written[i++]}`);
    while (j < (b ?? 0)) lines.push(`+ ${rendered[j++]}`);
    [i, j] = [(a ?? 0) + 1, (b ?? 0) + 1];
  }
  return lines;
}

// How kubectl says it was refused, at the start of a line: the API server's
// error, kubectl's own, or an object it judged invalid.
const REFUSAL = /^(Error from server\b|error: |The \S+ "[^"]*" is invalid\b)/;
/** Whether these lines, as a command printed them, say it was refused. */
export const refused = (lines: string[]) => lines.some((line) => REFUSAL.test(line));

/**
 * Each command refused where the page shows it succeed, or the reverse (a
 * page shows a refusal to show that one happens), named with its line and
 * section: rewriting its output would write the wrong story in, as when an
 * example lacks a field the CRD now requires.
 */
export function turnedAround(page: string, printed: (string[] | undefined)[]): string[] {
  const lines = page.split("\n");
  return parseWalkthrough(page).flatMap((step, index) => {
    const output = printed[index];
    if (step.asWritten || output === undefined || refused(step.output) === refused(output)) return [];
    const section = lines.slice(0, step.line).findLast((line) => line.startsWith("## "))?.slice(3) ?? "its opening";
    const how = refused(output) ? "was refused, where the page shows it succeed" : "succeeded, where the page shows it refused";
    return [`${PAGE}:${step.line} (${section}): ${step.command.slice(0, 110)} ${how}:\n${output.map((line) => `    ${line}`).join("\n")}`];
  });
}

export type Changed = Step & { rendered: string[] };

/** The page with each command's output as printed (undefined: kept as written), and the commands whose output changed. */
export function renderWalkthrough(page: string, printed: (string[] | undefined)[]): { page: string; changed: Changed[] } {
  const steps = parseWalkthrough(page);
  const lines = page.split("\n");
  const changed: Changed[] = [];
  // From the last, so that earlier ranges stay where they are.
  for (const [index, step] of [...steps.entries()].reverse()) {
    const output = printed[index];
    if (step.asWritten || output === undefined) continue;
    const rendered = renderOutput(step.output, output);
    if (rendered.join("\n") === step.output.join("\n")) continue;
    changed.unshift({ ...step, rendered });
    lines.splice(step.outputRange[0], step.outputRange[1] - step.outputRange[0], ...rendered.map((line) => (line === "" ? line : step.indent + line)));
  }
  return { page: lines.join("\n"), changed };
}

/** What a terminal shows of a program's output: no colours or cursor moves, and lines that end in \n alone. */
export function asShown(raw: string): string {
  return raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r+\n/g, "\n");
}

/** The output's lines; a last line without its \n (a prompt, a cut-off answer) is one too. */
export const linesOf = (output: string) => (output === "" ? [] : output.replace(/\n$/, "").split("\n"));

// ---------------------------------------------------------------------------
// The run, on the control plane scripts/walkthrough.sh started.

const DEADLINE_MS = 300_000; // the page's own waits go up to 180 s

type Run = { kubectl: Kubectl; signal: AbortSignal; env: NodeJS.ProcessEnv; cwd: string; webhook: string };

// The webhook address the page's overlay points at (`npm start`'s) and the
// one the run's webhook listens on, a free port, so that the run never
// clashes with a webhook already on the machine.
const PAGE_WEBHOOK = `127.0.0.1:${readConfig({}).port}`;

/**
 * What the run does before a command so that it runs here as on a cluster.
 * No controller manager here runs Deployments and no kubelet runs pods, so
 * `rollout status` would wait for ever on a Deployment that did roll out on a
 * cluster (the webhook runs on the host instead, see the overlay): the run
 * writes the Deployment's status as its controller writes it once every
 * replica is up, and kubectl reads that as it would on a cluster.
 */
async function adapt(step: Step, run: Run): Promise<void> {
  const rollout = /^kubectl (?:-n (\S+) )?rollout status deployment\/(\S+)(?:.* -n (\S+))?/.exec(step.command);
  if (!rollout) return;
  const [, namespaceBefore, name = "", namespaceAfter] = rollout;
  const namespace = ["-n", namespaceBefore ?? namespaceAfter ?? "default"];
  const read = await run.kubectl(["get", "deployment", name, ...namespace, "-o", "json"], undefined, run.signal);
  if (!read.ok) return; // the command says what is wrong
  const deployment = JSON.parse(read.stdout);
  const replicas = deployment.spec.replicas ?? 1;
  const status = { observedGeneration: deployment.metadata.generation, replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas };
  const written = await run.kubectl(["patch", "deployment", name, ...namespace, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status })], undefined, run.signal);
  if (!written.ok) throw new Error(`could not write Deployment ${name}'s status for ${step.command}: ${written.stderr}`);
}

/**
 * Runs one step in bash, stdout and stderr in one stream as a terminal shows
 * them, under a deadline. The repository's own scripts (`npm ...`) run in a
 * pseudo-terminal, as the reader runs them: they ask before they act only
 * there. A prompt gets the answer the page shows after it.
 */
function execute(step: Step, prelude: string, run: Run): Promise<string> {
  const script = `exec 2>&1\n${prelude}\n${step.script.replaceAll(PAGE_WEBHOOK, run.webhook)}\n`;
  const inTerminal = /^npm /.test(step.command);
  const [file, args] = inTerminal ? ["script", ["-qefc", 'bash -c "$WALKTHROUGH_SCRIPT"', "/dev/null"]] : ["bash", ["-c", script]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: run.cwd, env: { ...run.env, WALKTHROUGH_SCRIPT: script }, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let raw = "";
    const answered = new Set<string>();
    const stop = () => {
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {}
    };
    const deadline = setTimeout(() => (stop(), reject(new Error(`${PAGE}:${step.line}: still running after ${DEADLINE_MS / 1000} s: ${step.command}`))), DEADLINE_MS);
    run.signal.addEventListener("abort", stop, { once: true });
    const read = (chunk: Buffer) => {
      raw += chunk;
      const last = asShown(raw).split("\n").at(-1) ?? "";
      const answer = step.output.map((line) => splitMarker(line)[0]).find((line) => last.endsWith(": ") && line.startsWith(last) && line.length > last.length);
      if (inTerminal && answer && !answered.has(last)) {
        answered.add(last);
        child.stdin.write(`${answer.slice(last.length)}\r`);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.stdin.on("error", () => {});
    if (!inTerminal) child.stdin.end();
    child.on("error", (error) => (clearTimeout(deadline), reject(error)));
    child.on("close", () => {
      clearTimeout(deadline);
      run.signal.removeEventListener("abort", stop);
      child.stdin.destroy();
      resolve(asShown(raw).replaceAll(run.webhook, PAGE_WEBHOOK));
    });
  });
}

/**
 * The page's commands run in a clone, with the reader's overlay beside it
 * (`../my-install`): the run makes that layout in a scratch directory, so
 * that nothing is written beside the real clone. The clone's folder is named
 * neither as the package nor as the repository, because a reader's may be
 * named anything, and a command that assumed a name failed for them. The clone there is a copy of this working tree, not links
 * to it: a script run through a link does not know it is the main module
 * (its import.meta.filename is the link's target), and would do nothing.
 */
function layout(): { cwd: string; scratch: string } {
  const scratch = mkdtempSync(join(tmpdir(), "walkthrough-"));
  const { name } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const cwd = join(scratch, `my-${name}-clone`);
  const copied = (entry: string) => ![".git", ".cache", "node_modules"].includes(entry);
  for (const entry of readdirSync(root).filter(copied)) cpSync(join(root, entry), join(cwd, entry), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(cwd, "node_modules"));
  mkdirSync(join(scratch, "rendered"));
  return { cwd, scratch };
}

/**
 * Once the page has written its overlay (what it passes to `kubectl
 * kustomize`), every later `kubectl apply -f k8s.yaml` goes through it, as
 * the page says every apply on a cluster without pods does: k8s.yaml alone
 * would point the hooks back at the Service no pod answers. The rendered
 * file is named k8s.yaml too, so that kubectl's messages name what they name
 * on a cluster.
 */
function overlayPrelude(steps: Step[], scratch: string): string {
  const kustomize = steps.map((step) => /\bkubectl (kustomize(?: --\S+)* (\S+))/.exec(step.command)).find(Boolean);
  if (!kustomize) return "";
  const [, invocation, overlay] = kustomize;
  const rendered = join(scratch, "rendered");
  return [
    "kubectl() {",
    `  if [ "$*" = "apply -f k8s.yaml" ] && [ -e ${overlay}/kustomization.yaml ]; then`,
    `    command kubectl ${invocation} >${rendered}/k8s.yaml && (cd ${rendered} && command kubectl apply -f k8s.yaml)`,
    "  else command kubectl \"$@\"; fi",
    "}",
  ].join("\n");
}

/** Refuses any cluster but the empty one scripts/walkthrough.sh started for this run. */
async function refuseOthers(kubectl: Kubectl, signal: AbortSignal): Promise<void> {
  const { WALKTHROUGH_CLUSTER_UID, KUBECONFIG, LOCAL_K8S_DIR } = process.env;
  const refuse = (why: string) => {
    throw new Error(`refused: ${why}. Run it as npm run walkthrough, which starts a control plane of its own.`);
  };
  if (!WALKTHROUGH_CLUSTER_UID || !LOCAL_K8S_DIR || KUBECONFIG !== join(LOCAL_K8S_DIR, "kubeconfig")) refuse("no control plane started by scripts/walkthrough.sh");
  const server = await kubectl(["config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"], undefined, signal);
  if (server.stdout.trim() !== "https://127.0.0.1:16443") refuse(`the kubeconfig names ${server.stdout.trim() || "no server"}, not the local control plane`);
  // The uid of kube-system, read by scripts/walkthrough.sh right after it started
  // the plane: another API server on that address has another.
  const uid = await kubectl(["get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}"], undefined, signal);
  if (uid.stdout.trim() !== WALKTHROUGH_CLUSTER_UID) refuse("the cluster that answers is not the one scripts/walkthrough.sh started");
  const crds = await kubectl(["get", "crd", "-o", "name"], undefined, signal);
  const installed = crds.stdout.split("\n").filter((crd) => crd && !crd.endsWith(".metacontroller.k8s.io"));
  if (installed.length) refuse(`the cluster is not empty: ${installed.join(", ")}`);
}

async function main(): Promise<number> {
  const check = process.argv.includes("--check");
  const unknown = process.argv.slice(2).filter((arg) => arg !== "--check");
  if (unknown.length) {
    console.error(`npm run walkthrough: unknown argument ${unknown[0]}; the only one is --check (write nothing, fail if an output differs)`);
    return 2;
  }
  const interrupted = new AbortController();
  process.once("SIGINT", () => interrupted.abort());
  process.once("SIGTERM", () => interrupted.abort());
  const kubectl = kubectlProcess(process.env["KUBECTL"] || undefined);
  await refuseOthers(kubectl, interrupted.signal);
  const webhook = new URL(process.env["WEBHOOK_URL"] ?? "").host;
  const pagePath = join(root, PAGE);
  const page = readFileSync(pagePath, "utf8");
  const steps = parseWalkthrough(page);
  const { cwd, scratch } = layout();
  // The plane's own kubectl first on PATH, for the page's `kubectl` and for
  // what the scripts it runs call; and a home of its own, where the page
  // installs a kubectl plugin, on PATH as ~/.local/bin is on most machines.
  const home = join(scratch, "home");
  const env = { ...process.env, HOME: home, PATH: `${dirname(process.env["KUBECTL"] ?? "kubectl")}:${join(home, ".local", "bin")}:${process.env["PATH"]}` };
  const run: Run = { kubectl, signal: interrupted.signal, env, cwd, webhook };
  const prelude = overlayPrelude(steps, scratch);
  const printed: (string[] | undefined)[] = [];
  const started = Date.now();
  try {
    for (const step of steps) {
      if (interrupted.signal.aborted) throw new Error("interrupted");
      if (step.asWritten) {
        printed.push(undefined);
        continue;
      }
      await adapt(step, run);
      const output = linesOf(await execute(step, prelude, run));
      printed.push(output);
      const same = renderOutput(step.output, output).join("\n") === step.output.join("\n");
      console.log(`${same ? "same   " : "differs"} ${PAGE}:${step.line}: ${step.command.slice(0, 110)}`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const turned = turnedAround(page, printed);
  if (turned.length) {
    console.error(`${PAGE}: ${turned.length} command(s) ran otherwise than the page says, and nothing was written; fix each example (a field the CRD requires?), or its story:\n${turned.map((each) => `  ${each}`).join("\n")}`);
    return 1;
  }
  const rendered = renderWalkthrough(page, printed);
  const seconds = Math.round((Date.now() - started) / 1000);
  const asWritten = steps.filter((step) => step.asWritten).length;
  console.log(`${steps.length - asWritten} commands run in ${seconds} s, ${asWritten} kept as written`);
  if (rendered.changed.length === 0) {
    console.log(`${PAGE}: every output is what the commands print`);
    return 0;
  }
  const named = rendered.changed
    .map((step) => [`  ${PAGE}:${step.line}: ${step.command.slice(0, 110)}`, ...differences(step.output, step.rendered).map((line) => `    ${line}`)].join("\n"))
    .join("\n");
  if (check) {
    console.error(`${PAGE}: ${rendered.changed.length} command(s) print other than the page shows (npm run walkthrough rewrites them):\n${named}`);
    return 1;
  }
  writeFileSync(pagePath, rendered.page);
  console.log(`${PAGE}: rewrote the output of ${rendered.changed.length} command(s):\n${named}`);
  return 0;
}

if (import.meta.filename === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (error: Error) => {
      console.error(`npm run walkthrough: ${error.message}`);
      process.exit(1);
    },
  );
}
