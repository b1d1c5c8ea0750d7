// Starts a webhook (or the benchmark's baseline) as its own process on a free
// loopback port, and waits for the "listening on" line it prints.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));
export const tsx = fileURLToPath(new URL("../node_modules/.bin/tsx", import.meta.url));

export type Server = {
  process: ChildProcessByStdio<null, Readable, Readable>;
  port: number;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  exit: Promise<number | null>;
};

export async function spawnServer(command: string[], env: Record<string, string> = {}): Promise<Server> {
  const [program = "", ...args] = command;
  const child = spawn(program, args, {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exit = once(child, "exit").then(([code]) => code as number | null);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line within 30s:\n${output}`)), 30_000);
    const findPort = () => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (!match) return;
      // Stop looking: under load the output grows by megabytes.
      child.stdout.off("data", findPort);
      clearTimeout(timer);
      resolve(Number(match[1]));
    };
    child.stdout.on("data", findPort);
    exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited before listening:\n${output}`));
    });
  });
  return { process: child, port, output: () => output, exit };
}
