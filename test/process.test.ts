// The webhook as a process, the way `npm start` and Kubernetes run it: it
// listens where it is told or says in one line why it cannot, keeps idle
// connections longer than Metacontroller's client does, and on SIGTERM or
// SIGINT lets the requests in flight finish before it exits 0.
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { HEALTH_PATH, SYNC_PATH } from "../main.ts";
import { sync } from "../sync.ts";
import { newParentRequest } from "./helpers.ts";
import { BUNDLE_FILE, bundleWebhook } from "../scripts/manifest.ts";
import { spawnChild, spawnServer, withTsx, within, type Server } from "./spawn-server.ts";

// The webhook as its Deployment runs it: `node webhook.mjs` beside the
// dependencies' file, bundled from the code as it is now by npm run
// manifest's bundler. A plain Node process starts in a fraction of the time
// of `tsx main.ts`, whose loader thread transforms every file again in each
// process: on a busy machine, most of this file's time. The last describe
// runs `npm start` itself.
const bundle = mkdtempSync(join(tmpdir(), "process-test-"));
after(() => rmSync(bundle, { recursive: true, force: true }));
for (const files of Object.values(await bundleWebhook())) {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(bundle, name), text);
}
const webhookCommand = [process.execPath, join(bundle, BUNDLE_FILE)];

/** Starts the webhook on a free loopback port. */
const startWebhook = (env: Record<string, string> = {}) => spawnServer(webhookCommand, env);

/** Runs the webhook with `env` and returns its exit code and output, which must come within the default deadline of spawn-server.ts. */
async function runWebhook(env: Record<string, string>) {
  const child = spawnChild(webhookCommand, env);
  return { code: await child.exitCode("the webhook to exit"), output: child.output() };
}

async function readText(response: http.IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of response) text += chunk;
  return text;
}

const request = newParentRequest("test");
const requestBody = Buffer.from(JSON.stringify(request));
/** sync's own answer, stamped with the time the webhook's answer carries. */
function expectedAnswer(answer: { status: { conditions: { lastTransitionTime: string }[] } }) {
  const stamped = new Date(answer.status.conditions[0]?.lastTransitionTime ?? "");
  return sync(request.parent, request.children, request.related, () => stamped);
}

/** A POST /sync of a new parent, its body not yet sent. */
function syncRequest(webhook: Server, agent: http.Agent, headers: Record<string, string> = {}) {
  return http.request({
    port: webhook.port,
    host: "127.0.0.1",
    method: "POST",
    path: SYNC_PATH,
    agent,
    headers: { "Content-Type": "application/json", "Content-Length": requestBody.length, ...headers },
  });
}

/**
 * A POST /sync whose headers the webhook has read (it answered
 * `100 Continue`) and whose body is held back at half: a request in flight.
 * `send()` sends the rest, and `answer()` waits for the response.
 */
async function requestInFlight(webhook: Server, agent: http.Agent) {
  const request = syncRequest(webhook, agent, { Expect: "100-continue" });
  const answered = once(request, "response") as Promise<[http.IncomingMessage]>;
  answered.catch(() => {}); // a test that cuts the request off awaits no answer
  request.flushHeaders();
  await within(once(request, "continue"), 10_000, "the webhook to read the request's headers");
  request.write(requestBody.subarray(0, requestBody.length / 2));
  return {
    send: () => request.end(requestBody.subarray(requestBody.length / 2)),
    answer: () => within(answered, 10_000, "the answer to the request in flight").then(([response]) => response),
  };
}

async function post(webhook: Server, agent: http.Agent) {
  const request = syncRequest(webhook, agent);
  request.end(requestBody);
  const [response] = (await within(once(request, "response"), 10_000, "an answer")) as [http.IncomingMessage];
  return { response, text: await readText(response) };
}

/** Runs `body` with a fresh webhook and a one-connection keep-alive agent, and stops both after. */
async function withWebhook(env: Record<string, string>, body: (webhook: Server, agent: http.Agent) => Promise<void>) {
  const webhook = await startWebhook(env);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await body(webhook, agent);
  } finally {
    agent.destroy();
    webhook.kill();
  }
}

