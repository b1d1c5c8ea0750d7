// Child processes for the tests, the runtimes check and the benchmark: each
// wait has a deadline, and a process whose wait fails is killed, so that a
// broken webhook fails the run with a message instead of hanging it.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Runs a TypeScript file on this Node with tsx as a loader: one process, where
 * the `tsx` command would start a second Node under itself.
 */
export const withTsx = (...args: string[]) => [process.execPath, "--import", "tsx", ...args];

/** What `npm start` runs, read from package.json, with this Node: the webhook as the tests start it. */
export const npmStartCommand = (() => {
  const { scripts } = JSON.parse(readFileSync(`${root}/package.json`, "utf8"));
  const command = /^exec node --import tsx (\S+)$/.exec(scripts.start);
  if (!command?.[1]) throw new Error(`npm start is ${scripts.start}, not "exec node --import tsx <file>"`);
  return withTsx(command[1]);
})();

export type Child = {
  process: ChildProcessByStdio<null, Readable, Readable>;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  exit: Promise<number | null>;
  /** Resolves with the first match of `pattern` in the output; kills the process if none comes in time. */
  waitFor: (pattern: RegExp, what: string, timeoutMs?: number) => Promise<RegExpExecArray>;
  /** Resolves with the exit code; kills the process if it has not exited in time. */
  exitCode: (what: string, timeoutMs?: number) => Promise<number | null>;
  /** SIGKILL to the process and everything it started (a runner such as tsx may start a child of its own). */
  kill: () => void;
};

export type Server = Child & { port: number };

/** Rejects with a message naming `what` unless `promise` settles within `timeoutMs`. */
export function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs}ms waiting for ${what}`)), timeoutMs);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

export function spawnChild(command: string[], env: Record<string, string | undefined> = {}): Child {
  const [program = "", ...args] = command;
  // A process group of its own, so that kill() reaches the grandchildren too:
  // an orphaned one would hold the pipes, and so the test run, open.
  // An `undefined` setting removes the variable rather than passing "undefined".
  const merged = Object.entries({ ...process.env, ...env }).filter(([, value]) => value !== undefined);
  const child = spawn(program, args, {
    cwd: root,
    env: Object.fromEntries(merged),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const printed = new EventTarget();
  const collect = (chunk: Buffer) => {
    output += chunk;
    printed.dispatchEvent(new Event("data"));
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  // A process can exit before its last output is read (seen on a busy CI
  // run: an exit code of 0 and no output yet). So the exit counts once its
  // output has ended too, or a moment later if a process it started keeps
  // that open.
  const ended = Promise.all([once(child.stdout, "close"), once(child.stderr, "close")]);
  const exit = once(child, "exit").then(async ([code]) => {
    await Promise.race([ended, delay(2000, undefined, { ref: false })]);
    return code as number | null;
  });
  const kill = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
    child.stdout.destroy();
    child.stderr.destroy();
  };
  const killOnFailure = <T>(promise: Promise<T>) =>
    promise.catch((error: Error) => {
      kill();
      throw new Error(`${error.message}; it printed:\n${output}`);
    });

  const waitFor = (pattern: RegExp, what: string, timeoutMs = 30_000) => {
    const found = new Promise<RegExpExecArray>((resolve, reject) => {
      const look = () => {
        const match = pattern.exec(output);
        if (match) {
          printed.removeEventListener("data", look);
          resolve(match);
        }
      };
      printed.addEventListener("data", look);
      look();
      exit.then(() => reject(new Error(`exited before ${what}`)));
    });
    return killOnFailure(within(found, timeoutMs, what));
  };
  // A deadline for a process that never exits, not a measure of speed: a
  // Node start with tsx can take seconds on a busy machine.
  const exitCode = (what: string, timeoutMs = 30_000) => killOnFailure(within(exit, timeoutMs, what));
  return { process: child, output: () => output, exit, waitFor, exitCode, kill };
}

/** Starts a server on a free loopback port and waits for the "listening on" line it prints. */
export async function spawnServer(command: string[], env: Record<string, string> = {}): Promise<Server> {
  const child = spawnChild(command, { PORT: "0", HOST: "127.0.0.1", ...env });
  const [, port] = await child.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 'its "listening on" line');
  return { ...child, port: Number(port) };
}
