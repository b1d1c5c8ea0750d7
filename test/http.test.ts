// What Metacontroller (or curl) sees over HTTP: the answers, the ETag, and a
// short JSON error with the right status for every kind of bad input. The
// app runs in-process through Hono's app.request. The requests come from
// sync.ts's schemas (helpers.ts), so these tests hold for any resource.
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { CUSTOMIZE_PATH, DEFAULT_BODY_LIMIT_BYTES, FINALIZE_PATH, HEALTH_PATH, METRICS_PATH, SYNC_PATH, createApp, readConfig } from "../main.ts";
import { PARENT, REFUSALS, customize, finalize, sync, type Reason } from "../sync.ts";
import { UNUSABLE_NAME, clock, fixture, newParentRequest } from "./helpers.ts";

const now = clock("2026-11-30T12:00:00Z");
const app = createApp({ bodyLimitBytes: 64 * 1024, logHealthChecks: false, now });

function post(body: unknown, headers: Record<string, string> = {}, path = SYNC_PATH) {
  return app.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A POST whose body streams in, with no Content-Length unless given one. */
function postStream(body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  return app.request(SYNC_PATH, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
    duplex: "half",
  } as RequestInit);
}

/** A body that streams in as one chunk. */
function streamOf(bytes: Uint8Array) {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

function quietly(t: TestContext) {
  t.mock.method(console, "log", () => {});
  return t.mock.method(console, "error", () => {});
}

// The tests look into the JSON they get back, whatever its shape.
async function jsonOf(response: Response): Promise<any> {
  return response.json();
}

async function assertJsonError(response: Response, status: number, error: RegExp) {
  assert.equal(response.status, status);
  assert.match(response.headers.get("Content-Type") ?? "", /^application\/json/);
  const body = await jsonOf(response);
  assert.match(body.error, error);
  return body;
}

describe("HTTP: POST /sync", () => {
  test("a sync request is answered 200 with exactly status and children", async (t) => {
    quietly(t);
    const request = newParentRequest("test");
    const response = await post(request);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("Content-Type") ?? "", /^application\/json/);
    const body = await jsonOf(response);
    assert.deepEqual(Object.keys(body).sort(), ["children", "status"], "hook v2 refuses any other key");
    assert.deepEqual(body, sync(request.parent, request.children, request.related, now));
  });

  for (const contentType of ["application/json; charset=utf-8", "Application/JSON", " application/json ; charset=utf-8"]) {
    test(`Content-Type "${contentType}" is JSON too`, async (t) => {
      quietly(t);
      const response = await post(newParentRequest("test"), { "Content-Type": contentType });
      assert.equal(response.status, 200);
    });
  }

  test("every answer carries an ETag; sending it back as If-None-Match gets 304 with no body", async (t) => {
    quietly(t);
    const first = await post(newParentRequest("test"));
    const etag = first.headers.get("ETag");
    assert.match(etag ?? "", /^"[^"]+"$/, "a strong ETag is a quoted string");

    const again = await post(newParentRequest("test"), { "If-None-Match": etag ?? "" });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get("ETag"), etag);
    assert.equal(await again.text(), "");
  });

  test("a weak or listed If-None-Match matches too", async (t) => {
    quietly(t);
    const etag = (await post(newParentRequest("test"))).headers.get("ETag") ?? "";
    const again = await post(newParentRequest("test"), { "If-None-Match": `"other", W/${etag}` });
    assert.equal(again.status, 304);
  });

  test("a stale If-None-Match gets the full new answer", async (t) => {
    quietly(t);
    const etag = (await post(newParentRequest("one"))).headers.get("ETag") ?? "";
    const other = newParentRequest("other");
    other.parent.metadata.generation = 7;
    const response = await post(other, { "If-None-Match": etag });
    assert.equal(response.status, 200);
    assert.notEqual(response.headers.get("ETag"), etag);
    assert.deepEqual(await jsonOf(response), sync(other.parent, other.children, other.related, now));
  });
});

describe("HTTP: POST /finalize", () => {
  test("a finalize request is answered 200 with status, children and finalized, as finalize says", async (t) => {
    quietly(t);
    const request = newParentRequest("test");
    const response = await post(request, {}, FINALIZE_PATH);
    assert.equal(response.status, 200);
    const body = await jsonOf(response);
    assert.deepEqual(Object.keys(body).sort(), ["children", "finalized", "status"]);
    assert.deepEqual(body, finalize(request.parent, request.children, request.related, now));
  });

  test("a finalize request is checked as a sync request is, and named so", async (t) => {
    quietly(t);
    const response = await post({ parent: {} }, {}, FINALIZE_PATH);
    assert.equal(response.status, 422);
    assert.equal((await jsonOf(response)).error, "not a finalize hook request");
    assert.equal((await app.request(FINALIZE_PATH)).status, 405);
  });
});

