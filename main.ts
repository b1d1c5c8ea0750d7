/**
 * # The controller's web server
 *
 * Metacontroller calls the sync and customize hooks over HTTP; this file is
 * only that transport. It takes a POST, turns every kind of bad input into a short JSON
 * error, hands the valid ones to `sync` (sync.ts, where the controller's logic
 * lives) and shuts down without dropping a request when Kubernetes stops the
 * pod. It uses web-standard Request/Response through Hono, so the same file
 * runs on Node.js, Deno and Bun (test/runtimes.ts proves it).
 *
 *   tsx main.ts                  # Node 20
 *   node main.ts                 # Node 22.18+ and 24
 *
 * Importing it starts nothing: tests build the app with `createApp`.
 */
import { serve } from "@hono/node-server";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { validator } from "hono/validator";
import { createHash } from "node:crypto";
import type { Server } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import * as v from "valibot";
import { CustomizeRequest, PARENT, REASONS, REFUSALS, SyncRequest, customize, finalize, sync, type SyncResponse } from "./sync.ts";

export const SYNC_PATH = "/sync";
export const FINALIZE_PATH = "/finalize";
export const CUSTOMIZE_PATH = "/customize";
export const HEALTH_PATH = "/healthz";
export const METRICS_PATH = "/metrics";

// ## Configuration
//
// Everything comes from the environment, with defaults that suit a pod. A bad
// value stops the process at start with the variable's name, rather than
// surfacing later as a puzzling failure.

// Only plain decimal digits are a number here: `Number()` alone would take
// "1e3", "0x50" and " 8080 ", and read an empty string as 0. A variable that
// is set but empty is refused rather than read as unset: `PORT=` is more
// likely a mistake than a wish for the default. Every refusal names the range.
function wholeNumber(min: number, max: number) {
  const range = `a whole number from ${min} to ${max}`;
  return v.pipe(
    v.string(),
    v.nonEmpty(`is empty; unset it for the default, or give ${range}`),
    v.regex(/^\d+$/, (issue) => `${JSON.stringify(issue.input)} is not ${range}`),
    v.transform(Number),
    v.minValue(min, (issue) => `${issue.input} is not ${range}`),
    v.maxValue(max, (issue) => `${issue.input} is not ${range}`),
  );
}

// Node's timers hold at most 2^31-1 ms (24.8 days): a longer one prints a
// TimeoutOverflowWarning and fires after 1 ms, which would cut off every
// request at once. The headers timeout outlasts the keep-alive one by 5 s.
const TIMER_MAX_MS = 2 ** 31 - 1;
const HEADERS_AFTER_KEEP_ALIVE_MS = 5000;
const TIMER_MAX_SECONDS = Math.floor(TIMER_MAX_MS / 1000);
const KEEP_ALIVE_MAX_SECONDS = Math.floor((TIMER_MAX_MS - HEADERS_AFTER_KEEP_ALIVE_MS) / 1000);
// A JavaScript string, which the body becomes, holds at most about 512 MiB;
// Metacontroller's requests are a few MiB at the very most.
const BODY_LIMIT_MAX_BYTES = 256 * 1024 * 1024;
// The largest request Metacontroller can send about a parent a tenant can
// make is 9,167,184 bytes: scripts/largest-request.ts builds it, and a test
// fails once it outgrows this default, which leaves 5 % for what Kubernetes
// adds that the build leaves out. Refused, a request would be retried for
// ever, and that parent would never change again.
export const DEFAULT_BODY_LIMIT_BYTES = 9_625_600;

const Environment = v.object({
  PORT: v.optional(wholeNumber(0, 65535), "8080"),
  // Unset means every interface, which a pod needs to be reachable.
  HOST: v.optional(v.pipe(v.string(), v.nonEmpty("is empty; unset it to listen on every interface"))),
  BODY_LIMIT_BYTES: v.optional(wholeNumber(1, BODY_LIMIT_MAX_BYTES), String(DEFAULT_BODY_LIMIT_BYTES)),
  // Below Kubernetes' default 30s grace period, so we exit before the kill.
  SHUTDOWN_TIMEOUT_SECONDS: v.optional(wholeNumber(1, TIMER_MAX_SECONDS), "20"),
  // Go's HTTP client, which Metacontroller uses, reuses an idle connection
  // for up to 90s and does not retry a POST that fails on one. Node closes
  // idle connections after 5s, so a sync could meet a connection closing
  // under it; outlasting the client leaves the closing to the client.
  KEEP_ALIVE_TIMEOUT_SECONDS: v.optional(wholeNumber(1, KEEP_ALIVE_MAX_SECONDS), "120"),
  // Probes hit /healthz every few seconds; their lines only show at debug.
  LOG_LEVEL: v.optional(
    v.picklist(["info", "debug"], (issue) => `${JSON.stringify(issue.input)} is not one of info, debug`),
    "info",
  ),
});

