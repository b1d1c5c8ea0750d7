// main.ts and sync.ts run unbuilt: Node 22+/24 strip their types, Deno and
// Bun read them directly. Type stripping cannot run some TypeScript, so the
// project's type check must refuse it before a runtime does.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { root } from "./spawn-server.ts";

const tsc = join(root, "node_modules/.bin/tsc");

// Each snippet, checked with the project's tsconfig, must fail with its code.
const hazards: Record<string, [string, string]> = {
  "an enum": ["enum Phase { Active }\nexport const phase = Phase.Active;\n", "TS1294"],
  "a parameter property": ["export class Clock {\n  constructor(private now: number) {}\n}\n", "TS1294"],
  "a namespace with values": ["export namespace Names {\n  export const prefix = 'x-';\n}\n", "TS1294"],
  "a relative import without .ts": ['export { sync } from "../../sync";\n', "TS2835"],
  "a type imported without `type`": ['import { MiddlewareHandler } from "hono";\nexport const m: MiddlewareHandler[] = [];\n', "TS1484"],
};

describe("type check", () => {
  test("the project's type check refuses what type stripping cannot run, and passes what it can", () => {
    // Inside the repo, so that the snippets resolve hono and @types/node as the real files do.
    mkdirSync(join(root, ".cache"), { recursive: true });
    const directory = mkdtempSync(join(root, ".cache", "typecheck-"));
    try {
      const files: Record<string, string> = { "clean.ts": 'import type { Hono } from "hono";\nexport type App = Hono;\n' };
      for (const [index, [source]] of Object.values(hazards).entries()) files[`hazard${index}.ts`] = source;
      for (const [name, source] of Object.entries(files)) writeFileSync(join(directory, name), source);
      writeFileSync(
        join(directory, "tsconfig.json"),
        JSON.stringify({ extends: "../../tsconfig.json", include: Object.keys(files) }),
      );

      // In a terminal, Node's test runner sets FORCE_COLOR, and TypeScript 7
      // then prints its pretty form; forcing it here makes every run see
      // that case, and `--pretty false` keeps the form this test reads.
      const result = spawnSync(tsc, ["-p", directory, "--pretty", "false"], {
        encoding: "utf8",
        env: { ...process.env, FORCE_COLOR: "1" },
      });
      const errors = result.stdout + result.stderr;
      assert.doesNotMatch(errors, /clean\.ts/, "the clean file passes");
      for (const [index, [what, [, code]]] of Object.entries(hazards).entries()) {
        assert.match(errors, new RegExp(`hazard${index}\\.ts\\(\\d+,\\d+\\): error ${code}`), `${what} is refused`);
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