describe("HTTP: POST /customize", () => {
  const { parent } = newParentRequest("test");

  test("a customize request is answered 200 with exactly the related resources customize asks for", async (t) => {
    quietly(t);
    const response = await post({ parent }, {}, CUSTOMIZE_PATH);
    assert.equal(response.status, 200);
    assert.deepEqual(await jsonOf(response), customize(parent));
  });

  test("a customize request without the parent's name gets 422 naming where", async (t) => {
    quietly(t);
    const nameless = { parent: { ...parent, metadata: {} } };
    const body = await assertJsonError(await post(nameless, {}, CUSTOMIZE_PATH), 422, /^not a customize hook request$/);
    assert.deepEqual(body.issues.map((issue: any) => issue.path), [["parent", "metadata", "name"]]);
  });

  test("a customize request gets the same checks as sync: type before size", async (t) => {
    quietly(t);
    const response = await app.request(CUSTOMIZE_PATH, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "{}" });
    await assertJsonError(response, 415, /application\/json/);
    const huge = JSON.stringify({ parent, padding: "x".repeat(64 * 1024) });
    await assertJsonError(await post(huge, {}, CUSTOMIZE_PATH), 413, /larger than 65536 bytes/);
  });
});

describe("HTTP: bad input gets a short JSON error", () => {
  test("malformed JSON gets 400", async (t) => {
    quietly(t);
    await assertJsonError(await post('{"parent": '), 400, /JSON/);
  });

  for (const [what, body] of [
    ["an array", []],
    ["null", null],
    ["a string", "just text"],
  ] as const) {
    test(`a body that is ${what}, not a JSON object, gets 422`, async (t) => {
      quietly(t);
      await assertJsonError(await post(JSON.stringify(body)), 422, /not a sync hook request/);
    });
  }

  // Metacontroller names each group of children `<Kind>.<version>`, as `Namespace.v1`.
  test("a body that fails the schema gets 422 with paths that stay unambiguous through dotted group names", async (t) => {
    quietly(t);
    const request: any = newParentRequest("test");
    const [group = ""] = Object.keys(request.children);
    request.children[group]["x"] = "not an object";
    delete request.parent.metadata.name;
    const body = await assertJsonError(await post(request), 422, /not a sync hook request/);
    assert.deepEqual(
      body.issues.map((issue: { path: string[] }) => issue.path),
      [
        ["parent", "metadata", "name"],
        ["children", group, "x"],
      ],
    );
    for (const issue of body.issues) assert.equal(typeof issue.message, "string");
  });

  test("a body over the limit gets 413", async (t) => {
    quietly(t);
    const request = { ...newParentRequest("test"), padding: "x".repeat(64 * 1024) };
    await assertJsonError(await post(request), 413, /larger than 65536 bytes/);
  });

  test("a body declaring exactly the limit is read; one byte more gets 413", async (t) => {
    quietly(t);
    const request = JSON.stringify(newParentRequest("test"));
    const exactly = request.padEnd(64 * 1024, " "); // JSON allows trailing white space
    const declared = (body: string) => ({ "Content-Length": String(Buffer.byteLength(body)) });
    assert.equal((await post(exactly, declared(exactly))).status, 200);
    await assertJsonError(await post(`${exactly} `, declared(`${exactly} `)), 413, /larger than 65536 bytes/);
  });

  test("a chunked body of exactly the limit is read; one byte more gets 413", async (t) => {
    quietly(t);
    const exactly = new TextEncoder().encode(JSON.stringify(newParentRequest("test")).padEnd(64 * 1024, " "));
    assert.equal((await postStream(streamOf(exactly))).status, 200);
    const oneMore = new Uint8Array(exactly.length + 1).fill(32);
    oneMore.set(exactly);
    await assertJsonError(await postStream(streamOf(oneMore)), 413, /larger than 65536 bytes/);
  });

  test("a body that is both too large and not JSON gets 415: the type is checked first", async (t) => {
    quietly(t);
    const response = await app.request(SYNC_PATH, {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: "x".repeat(64 * 1024 + 1),
    });
    await assertJsonError(response, 415, /application\/json/);
  });

  test("a request with many problems lists the first ten", async (t) => {
    quietly(t);
    const request: any = newParentRequest("test");
    const [group = ""] = Object.keys(request.children);
    for (let index = 0; index < 15; index += 1) request.children[group][`x-${index}`] = index;
    const body = await assertJsonError(await post(request), 422, /not a sync hook request/);
    assert.equal(body.issues.length, 10);
  });

  test("a declared Content-Length over the limit gets 413 without the body being read", async (t) => {
    quietly(t);
    let pulled = false;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled = true;
          controller.close();
        },
      },
      { highWaterMark: 0 }, // pull only when somebody reads
    );
    const response = await postStream(body, { "Content-Length": String(64 * 1024 + 1) });
    await assertJsonError(response, 413, /larger than 65536 bytes/);
    assert.equal(pulled, false);
  });

  test("a chunked body over the limit gets 413 too, counted as it streams", async (t) => {
    quietly(t);
    const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Endless: the limit, not the end of the body, must stop the read.
        sent += chunk.length;
        if (sent > 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await postStream(body);
    await assertJsonError(response, 413, /larger than 65536 bytes/);
    assert.ok(sent < 1024 * 1024, "stopped reading at the limit");
  });

  test("a body under the limit is still accepted when chunked", async (t) => {
    quietly(t);
    const bytes = new TextEncoder().encode(JSON.stringify(newParentRequest("test")));
    const response = await postStream(streamOf(bytes));
    assert.equal(response.status, 200);
  });

  for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", ""]) {
    test(`Content-Type "${contentType}" gets 415`, async (t) => {
      quietly(t);
      const response = await app.request(SYNC_PATH, {
        method: "POST",
        headers: contentType ? { "Content-Type": contentType } : {},
        body: new TextEncoder().encode(JSON.stringify(newParentRequest("test"))),
      });
      await assertJsonError(response, 415, /application\/json/);
    });
  }

  for (const encoding of ["gzip", "deflate", "br"]) {
    test(`a body with Content-Encoding ${encoding} gets 415 naming the encoding`, async (t) => {
      quietly(t);
      const response = await post(newParentRequest("test"), { "Content-Encoding": encoding });
      await assertJsonError(response, 415, new RegExp(`^Content-Encoding ${encoding} is not supported; send the body uncompressed$`));
    });
  }

  test("Content-Encoding identity is an uncompressed body", async (t) => {
    quietly(t);
    assert.equal((await post(newParentRequest("test"), { "Content-Encoding": "identity" })).status, 200);
  });

  for (const [method, path, allow] of [
    ["GET", SYNC_PATH, "POST"],
    ["PUT", SYNC_PATH, "POST"],
    ["GET", CUSTOMIZE_PATH, "POST"],
    ["POST", HEALTH_PATH, "GET, HEAD"],
    ["DELETE", HEALTH_PATH, "GET, HEAD"],
  ] as const) {
    test(`${method} ${path} gets 405 with Allow: ${allow}`, async (t) => {
      quietly(t);
      const response = await app.request(path, { method });
      await assertJsonError(response, 405, new RegExp(`${method} is not allowed`));
      assert.equal(response.headers.get("Allow"), allow);
    });
  }

  test("an unknown path gets 404", async (t) => {
    quietly(t);
    await assertJsonError(await app.request("/nope", { method: "POST" }), 404, /no route for \/nope/);
  });

  test("an unexpected exception gets 500 with a generic message; the detail goes to the log only", async (t) => {
    const errors = quietly(t);
    const broken = createApp({
      bodyLimitBytes: 1024 * 1024,
      logHealthChecks: false,
      now: () => {
        throw new Error("secret detail");
      },
    });
    const response = await broken.request(SYNC_PATH, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(newParentRequest("test")),
    });
    const text = await response.clone().text();
    await assertJsonError(response, 500, /internal error/);
    assert.doesNotMatch(text, /secret detail|at .*\.ts/);
    assert.match(String(errors.mock.calls.map((call) => call.arguments.join(" "))), /secret detail/);
  });
});

