// The README's transcripts are what the webhook really answers, so that a
// reader who runs them sees what they read.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { CUSTOMIZE_PATH, SETTINGS, SYNC_PATH, createApp, readConfig } from "../main.ts";
import { fixture } from "./helpers.ts";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const app = createApp(readConfig({}));

describe("README", () => {
  test("the steady-sync transcript shows the webhook's exact answer and ETag", async (t) => {
    t.mock.method(console, "log", () => {});
    const response = await app.request(SYNC_PATH, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(fixture("steady-sync")),
    });
    const etag = response.headers.get("ETag") ?? "";
    const body = await response.text();
    assert.ok(readme.includes(`etag: ${etag}\n`), `README shows the ETag ${etag}`);
    assert.ok(readme.includes(`-H 'If-None-Match: ${etag}'`), "README sends that ETag back");
    assert.ok(readme.includes(`\n${body}\n`), `README shows the answer:\n${body}`);
  });

  // Each `$ curl -s localhost:8080/<route> ... -d '<body>'` and the lines it prints, up to the next command.
  const transcripts = [...readme.matchAll(/^\$ curl -s localhost:8080(\/\w+) (.*?)-d '(.*)'( \| jq \.)?\n([\s\S]*?)(?=^\$ |^```)/gm)];
  test("the README shows transcripts of customize, the smallest sync request, a conflict and bad input", () => {
    assert.deepEqual(
      [...new Set(transcripts.map(([, route]) => route))].sort(),
      [CUSTOMIZE_PATH, SYNC_PATH].sort(),
    );
    assert.ok(transcripts.length >= 6, `${transcripts.length} transcripts found`);
  });
  for (const [, route = "", flags = "", body = "", pretty, printed = ""] of transcripts) {
    test(`the transcript for ${route} -d '${body.length > 40 ? `${body.slice(0, 40)}...` : body}' is what the webhook answers`, async (t) => {
      t.mock.method(console, "log", () => {});
      const headers: Record<string, string> = flags.includes("Content-Type: application/json") ? { "Content-Type": "application/json" } : {};
      const response = await app.request(route, { method: "POST", headers, body });
      const answer = await response.text();
      if (!pretty) return assert.equal(answer, printed.trimEnd());
      // A condition stamped now shows another time in the README.
      const withoutTimes = (text: string) => JSON.stringify(JSON.parse(text), (key, value) => (key === "lastTransitionTime" ? "(time)" : value));
      assert.equal(withoutTimes(answer), withoutTimes(printed));
    });
  }

  test("the quickstart is npm ci && npm start, then npm test, as CI runs it", () => {
    assert.match(readme, /npm ci && npm start {5}# the webhook, on http:\/\/localhost:8080/);
    assert.match(readme, /\nnpm test {16}# type check and every test/);
    const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8");
    assert.match(ci, /^npm ci$/m);
    assert.match(ci, /^npm test$/m);
    assert.equal(readConfig({}).port, 8080);
  });

  test("the Deno command lets the webhook read exactly the settings it has", () => {
    assert.ok(readme.includes(`--allow-env=${SETTINGS.join(",")} main.ts`), SETTINGS.join(","));
  });
});
