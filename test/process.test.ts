// The webhook as a process, the way `npm start` and Kubernetes run it: it
// listens where it is told, answers over a real socket, and on SIGTERM lets
// the request in flight finish before it exits 0.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import type { Socket } from "node:net";
import { describe, test } from "node:test";
import { SYNC_PATH } from "../main.ts";
import { fixture } from "./helpers.ts";
import { root, spawnServer, tsx } from "./spawn-server.ts";

/** Starts `tsx main.ts`, as `npm start` does. */
const startWebhook = (env: Record<string, string> = {}) => spawnServer([tsx, "main.ts"], env);

function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (condition()) {
        clearInterval(poll);
        resolve();
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(poll);
        reject(new Error(`timed out waiting for ${what}`));
      }
    }, 20);
  });
}

/** The exit code, which must come within `timeoutMs`. */
async function exitCodeWithin(webhook: Awaited<ReturnType<typeof startWebhook>>, timeoutMs: number, what: string) {
  let exitCode: number | null | undefined;
  webhook.exit.then((code) => (exitCode = code));
  await until(() => exitCode !== undefined, what, timeoutMs);
  return exitCode;
}

async function readText(response: http.IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of response) text += chunk;
  return text;
}

describe("process", () => {
  test("importing main.ts starts no server", async () => {
    const child = spawn(tsx, ["--eval", "import('./main.ts').then(() => console.log('imported'))"], {
      cwd: root,
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    const [code] = await once(child, "exit");
    assert.equal(code, 0);
    assert.equal(output.trim(), "imported", "a listening server would print, and keep the process alive");
  });

  test("a bad setting stops the process at start with exit code 2, naming the variable", async () => {
    const child = spawn(tsx, ["main.ts"], { cwd: root, env: { ...process.env, PORT: "http" }, stdio: "pipe" });
    let errors = "";
    child.stderr.on("data", (chunk) => (errors += chunk));
    const [code] = await once(child, "exit");
    assert.equal(code, 2);
    assert.match(errors, /invalid configuration: PORT: /);
    assert.doesNotMatch(errors, /\n\s+at /, "no stack trace");
  });

  test("SIGTERM during a request: the request completes, keep-alive connections close, and the process exits 0", async () => {
    const webhook = await startWebhook();
    // Two keep-alive connections, as Metacontroller's client keeps: one left idle, one busy.
    const agent = new http.Agent({ keepAlive: true });
    const busyAgent = new http.Agent({ keepAlive: true });
    const body = Buffer.from(JSON.stringify(fixture("steady-sync")));
    try {
      // An idle keep-alive connection, as Metacontroller's client leaves one.
      const warmUp = await fetchOnce(webhook.port, agent, body);
      assert.equal(warmUp.status, 200);
      const idleSocket = [...Object.values(agent.freeSockets).flat()][0];
      assert.ok(idleSocket, "a keep-alive connection waits in the pool");
      let idleClosed = false;
      idleSocket.once("close", () => (idleClosed = true));

      // A request in flight: headers and half of the body sent, the rest held back.
      const inFlight = http.request({
        port: webhook.port,
        host: "127.0.0.1",
        method: "POST",
        path: SYNC_PATH,
        agent: busyAgent,
        headers: { "Content-Type": "application/json", "Content-Length": body.length },
      });
      const answered = once(inFlight, "response");
      inFlight.write(body.subarray(0, body.length / 2));
      await until(() => /POST \/sync 200/.test(webhook.output()), "the warm-up request's log line");

      webhook.process.kill("SIGTERM");
      await until(() => webhook.output().includes("SIGTERM"), "the webhook to see SIGTERM");
      await until(() => idleClosed, "the idle keep-alive connection to close");

      inFlight.end(body.subarray(body.length / 2));
      const [response] = (await answered) as [http.IncomingMessage];
      assert.equal(response.statusCode, 200);
      assert.equal(JSON.parse(await readText(response)).children[0].metadata.name, "proj-test");

      // Node keeps an idle keep-alive connection for 5s; the webhook must not wait that out.
      const exitCode = await exitCodeWithin(webhook, 3_000, "the exit, sooner than the 5s keep-alive timeout");
      assert.equal(exitCode, 0, webhook.output());
    } finally {
      agent.destroy();
      busyAgent.destroy();
      webhook.process.kill("SIGKILL");
    }
  });
});

describe("process: the shutdown deadline", () => {
  test("a request still running at SHUTDOWN_TIMEOUT_SECONDS is cut off and the process exits 1", async () => {
    const webhook = await startWebhook({ SHUTDOWN_TIMEOUT_SECONDS: "1" });
    try {
      // Half a body, and the rest never comes.
      const stuck = http.request({
        port: webhook.port,
        host: "127.0.0.1",
        method: "POST",
        path: SYNC_PATH,
        headers: { "Content-Type": "application/json", "Content-Length": 100 },
      });
      stuck.on("error", () => {}); // the cut-off connection
      stuck.write("{");
      const [socket] = (await once(stuck, "socket")) as [Socket];
      if (socket.connecting) await once(socket, "connect");
      await new Promise((resolve) => setTimeout(resolve, 300)); // for the server to take the connection
      webhook.process.kill("SIGTERM");
      const exitCode = await exitCodeWithin(webhook, 5_000, "the exit at the deadline");
      assert.equal(exitCode, 1);
      assert.match(webhook.output(), /still busy after 1s: closing the remaining connections/);
    } finally {
      webhook.process.kill("SIGKILL");
    }
  });
});

async function fetchOnce(port: number, agent: http.Agent, body: Buffer) {
  const request = http.request({
    port,
    host: "127.0.0.1",
    method: "POST",
    path: SYNC_PATH,
    agent,
    headers: { "Content-Type": "application/json", "Content-Length": body.length },
  });
  request.end(body);
  const [response] = (await once(request, "response")) as [http.IncomingMessage];
  return { status: response.statusCode, text: await readText(response) };
}