describe("HTTP: health and logs", () => {
  test("a refused sync logs a warning naming the parent, the reason and the message", async (t) => {
    quietly(t);
    const warn = t.mock.method(console, "warn", () => {});
    const request = newParentRequest(UNUSABLE_NAME);
    const [ready] = sync(request.parent, request.children, request.related, now).status.conditions;
    assert.ok(ready && (REFUSALS as readonly Reason[]).includes(ready.reason), `${UNUSABLE_NAME.length} characters are refused`);
    assert.equal((await post(request)).status, 200);
    assert.deepEqual(
      warn.mock.calls.map((call) => call.arguments.join(" ")),
      [`${PARENT.kind} ${UNUSABLE_NAME} refused: ${ready.reason}: ${ready.message}`],
    );
  });

  test("a sync that carries out the spec, as the steady fixture's, logs no warning", async (t) => {
    quietly(t);
    const warn = t.mock.method(console, "warn", () => {});
    assert.equal((await post(fixture("steady-sync"))).status, 200);
    assert.equal(warn.mock.callCount(), 0);
  });

  test("GET /healthz answers 200", async () => {
    const response = await app.request(HEALTH_PATH);
    assert.equal(response.status, 200);
    assert.deepEqual(await jsonOf(response), { status: "ok" });
  });

  test("HEAD /healthz answers 200 with no body", async () => {
    const response = await app.request(HEALTH_PATH, { method: "HEAD" });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), "");
  });

  test("each request is logged on one line with method, path, status, duration and the body's size", async (t) => {
    const log = t.mock.method(console, "log", () => {});
    await app.request(SYNC_PATH, { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": "11" }, body: '{"parent": ' });
    assert.equal(log.mock.callCount(), 1);
    assert.match(String(log.mock.calls[0]?.arguments[0]), /^POST \/sync 400 \d+\.\dms 11B$/);
  });

  test("health checks are not logged at the default level, only at debug", async (t) => {
    const log = t.mock.method(console, "log", () => {});
    await app.request(HEALTH_PATH);
    assert.equal(log.mock.callCount(), 0);

    const chatty = createApp({ ...readConfig({ LOG_LEVEL: "debug" }), now });
    await chatty.request(HEALTH_PATH);
    assert.equal(log.mock.callCount(), 1);
  });
});

