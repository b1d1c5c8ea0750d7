// `npm run transcripts`: after a change to what the webhook answers, writes
// the answers anew where a reader sees them, so that no transcript is pasted
// by hand:
//   - every `$ curl ... localhost:8080/...` transcript in README.md and docs/
//     gets the webhook's real answer: the body, and for `curl -si` the ETag
//     and Content-Length (the date and the time a condition is stamped stay
//     as they are written);
//   - the steady fixture's status becomes `sync`'s own answer to it, as
//     Metacontroller would have written it, so that it stays a fixed point.
// It refuses, and writes nothing, where an answer would change its kind: a
// status code other than the one `curl -si` shows, or an error where `curl
// -s` showed an answer (or the other way round). That is a request to
// retype, say after a schema change, not an answer to paste.
// readme.test.ts and sync.test.ts fail whenever this would change anything.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createApp, readConfig } from "../main.ts";
import { sync } from "../sync.ts";

const root = new URL("..", import.meta.url);
const app = createApp(readConfig({}));

/** The pages a reader reads, by path from the repository's root. */
export function pagePaths(): string[] {
  const docs = readdirSync(new URL("docs/", root)).filter((file) => file.endsWith(".md")).sort();
  return ["README.md", ...docs.map((file) => `docs/${file}`)];
}

// A command, then what it printed, up to the next command or the end of the
// block. The body is inline, a file, or (`-d @-`) a file as a jq filter
// changes it: a fixture with one thing added says what the example is about.
export const TRANSCRIPT = /^\$ (?:jq '(.*?)' (\S+) \| )?curl -s(i?) localhost:8080(\/\w+) (.*?)-d (?:'(.*)'|@(\S+))( \| jq \.)?\n(?<printed>[\s\S]*?)(?=^\$ |^```)/gm;

async function answer(route: string, flags: string, body: string) {
  const headers: Record<string, string> = {};
  if (flags.includes("Content-Type: application/json")) headers["Content-Type"] = "application/json";
  const ifNoneMatch = /-H 'If-None-Match: ([^']+)'/.exec(flags)?.[1];
  if (ifNoneMatch) headers["If-None-Match"] = ifNoneMatch;
  const response = await app.request(route, { method: "POST", headers, body });
  return { status: response.status, etag: response.headers.get("ETag") ?? "", text: await response.text() };
}

/** A request whose answer is no longer of the kind its page shows. */
export class StatusChanged extends Error {}

// What a transcript shows of the status: the code `curl -si` prints, or for
// `curl -s` only whether the body is an error.
const shownStatus = (headers: string | undefined, printed: string) =>
  headers ? /^HTTP\/1\.1 (\d+)/.exec(printed)?.[1] ?? "" : /^\{\s*"error"/.test(printed) ? "an error" : "an answer";
const statusOf = (headers: string | undefined, status: number) => (headers ? String(status) : status >= 400 ? "an error" : "an answer");

/** The page with every transcript in it as the webhook answers today; throws StatusChanged where one would change its kind. */
export async function renderTranscripts(page: string): Promise<string> {
  // The webhook logs each request, and warns of each refusal it answers.
  const { log, warn } = console;
  console.log = console.warn = () => {};
  try {
    let rendered = page;
    const changed: string[] = [];
    // The ETag of each file's answer, so that a later `If-None-Match` sends it back.
    const etags = new Map<string, string>();
    for (const [whole, filter, filtered = "", headers, route = "", flags = "", inline, file, pretty, printed = ""] of page.matchAll(TRANSCRIPT)) {
      const body =
        inline ??
        (file === "-" && filter !== undefined
          ? execFileSync("jq", ["-c", filter, fileURLToPath(new URL(filtered, root))], { encoding: "utf8" }).trim()
          : JSON.stringify(JSON.parse(readFileSync(new URL(file ?? "", root), "utf8"))));
      const conditional = flags.includes("If-None-Match") && file ? flags.replace(/If-None-Match: [^']+/, `If-None-Match: ${etags.get(file) ?? ""}`) : flags;
      const { status, etag, text } = await answer(route, conditional, body);
      if (file && !flags.includes("If-None-Match")) etags.set(file, etag);
      const command = whole.slice(0, whole.indexOf("\n") + 1).replace(flags, conditional);
      const [was, is] = [shownStatus(headers, printed), statusOf(headers, status)];
      if (was !== is) changed.push(`${command.trim().slice(0, 160)}: shows ${was}, would show ${is}`);
      let output: string;
      if (!headers) {
        output = pretty ? `${prettyWithTimesOf(text, printed)}\n` : `${text}\n`;
      } else {
        output = printed
          .replace(/^(etag|ETag): .*$/m, (_, name) => `${name}: ${etag}`)
          .replace(/^Content-Length: \d+$/m, `Content-Length: ${Buffer.byteLength(text)}`)
          .replace(/^\{.*\}$/m, text);
      }
      rendered = rendered.replace(whole, command + output);
    }
    if (changed.length) throw new StatusChanged(`retype these requests, whose answers would change their kind:\n${changed.join("\n")}`);
    return rendered;
  } finally {
    Object.assign(console, { log, warn });
  }
}

// A condition stamped now would show another time on every run: the one the
// page shows is kept.
function prettyWithTimesOf(text: string, printed: string): string {
  const shown = /"lastTransitionTime": "([^"]+)"/.exec(printed)?.[1] ?? "2026-12-01T15:21:46Z";
  return JSON.stringify(JSON.parse(text), (key, value) => (key === "lastTransitionTime" ? shown : value), 2);
}

export const STEADY_FIXTURE = fileURLToPath(new URL("test/fixtures/steady-sync.json", root));

/** The steady fixture with its status as `sync` answers it, its keys sorted as the API server returns a custom resource's. */
export function renderSteadyFixture(text: string): string {
  const request = JSON.parse(text);
  request.parent.status = sortedKeys(sync(request.parent, request.children, request.related).status);
  return `${JSON.stringify(request, null, 2)}\n`;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, child]) => [key, sortedKeys(child)]));
}

if (import.meta.filename === process.argv[1]) {
  // The pages' answers to the steady fixture come from it as rewritten; every
  // page is rendered before any is written, and a refusal puts it back too.
  const fixtureBefore = readFileSync(STEADY_FIXTURE, "utf8");
  writeFileSync(STEADY_FIXTURE, renderSteadyFixture(fixtureBefore));
  const pages = pagePaths().map((path) => ({ path, url: new URL(path, root), before: readFileSync(new URL(path, root), "utf8") }));
  const rendered: { path: string; url: URL; before: string; after: string }[] = [];
  const refusals: string[] = [];
  for (const page of pages) {
    try {
      rendered.push({ ...page, after: await renderTranscripts(page.before) });
    } catch (failure) {
      if (!(failure instanceof StatusChanged)) throw failure;
      refusals.push(`${page.path}: ${failure.message}`);
    }
  }
  if (refusals.length) {
    writeFileSync(STEADY_FIXTURE, fixtureBefore);
    console.error(`npm run transcripts wrote nothing:\n${refusals.join("\n")}`);
    process.exit(1);
  }
  for (const { path, url, before, after } of rendered) {
    if (after !== before) writeFileSync(url, after);
    console.log(`${path}: ${after === before ? "unchanged" : "transcripts rewritten"}`);
  }
}