/** The environment variables the webhook reads, e.g. for Deno's --allow-env. */
export const SETTINGS = Object.keys(Environment.entries);

const Config = v.pipe(
  Environment,
  v.transform((env) => ({
    port: env.PORT,
    host: env.HOST,
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    shutdownTimeoutSeconds: env.SHUTDOWN_TIMEOUT_SECONDS,
    keepAliveTimeoutSeconds: env.KEEP_ALIVE_TIMEOUT_SECONDS,
    logHealthChecks: env.LOG_LEVEL === "debug",
  })),
);
export type Config = v.InferOutput<typeof Config>;

export function readConfig(env: Record<string, string | undefined>): Config {
  const result = v.safeParse(Config, env, { abortPipeEarly: true });
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => `${v.getDotPath(issue)}: ${issue.message}`);
  throw new Error(`invalid configuration: ${problems.join("; ")}`);
}

// ## The app

export interface AppOptions {
  bodyLimitBytes: number;
  logHealthChecks: boolean;
  /** The clock `sync` stamps condition transitions with; tests pin it. */
  now?: () => Date;
  /** True once the server is shutting down: answers then close their connection. */
  closingConnections?: () => boolean;
  /** False leaves every request uncounted (GET /metrics stays, empty): `npm run bench -- --metrics` prices the counting against it. */
  measure?: boolean;
}

export function createApp({ bodyLimitBytes, logHealthChecks, now, closingConnections, measure = true }: AppOptions): Hono<Measuring> {
  const app = new Hono<Measuring>();
  const metrics = createMetrics();
  app.use(logRequests(logHealthChecks));
  if (measure) app.use(measureRequests(metrics));
  // A client told `Connection: close` opens a new connection for its next
  // request, so none is sent on a connection the server is about to close.
  if (closingConnections) {
    app.use(async (c, next) => {
      await next();
      if (closingConnections()) c.header("Connection", "close");
    });
  }

  // Both hooks check a request the same way, cheapest first: the media type
  // and encoding, the size, then the schema of that hook.
  const hookRequest = <Schema extends v.GenericSchema>(schema: Schema, what: string) => [
    requireJsonContentType,
    requireUncompressedBody,
    limitBodySize(bodyLimitBytes),
    // Malformed JSON never reaches this: the validator throws a 400
    // HTTPException, which onError below turns into JSON.
    validator("json", (body, c) => {
      const result = v.safeParse(schema, body);
      if (result.success) return result.output as v.InferOutput<Schema>;
      return c.json({ error: `not a ${what} request`, issues: listIssues(result.issues) }, 422);
    }),
  ] as const;

  // The finalize hook is sent what sync is, once the parent is being
  // deleted, and answers the same way, with `finalized` besides.
  for (const [path, hook] of [[SYNC_PATH, sync], [FINALIZE_PATH, finalize]] as const) {
    app.post(path, ...hookRequest(SyncRequest, `${path.slice(1)} hook`), (c) => {
      const { parent, children, related } = c.req.valid("json");
      const answer: SyncResponse = hook(parent, children, related, now);
      // Metacontroller shows a refusal only in the parent's status; the
      // operator reading this log should see it too, with whose it is.
      const [ready] = answer.status.conditions;
      if (ready && isRefusal(ready.reason)) {
        console.warn(`${PARENT.kind} ${parent.metadata.name} refused: ${ready.reason}: ${ready.message}`);
      }
      if (ready) c.set("ready", ready);
      // Spelled out so that nothing else can slip in: hook v2 decodes the
      // answer strictly and fails on any key it does not know.
      const { status, children: desired, finalized } = answer;
      const body = JSON.stringify({ status, children: desired, ...(finalized === undefined ? {} : { finalized }) });
      // With `etag.enabled`, Metacontroller sends back the ETag of the last
      // answer; when it still holds it reuses that answer, and we save the bytes.
      const etag = etagOf(body);
      if (etagMatches(c.req.header("If-None-Match"), etag)) return c.body(null, 304, { ETag: etag });
      c.set("answerBytes", Buffer.byteLength(body));
      return c.body(body, 200, { "Content-Type": "application/json", ETag: etag });
    });
    app.all(path, methodNotAllowed("POST"));
  }

  // Metacontroller keeps this answer per generation of the parent, so it needs no ETag.
  app.post(CUSTOMIZE_PATH, ...hookRequest(CustomizeRequest, "customize hook"), (c) => {
    const { relatedResources } = customize(c.req.valid("json").parent);
    const body = JSON.stringify({ relatedResources });
    c.set("answerBytes", Buffer.byteLength(body));
    return c.body(body, 200, { "Content-Type": "application/json" });
  });
  app.all(CUSTOMIZE_PATH, methodNotAllowed("POST"));

  // Hono answers HEAD from the GET route.
  app.get(HEALTH_PATH, (c) => c.json({ status: "ok" }));
  app.all(HEALTH_PATH, methodNotAllowed("GET, HEAD"));

  app.get(METRICS_PATH, async (c) => c.body(await metrics.registry.metrics(), 200, { "Content-Type": metrics.registry.contentType }));
  app.all(METRICS_PATH, methodNotAllowed("GET, HEAD"));

  app.notFound((c) => c.json({ error: `no route for ${c.req.path}` }, 404));

  app.onError((error, c) => {
    if (error instanceof HTTPException && error.status < 500) {
      return c.json({ error: error.message }, error.status);
    }
    // The detail is for the operator's log, never for the response.
    console.error(`${c.req.method} ${c.req.path} failed:`, error);
    return c.json({ error: "internal error, see the webhook's log" }, 500);
  });
  return app;
}