describe("HTTP: GET /metrics, what an operator alerts on", () => {
  // A fresh app for each test, so each counts from nothing.
  const fresh = () => createApp({ bodyLimitBytes: 64 * 1024, logHealthChecks: false, now });
  const send = (on: ReturnType<typeof fresh>, path: string, body: string, headers: Record<string, string> = {}) =>
    on.request(path, { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)), ...headers }, body });
  async function scrape(on: ReturnType<typeof fresh>) {
    const response = await on.request(METRICS_PATH);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    return response.text();
  }
  /** The value of one series, as the exposition writes its labels, or undefined where there is none. */
  function sample(exposition: string, series: string): number | undefined {
    const line = exposition.split("\n").find((candidate) => candidate.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  }

  test("a sync answered 200 counts once by hook and code, with its latency, request size and answer size", async (t) => {
    quietly(t);
    const app = fresh();
    const body = JSON.stringify(newParentRequest("test"));
    const response = await send(app, SYNC_PATH, body);
    const answer = await response.text();
    const metrics = await scrape(app);
    assert.equal(sample(metrics, 'webhook_requests_total{hook="sync",code="200"}'), 1);
    assert.equal(sample(metrics, 'webhook_request_duration_seconds_count{hook="sync"}'), 1);
    assert.equal(sample(metrics, 'webhook_request_duration_seconds_bucket{le="+Inf",hook="sync"}'), 1);
    assert.ok(sample(metrics, 'webhook_request_duration_seconds_sum{hook="sync"}')! > 0);
    assert.equal(sample(metrics, 'webhook_request_size_bytes_sum{hook="sync"}'), Buffer.byteLength(body));
    assert.equal(sample(metrics, 'webhook_response_size_bytes_sum{hook="sync"}'), Buffer.byteLength(answer));
    assert.equal(sample(metrics, 'webhook_requests_in_flight{hook="sync"}'), 0);
  });

  test("a 304 counts as a request, with no answer size; customize and finalize count under their own hook", async (t) => {
    quietly(t);
    const app = fresh();
    const request = JSON.stringify(fixture("steady-sync"));
    const etag = (await send(app, SYNC_PATH, request)).headers.get("ETag")!;
    assert.equal((await send(app, SYNC_PATH, request, { "If-None-Match": etag })).status, 304);
    assert.equal((await send(app, FINALIZE_PATH, request)).status, 200);
    assert.equal((await send(app, CUSTOMIZE_PATH, JSON.stringify({ parent: newParentRequest("test").parent }))).status, 200);
    const metrics = await scrape(app);
    assert.equal(sample(metrics, 'webhook_requests_total{hook="sync",code="200"}'), 1);
    assert.equal(sample(metrics, 'webhook_requests_total{hook="sync",code="304"}'), 1);
    assert.equal(sample(metrics, 'webhook_response_size_bytes_count{hook="sync"}'), 1);
    assert.equal(sample(metrics, 'webhook_requests_total{hook="finalize",code="200"}'), 1);
    assert.equal(sample(metrics, 'webhook_requests_total{hook="customize",code="200"}'), 1);
    assert.equal(sample(metrics, 'webhook_response_size_bytes_count{hook="customize"}'), 1);
  });

  test("each answer counts by the status and reason of the Ready condition it gives; a refusal also as a refusal", async (t) => {
    quietly(t);
    t.mock.method(console, "warn", () => {});
    const app = fresh();
    const refused = newParentRequest(UNUSABLE_NAME);
    const [refusal] = sync(refused.parent, refused.children, refused.related, now).status.conditions;
    assert.ok(refusal && (REFUSALS as readonly Reason[]).includes(refusal.reason));
    await send(app, SYNC_PATH, JSON.stringify(refused));
    await send(app, SYNC_PATH, JSON.stringify(refused));
    const steady = fixture("steady-sync");
    const [ready] = sync(steady.parent, steady.children, steady.related, now).status.conditions;
    assert.equal(ready?.status, "True");
    await send(app, SYNC_PATH, JSON.stringify(steady));
    await send(app, FINALIZE_PATH, JSON.stringify(steady));
    const metrics = await scrape(app);
    assert.equal(sample(metrics, `webhook_ready_answers_total{hook="sync",status="False",reason="${refusal.reason}"}`), 2);
    assert.equal(sample(metrics, `webhook_refusals_total{hook="sync",reason="${refusal.reason}"}`), 2);
    assert.equal(sample(metrics, `webhook_ready_answers_total{hook="sync",status="True",reason="${ready.reason}"}`), 1);
    assert.equal(sample(metrics, `webhook_ready_answers_total{hook="finalize",status="True",reason="${ready.reason}"}`), 1);
    assert.equal(sample(metrics, `webhook_refusals_total{hook="sync",reason="${ready.reason}"}`), undefined, "being Ready is no refusal");
  });

  test("bad input and bodies over the limit count as rejections by cause, before sync sees them", async (t) => {
    quietly(t);
    const app = fresh();
    assert.equal((await send(app, SYNC_PATH, "{")).status, 400);
    assert.equal((await send(app, SYNC_PATH, JSON.stringify({ parent: {} }))).status, 422);
    assert.equal((await send(app, SYNC_PATH, "{}", { "Content-Type": "text/plain" })).status, 415);
    assert.equal((await send(app, CUSTOMIZE_PATH, "x".repeat(64 * 1024 + 1))).status, 413);
    const metrics = await scrape(app);
    for (const [hook, cause] of [["sync", "malformed_json"], ["sync", "invalid_request"], ["sync", "unsupported_media_type"], ["customize", "body_too_large"]]) {
      assert.equal(sample(metrics, `webhook_rejected_requests_total{hook="${hook}",cause="${cause}"}`), 1, `${hook} ${cause}`);
    }
    assert.equal(sample(metrics, 'webhook_requests_total{hook="customize",code="413"}'), 1);
    assert.doesNotMatch(metrics, /webhook_ready_answers_total\{/, "no rejected request reaches sync");
  });

  test("a request being read counts in flight until it is answered", async (t) => {
    quietly(t);
    const app = fresh();
    let finish = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify(newParentRequest("test"))));
        finish = () => controller.close();
      },
    });
    const answered = app.request(SYNC_PATH, { method: "POST", headers: { "Content-Type": "application/json" }, body, duplex: "half" } as RequestInit);
    assert.equal(sample(await scrape(app), 'webhook_requests_in_flight{hook="sync"}'), 1);
    finish();
    assert.equal((await answered).status, 200);
    assert.equal(sample(await scrape(app), 'webhook_requests_in_flight{hook="sync"}'), 0);
  });

  test("no label takes its value from a request: any unknown path counts as hook unknown", async (t) => {
    quietly(t);
    const app = fresh();
    for (const path of ["/a", "/b/c", "/sync/x"]) assert.equal((await app.request(path)).status, 404);
    const metrics = await scrape(app);
    assert.equal(sample(metrics, 'webhook_requests_total{hook="unknown",code="404"}'), 3);
    assert.doesNotMatch(metrics, /\/a|\/b|sync\/x/);
  });

  test("GET /metrics is the only method there; HEAD answers from it", async () => {
    const app = fresh();
    assert.equal((await app.request(METRICS_PATH, { method: "HEAD" })).status, 200);
    await assertJsonError(await app.request(METRICS_PATH, { method: "POST" }), 405, /POST is not allowed on \/metrics; use GET, HEAD/);
  });
});