/** The one socket a single-socket keep-alive agent holds idle. */
function idleSocketOf(agent: http.Agent) {
  const socket = Object.values(agent.freeSockets).flat()[0];
  assert.ok(socket, "a keep-alive connection waits in the pool");
  return socket;
}

// Each test has a webhook process of its own, so the tests of a describe run
// at once: a process's start, and a deadline the webhook waits out, overlap
// the others' instead of adding up. A wait's deadline is for a process that
// never comes, so it is long: an upper bound that a busy machine can miss is
// no test of the webhook.
describe("process: starting", { concurrency: true }, () => {
  test("importing main.ts starts no server", async () => {
    const child = spawnChild(withTsx("--eval", "import('./main.ts').then(() => console.log('imported'))"), { PORT: "0" });
    const code = await child.exitCode("the import to finish; a listening server would keep the process alive");
    assert.equal(code, 0);
    assert.equal(child.output().trim(), "imported");
  });

  test("a bad setting stops the process with exit code 2 and the line docs/operating.md shows", async () => {
    const operating = readFileSync(new URL("../docs/operating.md", import.meta.url), "utf8");
    const shown = /^(invalid configuration: PORT: .*)$/m.exec(operating)?.[1];
    assert.ok(shown, "docs/operating.md shows a bad-setting line");
    const { code, output } = await runWebhook({ PORT: "http" });
    assert.equal(code, 2);
    assert.equal(output, `${shown}\n`);
  });

  test("a port in use stops the process with exit code 1 and one line naming the address and the cause", async () => {
    const first = await startWebhook();
    try {
      const { code, output } = await runWebhook({ HOST: "127.0.0.1", PORT: String(first.port) });
      assert.equal(code, 1);
      assert.equal(output, `cannot listen on 127.0.0.1, port ${first.port}: another process is listening on that port (EADDRINUSE)\n`);
    } finally {
      first.kill();
    }
  });

  test("an address not on this machine stops the process with exit code 1 and one line", async () => {
    // 192.0.2.0/24 is reserved for documentation: never a local address. Binding fails at once; nothing is sent.
    const { code, output } = await runWebhook({ HOST: "192.0.2.1", PORT: "0" });
    assert.equal(code, 1);
    assert.equal(output, "cannot listen on 192.0.2.1, port 0: that address is not on this machine (EADDRNOTAVAIL)\n");
  });

  test("a host name that does not exist stops the process with exit code 1 and one line", async () => {
    // .invalid is reserved: it never resolves.
    const { code, output } = await runWebhook({ HOST: "nonexistent.invalid", PORT: "0" });
    assert.equal(code, 1);
    assert.equal(output, "cannot listen on nonexistent.invalid, port 0: no such host name (ENOTFOUND)\n");
  });
});

