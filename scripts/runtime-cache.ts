// Runtimes from the npm registry (the packages node, deno and bun ship real
// binaries), installed once into .cache/runtimes and reused by later runs.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BUNDLE_FILE, readManifest } from "./manifest.ts";

const cache = fileURLToPath(new URL("../.cache/runtimes/", import.meta.url));
const deployedDirectory = fileURLToPath(new URL("../.cache/deployed/", import.meta.url));

export type NpmRuntime = { name: string; version: string; bin: string };

// Node 24 is the version the Deployment's image runs, read from k8s.yaml.
export function deployedNodeVersion(): string {
  const image: string = readManifest().find("Deployment").spec.template.spec.containers[0].image;
  const version = /^node:(\d+\.\d+\.\d+)-/.exec(image)?.[1];
  assert.ok(version, `an exact Node version in the image tag ${image}`);
  return version;
}

/** The runtime's binary, installed from the npm registry into the cache on first use. */
export function install(npm: NpmRuntime): string {
  const directory = `${cache}${npm.name}@${npm.version}`;
  const bin = `${directory}/node_modules/.bin/${npm.bin}`;
  if (existsSync(bin)) return bin;
  mkdirSync(directory, { recursive: true });
  writeFileSync(`${directory}/package.json`, '{ "private": true }\n');
  const result = spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--no-package-lock", "--save-exact", `${npm.name}@${npm.version}`],
    { cwd: directory, encoding: "utf8" },
  );
  assert.equal(result.status, 0, `npm install ${npm.name}@${npm.version} failed:\n${result.stderr}`);
  return bin;
}

/** k8s.yaml's ConfigMaps written out in one directory, as the pod's volume has them; returns the webhook's path. */
export function deployedBundle(): string {
  mkdirSync(deployedDirectory, { recursive: true });
  // The ConfigMaps the pod mounts, as its Deployment names them.
  const { find } = readManifest();
  const sources: { configMap: { name: string } }[] = find("Deployment").spec.template.spec.volumes.flatMap((volume: any) => volume.projected?.sources ?? []);
  for (const name of sources.map((source) => source.configMap.name)) {
    for (const [file, text] of Object.entries<string>(find("ConfigMap", name).data)) writeFileSync(`${deployedDirectory}${file}`, text);
  }
  return `${deployedDirectory}${BUNDLE_FILE}`;
}

// `npm run runtime-cache` (README's "Make it your own", before an offline
// e2e), or `node --import tsx scripts/runtime-cache.ts`: the Node the Deployment runs and
// its bundle, installed and written out, one path a line, for the scripts
// that run the webhook exactly as the pod does (test/local-e2e.sh).
if (import.meta.filename === process.argv[1]) {
  console.log(install({ name: "node", version: deployedNodeVersion(), bin: "node" }));
  console.log(deployedBundle());
}