describe("HTTP: configuration", () => {
  test("with no environment the webhook listens on 8080 on every interface, with the default body limit", () => {
    assert.deepEqual(readConfig({}), {
      port: 8080,
      host: undefined,
      bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
      shutdownTimeoutSeconds: 20,
      keepAliveTimeoutSeconds: 120,
      logHealthChecks: false,
    });
  });

  test("every setting comes from its environment variable", () => {
    const config = readConfig({
      PORT: "9000",
      HOST: "127.0.0.1",
      BODY_LIMIT_BYTES: "2048",
      SHUTDOWN_TIMEOUT_SECONDS: "5",
      KEEP_ALIVE_TIMEOUT_SECONDS: "95",
      LOG_LEVEL: "debug",
    });
    assert.deepEqual(config, {
      port: 9000,
      host: "127.0.0.1",
      bodyLimitBytes: 2048,
      shutdownTimeoutSeconds: 5,
      keepAliveTimeoutSeconds: 95,
      logHealthChecks: true,
    });
  });

  test("PORT=0 asks for a free port, and 65535 is the highest", () => {
    assert.equal(readConfig({ PORT: "0" }).port, 0);
    assert.equal(readConfig({ PORT: "65535" }).port, 65535);
  });

  test("the longest timeouts accepted are the longest a Node timer holds", () => {
    const longest = readConfig({ SHUTDOWN_TIMEOUT_SECONDS: "2147483", KEEP_ALIVE_TIMEOUT_SECONDS: "2147478" });
    assert.ok(longest.shutdownTimeoutSeconds * 1000 <= 2 ** 31 - 1);
    assert.ok(longest.keepAliveTimeoutSeconds * 1000 + 5000 <= 2 ** 31 - 1, "the headers timeout, 5s longer, too");
  });

  // Each refusal is one line that names the variable and what is wrong with the value given.
  for (const [name, value, why] of [
    ["PORT", "http", '"http" is not a whole number from 0 to 65535'],
    ["PORT", "", "is empty; unset it for the default, or give a whole number from 0 to 65535"],
    ["PORT", "1e3", '"1e3" is not a whole number from 0 to 65535'],
    ["PORT", "0x50", '"0x50" is not a whole number from 0 to 65535'],
    ["PORT", " 8080 ", '" 8080 " is not a whole number from 0 to 65535'],
    ["PORT", "-1", '"-1" is not a whole number from 0 to 65535'],
    ["PORT", "65536", "65536 is not a whole number from 0 to 65535"],
    ["HOST", "", "is empty; unset it to listen on every interface"],
    ["BODY_LIMIT_BYTES", "0", "0 is not a whole number from 1 to 268435456"],
    ["BODY_LIMIT_BYTES", "268435457", "268435457 is not a whole number from 1 to 268435456"],
    ["SHUTDOWN_TIMEOUT_SECONDS", "0", "0 is not a whole number from 1 to 2147483"],
    ["SHUTDOWN_TIMEOUT_SECONDS", "1.5", '"1.5" is not a whole number from 1 to 2147483'],
    // A Node timer cannot hold more than 2^31-1 ms; a longer one would fire at once.
    ["SHUTDOWN_TIMEOUT_SECONDS", "3000000", "3000000 is not a whole number from 1 to 2147483"],
    ["KEEP_ALIVE_TIMEOUT_SECONDS", "0", "0 is not a whole number from 1 to 2147478"],
    ["KEEP_ALIVE_TIMEOUT_SECONDS", "3000000", "3000000 is not a whole number from 1 to 2147478"],
    ["LOG_LEVEL", "verbose", '"verbose" is not one of info, debug'],
  ] as const) {
    test(`${name}=${JSON.stringify(value)} is refused: ${why}`, () => {
      assert.throws(() => readConfig({ [name]: value }), { message: `invalid configuration: ${name}: ${why}` });
    });
  }
});