describe("process: connections", { concurrency: true }, () => {
  test("idle keep-alive connections are kept 120s by default, longer than Go's 90s", () =>
    withWebhook({}, async (webhook, agent) => {
      const { response } = await post(webhook, agent);
      assert.equal(response.headers["keep-alive"], "timeout=120");
    }));

  test("KEEP_ALIVE_TIMEOUT_SECONDS sets how long the server keeps an idle connection", async () => {
    const webhook = await startWebhook({ KEEP_ALIVE_TIMEOUT_SECONDS: "1" });
    // A bare socket: Node's own client would not pool a connection with a 1s hint.
    const socket = connect(webhook.port, "127.0.0.1");
    try {
      let received = "";
      socket.on("data", (chunk) => (received += chunk));
      const closedByServer = once(socket, "end");
      socket.write(`GET ${HEALTH_PATH} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      await within(closedByServer, 30_000, "the server to close the idle connection, long before the default 120s");
      assert.match(received, /^HTTP\/1\.1 200 /);
      assert.match(received, /\r\nKeep-Alive: timeout=1\r\n/i);
    } finally {
      socket.destroy();
      webhook.kill();
    }
  });
});

describe("process: shutting down", { concurrency: true }, () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} during a request: the request completes with Connection: close, idle connections close, and the process exits 0`, async () => {
      const webhook = await startWebhook();
      const idleAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const busyAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        assert.equal((await post(webhook, idleAgent)).response.statusCode, 200);
        const idleClosed = once(idleSocketOf(idleAgent), "close");
        const inFlight = await requestInFlight(webhook, busyAgent);

        webhook.process.kill(signal);
        await webhook.waitFor(new RegExp(`${signal}: finishing requests in flight`), `the webhook to see ${signal}`);
        await within(idleClosed, 30_000, "the idle keep-alive connection to close, long before the 120s keep-alive timeout");

        inFlight.send();
        const response = await inFlight.answer();
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers.connection, "close", "the client is told not to reuse the connection");
        const answer = JSON.parse(await readText(response));
        assert.deepEqual(answer, expectedAnswer(answer), "the whole answer");

        // The keep-alive timeout is 120s; the webhook must not wait that out.
        assert.equal(await webhook.exitCode("the exit, long before the keep-alive timeout", 30_000), 0);
      } finally {
        idleAgent.destroy();
        busyAgent.destroy();
        webhook.kill();
      }
    });
  }

  test("a request still running at SHUTDOWN_TIMEOUT_SECONDS is cut off, no sooner, and the process exits 1", () =>
    withWebhook({ SHUTDOWN_TIMEOUT_SECONDS: "1" }, async (webhook, agent) => {
      await requestInFlight(webhook, agent); // the rest of the body never comes
      const signalled = performance.now();
      webhook.process.kill("SIGTERM");
      assert.equal(await webhook.exitCode("the exit at the deadline, long before the default 20s", 15_000), 1);
      assert.ok(performance.now() - signalled >= 1_000, "waited the whole deadline");
      assert.match(webhook.output(), /still busy after 1s: closing the remaining connections/);
    }));

  test("with the longest timeouts a Node timer holds, a request in flight still completes on SIGTERM", () =>
    withWebhook({ SHUTDOWN_TIMEOUT_SECONDS: "2147483", KEEP_ALIVE_TIMEOUT_SECONDS: "2147478" }, async (webhook, agent) => {
      const inFlight = await requestInFlight(webhook, agent);
      webhook.process.kill("SIGTERM");
      await webhook.waitFor(/SIGTERM: finishing requests in flight/, "the webhook to see SIGTERM");
      inFlight.send();
      assert.equal((await inFlight.answer()).statusCode, 200);
      assert.equal(await webhook.exitCode("the exit once the request is answered"), 0);
      assert.doesNotMatch(webhook.output(), /TimeoutOverflowWarning/);
    }));

  test("npm start passes SIGTERM on: the webhook finishes and npm exits 0, as under a process manager", async () => {
    const npm = await spawnServer(["npm", "start"]);
    try {
      npm.process.kill("SIGTERM"); // to npm alone, not its process group
      assert.equal(await npm.exitCode("npm start to exit after SIGTERM"), 0, npm.output());
      assert.match(npm.output(), /SIGTERM: finishing requests in flight/);
    } finally {
      npm.kill();
    }
  });

  test("a second signal while requests are in flight exits at once with exit code 1", () =>
    withWebhook({ SHUTDOWN_TIMEOUT_SECONDS: "60" }, async (webhook, agent) => {
      await requestInFlight(webhook, agent);
      webhook.process.kill("SIGINT");
      await webhook.waitFor(/SIGINT: finishing requests in flight/, "the first SIGINT");
      webhook.process.kill("SIGINT");
      assert.equal(await webhook.exitCode("the exit on the second SIGINT, long before the 60s deadline", 20_000), 1);
      assert.match(webhook.output(), /SIGINT again: exiting without waiting for requests in flight/);
    }));

});