// One line per request, once it is answered; Hono's own logger prints two.
// A body's size says how near the limit a parent's requests come (its
// related objects grow them); a chunked one has no size to give.
function logRequests(includeHealthChecks: boolean): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    if (c.req.path === HEALTH_PATH && !includeHealthChecks) return;
    const milliseconds = (performance.now() - started).toFixed(1);
    const size = c.req.header("Content-Length");
    console.log(`${c.req.method} ${c.req.path} ${c.res.status} ${milliseconds}ms${size ? ` ${size}B` : ""}`);
  };
}

// ## Metrics
//
// What an operator alerts on, in Prometheus' text format on the webhook's
// own port (GET /metrics), through prom-client. Every label takes values
// from a short fixed list, never from a request: a path, a Project's name
// or a reason nobody knows would each make a series of its own, and a
// client could grow the webhook's memory without end. docs/operating.md
// lists the series and the alerts on them.

/** What a handler tells the metrics about its answer. */
type Measuring = { Variables: { ready: { status: string; reason: string }; answerBytes: number } };

const HOOKS: Record<string, string> = {
  [SYNC_PATH]: "sync",
  [FINALIZE_PATH]: "finalize",
  [CUSTOMIZE_PATH]: "customize",
  [HEALTH_PATH]: "healthz",
  [METRICS_PATH]: "metrics",
};
const hookOf = (path: string) => HOOKS[path] ?? "unknown";

// A rejected request's cause, by the status each check answers with.
const REJECTIONS: Record<number, string> = {
  400: "malformed_json",
  413: "body_too_large",
  415: "unsupported_media_type",
  422: "invalid_request",
};

// A sync takes about a millisecond; the largest request tens (test/bench.ts).
const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
// From an empty Project's kilobyte to past the default body limit.
const BYTES_BUCKETS = [1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304];

