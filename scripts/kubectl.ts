// Every script here that talks to a cluster (the e2e, the uninstall, the
// scale run) does it through one `Kubectl` function, so that a test can put
// a recording stand-in in its place and read back every call it made.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export type KubeObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [field: string]: unknown };
export type KubectlResult = { ok: boolean; stdout: string; stderr: string; missing?: boolean };
/** One kubectl call: its arguments, what it reads from `-f -`, and the signal that cuts it off. */
export type Kubectl = (args: string[], input: string | undefined, signal: AbortSignal) => Promise<KubectlResult>;

/** A process's answer as kubectl's: its output, and whether it exited 0 before the signal cut it off. */
function run(command: string, args: string[], input: string | undefined, signal: AbortSignal, env?: NodeJS.ProcessEnv, cwd?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { signal, stdio: ["pipe", "pipe", "pipe"], ...(env ? { env } : {}), ...(cwd ? { cwd } : {}) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") resolve({ ok: false, stdout, stderr: `${command} is not installed`, missing: true });
      else if (error.name !== "AbortError") resolve({ ok: false, stdout, stderr: `${stderr}${error.message}` });
    });
    child.on("close", (code) => resolve({ ok: code === 0 && !signal.aborted, stdout, stderr }));
    child.stdin.on("error", () => {}); // a process that exits without reading its input
    child.stdin.end(input);
  });
}

/** kubectl as a process; `command` may be a path. */
export function kubectlProcess(command = "kubectl"): Kubectl {
  return (args, input, signal) => run(command, args, input, signal);
}

/**
 * `kubectl proxy` on a free port, for scripts that send many requests:
 * requests through it are the caller's, or whom an Impersonate-User header
 * names, without a process each.
 */
export async function kubectlProxy(command = "kubectl"): Promise<{ url: string; stop: () => void }> {
  const child = spawn(command, ["proxy", "--port=0"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => (child.kill(), reject(new Error("kubectl proxy did not start within 10 s"))), 10_000);
    child.stdout.on("data", (chunk: Buffer) => {
      const port = /127\.0\.0\.1:(\d+)/.exec(String(chunk))?.[1];
      if (port) (clearTimeout(timer), resolve(`http://127.0.0.1:${port}`));
    });
    child.on("exit", () => (clearTimeout(timer), reject(new Error("kubectl proxy exited"))));
  });
  return { url, stop: () => child.kill() };
}

/**
 * A kubectl plugin as a person runs it, `kubectl <plugin> <args>`, or any
 * command they paste: the script run with these arguments in this clone,
 * `command` first on PATH. Its home is one of its own, whose ~/.local/bin is
 * on PATH as on most machines, so that a plugin installed as its docs say
 * is found there and the reader's own are left alone; kubectl still reads
 * the reader's kubeconfig.
 */
export type Plugin = (script: string, args: string[], signal: AbortSignal) => Promise<KubectlResult>;

export function pluginProcess(command = "kubectl"): Plugin {
  const real = command.includes("/") ? command : execFileSync("sh", ["-c", 'command -v "$0"', command], { encoding: "utf8" }).trim();
  const home = mkdtempSync(join(tmpdir(), "kubectl-plugins-"));
  process.once("exit", () => rmSync(home, { recursive: true, force: true }));
  const env = {
    ...process.env,
    KUBECONFIG: process.env["KUBECONFIG"] ?? join(homedir(), ".kube", "config"),
    HOME: home,
    PATH: `${join(home, ".local", "bin")}:${dirname(real)}:${process.env["PATH"] ?? ""}`,
  };
  const clone = fileURLToPath(new URL("..", import.meta.url));
  // sh reads the script from its input, and takes the arguments after --.
  return (script, args, signal) => run("sh", ["-s", "--", ...args], script, signal, env, clone);
}

export const describeObject = (object: KubeObject) =>
  `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name}`;

/** How the stand-in answers a call whose args and objects, joined by spaces, match `when`; by default it succeeds silently. */
export type Rule = { when: string; exit?: number; stdout?: string; stderr?: string; hang?: boolean; /** Answers the first matching call alone. */ once?: boolean };
export type Call = { args: string[]; objects: string[]; input?: string | undefined };

// What an input names, by the input: a run sends the same objects of
// k8s.yaml again and again, and parsing them was most of an in-process e2e's time.
const named = new Map<string, string[]>();
const objectsIn = (input: string) => {
  let objects = named.get(input);
  if (!objects) named.set(input, (objects = parseAllDocuments(input).map((document) => describeObject(document.toJS()))));
  return [...objects];
};

/** A kubectl that records each call and answers by the first rule that matches it. */
export function standIn(rules: Rule[]): { kubectl: Kubectl; calls: Call[] } {
  const calls: Call[] = [];
  const spent = new Set<Rule>();
  const kubectl: Kubectl = async (args, input, signal) => {
    const objects = input ? objectsIn(input) : [];
    calls.push({ args, objects, input });
    const call = [...args, ...objects].join(" ");
    const rule = rules.find((candidate) => !spent.has(candidate) && new RegExp(candidate.when).test(call));
    if (rule?.once) spent.add(rule);
    if (rule?.hang) {
      // Until cut off, as a `kubectl wait` on a cluster that never answers.
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return { ok: false, stdout: "", stderr: "" };
    }
    const stdout = rule?.stdout ?? (call === "config current-context" ? "fake\n" : "");
    return { ok: (rule?.exit ?? 0) === 0, stdout, stderr: rule?.stderr ?? "" };
  }
  return { kubectl, calls };
}