function createMetrics() {
  // One registry per app, never prom-client's global one: each app (and
  // each test) counts its own requests.
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    requests: new Counter({ name: "webhook_requests_total", help: "Requests answered, by hook and HTTP status code.", labelNames: ["hook", "code"], registers }),
    duration: new Histogram({ name: "webhook_request_duration_seconds", help: "Time from a request's arrival to its answer, by hook.", labelNames: ["hook"], buckets: SECONDS_BUCKETS, registers }),
    requestBytes: new Histogram({ name: "webhook_request_size_bytes", help: "Request bodies by their declared Content-Length, by hook.", labelNames: ["hook"], buckets: BYTES_BUCKETS, registers }),
    answerBytes: new Histogram({ name: "webhook_response_size_bytes", help: "Bodies of the answers the hooks give (200), by hook.", labelNames: ["hook"], buckets: BYTES_BUCKETS, registers }),
    inFlight: new Gauge({ name: "webhook_requests_in_flight", help: "Requests being answered now, by hook.", labelNames: ["hook"], registers }),
    rejected: new Counter({ name: "webhook_rejected_requests_total", help: "Hook requests refused before sync saw them (bad input, or over the body limit), by hook and cause.", labelNames: ["hook", "cause"], registers }),
    ready: new Counter({ name: "webhook_ready_answers_total", help: `Answers of the sync and finalize hooks, by the status and reason of the Ready condition they give the ${PARENT.kind}.`, labelNames: ["hook", "status", "reason"], registers }),
    refusals: new Counter({ name: "webhook_refusals_total", help: `Answers that refuse, until a person acts, what the ${PARENT.kind}'s spec asks, by reason.`, labelNames: ["hook", "reason"], registers }),
  };
}

function measureRequests(metrics: ReturnType<typeof createMetrics>): MiddlewareHandler<Measuring> {
  return async (c, next) => {
    const hook = hookOf(c.req.path);
    const started = performance.now();
    metrics.inFlight.inc({ hook });
    try {
      await next();
    } finally {
      metrics.inFlight.dec({ hook });
    }
    const { status } = c.res;
    metrics.requests.inc({ hook, code: String(status) });
    metrics.duration.observe({ hook }, (performance.now() - started) / 1000);
    // A chunked body has no size to give.
    const declared = c.req.header("Content-Length");
    if (declared !== undefined && c.req.method === "POST") metrics.requestBytes.observe({ hook }, Number(declared));
    const answerBytes = c.get("answerBytes");
    if (answerBytes !== undefined) metrics.answerBytes.observe({ hook }, answerBytes);
    const cause = REJECTIONS[status];
    if (cause && c.req.method === "POST" && hook !== "unknown") metrics.rejected.inc({ hook, cause });
    const ready = c.get("ready");
    if (ready) {
      const reason = REASONS.includes(ready.reason) ? ready.reason : "Other";
      metrics.ready.inc({ hook, status: ready.status, reason });
      if (isRefusal(reason)) metrics.refusals.inc({ hook, reason });
    }
  };
}

// Hono's validator quietly reads a non-JSON body as `{}`, which would come
// back as a puzzling schema error; say what is actually wrong instead.
const requireJsonContentType: MiddlewareHandler = async (c, next) => {
  const mediaType = c.req.header("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  if (mediaType === "application/json") return next();
  return c.json({ error: "Content-Type must be application/json" }, 415);
};

// Metacontroller never compresses a request, and a compressed body would
// otherwise be read as malformed JSON: name the encoding instead.
const requireUncompressedBody: MiddlewareHandler = async (c, next) => {
  const encoding = c.req.header("Content-Encoding")?.trim().toLowerCase();
  if (!encoding || encoding === "identity") return next();
  return c.json({ error: `Content-Encoding ${encoding} is not supported; send the body uncompressed` }, 415);
};

// Hono's bodyLimit reads `c.req.raw.body`, which makes @hono/node-server
// build a whole web Request and stream the body through it: that halved the
// throughput in test/bench.ts. Metacontroller always sends Content-Length, and
// the HTTP parser never reads past it, so the header settles the common case;
// only a chunked body is counted as it streams in, by Hono's bodyLimit.
function limitBodySize(maxBytes: number): MiddlewareHandler {
  const tooLarge = (c: Context) => c.json({ error: `request body is larger than ${maxBytes} bytes` }, 413);
  const countWhileStreaming = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return async (c, next) => {
    const declared = c.req.header("Content-Length");
    if (declared === undefined || c.req.header("Transfer-Encoding") !== undefined) {
      return countWhileStreaming(c, next);
    }
    return Number(declared) > maxBytes ? tooLarge(c) : next();
  };
}

const isRefusal = (reason: string) => REFUSALS.includes(reason);

function methodNotAllowed(allow: string) {
  return (c: Context) =>
    c.json({ error: `${c.req.method} is not allowed on ${c.req.path}; use ${allow}` }, 405, { Allow: allow });
}

// Paths are arrays of keys: a dotted path would be ambiguous through child
// keys such as `Namespace.v1`. A handful of issues says enough.
function listIssues(issues: readonly v.BaseIssue<unknown>[]) {
  return issues.slice(0, 10).map((issue) => ({
    path: issue.path?.map((segment) => segment.key) ?? [],
    message: issue.message,
  }));
}

// node:crypto rather than the web's crypto.subtle: the async digest hops
// through a thread pool and cost a fifth of the throughput in test/bench.ts.
// Deno and Bun provide node:crypto too (test/runtimes.ts runs it on both).
function etagOf(body: string): string {
  return `"${createHash("sha1").update(body).digest("hex")}"`;
}

// If-None-Match may list several tags, and compares them weakly (RFC 9110).
function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

// ## Serving and shutting down

export function start(config: Config): Server {
  let draining = false;
  const app = createApp({ ...config, closingConnections: () => draining });
  // Without a `createServer` option, serve() makes a plain node:http server.
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (address) => {
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    console.log(`listening on http://${host}:${address.port}`);
  }) as Server;
  server.keepAliveTimeout = config.keepAliveTimeoutSeconds * 1000;
  // Node requires the headers timeout to outlast the keep-alive timeout, or
  // a request arriving late on an idle connection can be cut off.
  server.headersTimeout = server.keepAliveTimeout + HEADERS_AFTER_KEEP_ALIVE_MS;
  server.on("error", (error) => exitForListenError(error, config));
  closeGracefullyOnSignals(server, config.shutdownTimeoutSeconds, () => (draining = true));
  return server;
}

// Node would print an "Unhandled 'error' event" stack; one line says more.
const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: "another process is listening on that port",
  EADDRNOTAVAIL: "that address is not on this machine",
  EACCES: "permission denied",
  ENOTFOUND: "no such host name",
  EAI_AGAIN: "the host name could not be looked up now",
};

function exitForListenError(error: NodeJS.ErrnoException, config: Config): never {
  const address = `${config.host ?? "every interface"}, port ${config.port}`;
  const cause = (error.code && LISTEN_ERRORS[error.code]) ?? error.message;
  console.error(`cannot listen on ${address}: ${cause} (${error.code ?? "no code"})`);
  process.exit(1);
}

// Kubernetes sends SIGTERM, then SIGKILL after the grace period. Stop
// accepting and let the requests in flight finish. A request still running at
// the deadline is cut off: Metacontroller retries it. A second signal means
// whoever sent it does not want to wait: exit at once.
function closeGracefullyOnSignals(server: Server, deadlineSeconds: number, onClosing: () => void): void {
  let closing = false;
  const close = (signal: string) => {
    if (closing) {
      console.error(`${signal} again: exiting without waiting for requests in flight`);
      process.exit(1);
    }
    closing = true;
    onClosing();
    console.log(`${signal}: finishing requests in flight, for at most ${deadlineSeconds}s`);
    setTimeout(() => {
      console.error(`still busy after ${deadlineSeconds}s: closing the remaining connections`);
      server.closeAllConnections();
      process.exit(1);
    }, deadlineSeconds * 1000).unref();
    server.close(() => process.exit(0));
    // close() ends the keep-alive connections idle at this moment, but one
    // whose request finishes later would stay open until its keep-alive
    // timeout and hold the exit back: keep ending those as they go idle.
    setInterval(() => server.closeIdleConnections(), 50).unref();
  };
  process.on("SIGTERM", () => close("SIGTERM"));
  process.on("SIGINT", () => close("SIGINT"));
}

// Deno, Bun and Node 24.2+ say whether this module is the entry point; on
// older Node (tsx on 20, 22) compare with the script Node was asked to run.
const isEntryPoint = import.meta.main ?? import.meta.filename === process.argv[1];
if (isEntryPoint) {
  try {
    start(readConfig(process.env));
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  }
}
