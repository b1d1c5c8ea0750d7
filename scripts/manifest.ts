// `npm run manifest` writes the webhook into k8s.yaml: main.ts bundled with
// sync.ts into one ES module, the dependencies it uses into another, each in
// its ConfigMap, and their checksum onto the Deployment's pod template, so
// that applying new code rolls the pods. Every other document is kept byte for byte, comments
// and all. manifest.test.ts fails whenever k8s.yaml is not what this would
// write, so the code in the cluster is provably the repo's.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { Scalar, parseAllDocuments, parseDocument, type YAMLMap } from "yaml";
import { GROUP, VERSION } from "../sync.ts";
import { CHART_DIRECTORY, renderChart } from "./chart.ts";
import { writeKrew } from "./krew.ts"; // feature: members

export const MANIFEST_PATH = fileURLToPath(new URL("../k8s.yaml", import.meta.url));
const root = fileURLToPath(new URL("..", import.meta.url));
export const CHECKSUM_ANNOTATION = `${GROUP}/code-checksum`;
/** The file the pod runs: main.ts bundled with sync.ts. */
export const BUNDLE_FILE = "webhook.mjs";
/** The file beside it that holds the dependencies it imports. */
export const DEPENDENCIES_FILE = "dependencies.mjs";
/** prom-client's parts, a file of their own: with the other packages they would not fit one ConfigMap (see below). */
export const PROM_CLIENT_FILE = "prom-client.mjs";

// k8s.yaml parsed once for each text it has: most test files read it in
// several places, and a parse of its code's ConfigMaps takes most of a second
// of CPU, where a copy of the objects takes milliseconds.
let parsed: { text: string; documents: ReturnType<typeof parseAllDocuments>; objects: any[] } | undefined;

/** k8s.yaml as the tests read it: its text, its documents (shared: read them, never change them), and those as plain objects of any shape, a copy of its own for each caller. */
export function readManifest() {
  const text = readFileSync(MANIFEST_PATH, "utf8");
  if (parsed?.text !== text) {
    const documents = parseAllDocuments(text);
    parsed = { text, documents, objects: [...documents].map((document) => document.toJS()) };
  }
  const documents = [...parsed.documents];
  const objects: any[] = structuredClone(parsed.objects);
  /** The object of this kind, and name if given: exactly one, or the test fails. */
  const find = (kind: string, name?: string): any => {
    const found = objects.filter((object) => object.kind === kind && (name === undefined || object.metadata.name === name));
    if (found.length !== 1) throw new Error(`${found.length} ${kind} ${name ?? ""} in k8s.yaml, not exactly one`);
    return found[0];
  };
  return { text, documents, objects, find };
}

// Client-side `kubectl apply` keeps a copy of the whole object in an
// annotation, written as Go writes JSON (`<`, `>`, `&`, U+2028 and U+2029
// escaped to six bytes each), and the API server refuses more than 256 KiB of
// annotations on one object.
// feature: annotation-limits
// features/annotation-limits.ts counts a Namespace's the same way for a rule
// of its own; its tests prove that the two counts agree.
// end feature: annotation-limits
export const ANNOTATIONS_LIMIT_BYTES = 256 * 1024;
export const CLIENT_SIDE_APPLY_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";
/** JSON as Go writes it, as Kubernetes tools store their copies of objects. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
export function clientSideApplyCopyBytes(object: unknown): number {
  return Buffer.byteLength(CLIENT_SIDE_APPLY_ANNOTATION) + Buffer.byteLength(goJson(object));
}

/** Fails unless the CRD serves sync.ts's group and version under these names. */
export function assertCrdSpells(crd: any, names: { kind: string; plural: string; singular?: string }): void {
  assert.equal(crd.spec.group, GROUP);
  assert.deepEqual(crd.spec.versions.map((version: any) => version.name), [VERSION]);
  assert.equal(crd.spec.names.kind, names.kind);
  assert.equal(crd.spec.names.plural, names.plural);
  if (names.singular) assert.equal(crd.spec.names.singular, names.singular);
}

/** The runtime dependencies at the versions package-lock.json pins, as `name@version`. */
export function lockedRuntimeDependencies(): string[] {
  const read = (name: string) => JSON.parse(readFileSync(`${root}/${name}`, "utf8"));
  const { dependencies } = read("package.json") as { dependencies: Record<string, string> };
  const { packages } = read("package-lock.json") as { packages: Record<string, { version: string }> };
  return Object.keys(dependencies).map((name) => `${name}@${packages[`node_modules/${name}`]?.version}`);
}

/** Each generated ConfigMap's name, with its files. */
export type Code = Record<string, Record<string, string>>;

// Two files in two ConfigMaps, because client-side `kubectl apply` copies
// each object into an annotation of at most 256 KiB: the code we write
// (main.ts and sync.ts) in one, and the dependencies, which grow only when
// package-lock.json changes, in the other. Neither is minified nor has a
// source map: a stack trace in the pod's log names the real functions at
// readable lines, and anyone can audit what runs (manifest.test.ts keeps
// both copies under the limit with room to spare).
//
// esbuild's code splitting makes the cut. The second entry is the webhook
// bundled once more, with its packages left as imports: a copy of our code
// that uses exactly the parts of the packages the webhook does. What both
// entries reach, those parts, goes to one shared chunk, which webhook.mjs
// imports as ./dependencies.mjs. The copy's own output is not shipped.
// Symlinks are kept as they are, so that a checkout whose node_modules is a
// link to another checkout's bundles the same bytes, paths in comments too.
export async function bundleWebhook(): Promise<Code> {
  const common = { absWorkingDir: root, preserveSymlinks: true, bundle: true, platform: "node", format: "esm", target: "node24", write: false } as const;
  const ours = await build({ ...common, entryPoints: ["main.ts"], packages: "external" });
  const { outputFiles } = await build({
    ...common,
    entryPoints: [
      { in: "main.ts", out: BUNDLE_FILE.replace(/\.mjs$/, "") },
      { in: "our-code-again", out: "unused" },
      { in: "prom-client-again", out: "unused-too" },
    ],
    splitting: true,
    outdir: "out",
    chunkNames: "chunk-[hash]",
    outExtension: { ".js": ".mjs" },
    plugins: [
      promClientParts,
      {
        name: "our-code-again",
        setup(build) {
          build.onResolve({ filter: /^(our-code|prom-client)-again$/ }, ({ path }) => ({ path, namespace: "again" }));
          build.onLoad({ filter: /.*/, namespace: "again" }, ({ path }) => ({
            contents: path === "our-code-again" ? ours.outputFiles[0]?.text : 'export * from "prom-client";',
            resolveDir: root,
          }));
        },
      },
    ],
  });
  // The chunk that all three entries reach is prom-client's; the one only
  // the first two reach, the other packages'. Each gets its file's name.
  const chunks = outputFiles.filter(({ path }) => /\/out\/chunk-[^/]+\.mjs$/.test(path));
  const named = new Map(chunks.map(({ path, text }) => [path.slice(path.lastIndexOf("/") + 1), text.includes("// node_modules/prom-client/") ? PROM_CLIENT_FILE : DEPENDENCIES_FILE]));
  if (new Set(named.values()).size !== 2 || named.size !== 2) throw new Error(`esbuild wrote chunks ${[...named.keys()].join(", ")}, not one for prom-client and one for the other packages`);
  const file = (name: string) => {
    const output = outputFiles.find(({ path }) => path.endsWith(`/out/${name}`)) ?? chunks.find(({ path }) => named.get(path.slice(path.lastIndexOf("/") + 1)) === name);
    if (!output) throw new Error(`esbuild wrote no ${name}`);
    return output.text.replace(/"\.\/(chunk-[^"/]+\.mjs)"/g, (_, chunk: string) => JSON.stringify(`./${named.get(chunk)}`));
  };
  // prom-client is CommonJS and calls require() for Node's util, which an
  // ES module has only by asking for it.
  const requireForCommonJs = 'import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\n';
  const doNotEdit = "Do not edit: change main.ts or sync.ts and run npm run manifest.";
  const dependencies = lockedRuntimeDependencies().join(", ");
  return {
    controller: {
      [BUNDLE_FILE]: `// Generated by \`npm run manifest\` from main.ts and sync.ts; the dependencies are in ${DEPENDENCIES_FILE}. ${doNotEdit}\n${file(BUNDLE_FILE)}`,
    },
    "controller-dependencies": {
      [DEPENDENCIES_FILE]: `// Generated by \`npm run manifest\`: the parts of ${dependencies} that ${BUNDLE_FILE} uses, but prom-client's, which are in ${PROM_CLIENT_FILE}, as package-lock.json pins them. ${doNotEdit}\n${file(DEPENDENCIES_FILE)}`,
    },
    "controller-prom-client": {
      [PROM_CLIENT_FILE]: `// Generated by \`npm run manifest\`: the parts of ${dependencies.split(", ").find((pinned) => pinned.startsWith("prom-client@"))} that ${BUNDLE_FILE} uses, as package-lock.json pins it. ${doNotEdit}\n${requireForCommonJs}${file(PROM_CLIENT_FILE)}`,
    },
  };
}

// prom-client is CommonJS, which esbuild cannot tree-shake, and its index
// requires every part of it: the cluster aggregator, the Pushgateway
// client, the summaries (with tdigest and bintrees), the default process
// metrics and @opentelemetry/api, 177 KB unminified where the four classes
// main.ts uses take 37 KB. So in the bundle `prom-client` is those four, each
// from its own module; a name main.ts imports beyond them fails the build.
export const PROM_CLIENT_PARTS = { Registry: "registry", Counter: "counter", Gauge: "gauge", Histogram: "histogram" };
const promClientParts: Plugin = {
  name: "prom-client-parts",
  setup(build) {
    build.onResolve({ filter: /^prom-client$/ }, ({ path }) => ({ path, namespace: "prom-client-parts" }));
    build.onLoad({ filter: /.*/, namespace: "prom-client-parts" }, () => ({
      contents: Object.entries(PROM_CLIENT_PARTS)
        .map(([name, file]) => `export { default as ${name} } from "prom-client/lib/${file}.js";`)
        .join("\n"),
      resolveDir: root,
    }));
  },
};

// Documents are cut at their `---` lines, so that those left alone are not
// even re-parsed.
const SEPARATOR = "---\n";

// The generated ConfigMaps live where the webhook does, labelled as its
// Deployment is: both are read from those documents, so that renaming the
// install's Namespace or its app in one place renames them too.
const CHECKSUM_SUFFIX = `/${CHECKSUM_ANNOTATION.split("/")[1]}`;

export function renderManifest(manifest: string, code: Code): string {
  const checksum = createHash("sha256").update(JSON.stringify(code)).digest("hex");
  const texts = manifest.split(SEPARATOR);
  const objects = parseAllDocuments(manifest).map((document) => document.toJS());
  const deployment = objects.find((object) => object?.kind === "Deployment");
  const namespace = objects.find((object) => object?.kind === "Namespace")?.metadata.name;
  return texts
    .map((text) => {
      const document = parseDocument(text);
      switch (document.get("kind")) {
        case "ConfigMap": {
          const name = String(document.getIn(["metadata", "name"]));
          const files = code[name];
          if (!files) return text;
          document.set("metadata", document.createNode({ name, namespace, labels: deployment?.metadata.labels }));
          const data = document.createNode(files) as YAMLMap<Scalar, Scalar>;
          // Literal blocks keep the code readable in the manifest, line for line.
          for (const { value } of data.items) if (value) value.type = Scalar.BLOCK_LITERAL;
          document.set("data", data);
          return document.toString({ lineWidth: 0 });
        }
        case "Deployment": {
          // A checksum under an older name would stay beside the new one.
          const annotations = document.getIn(["spec", "template", "metadata", "annotations"]) as YAMLMap<Scalar, unknown> | undefined;
          for (const item of [...(annotations?.items ?? [])]) {
            const key = String(item.key?.value ?? item.key);
            if (key.endsWith(CHECKSUM_SUFFIX) && key !== CHECKSUM_ANNOTATION) annotations?.delete(item.key);
          }
          document.setIn(["spec", "template", "metadata", "annotations", CHECKSUM_ANNOTATION], checksum);
          return document.toString();
        }
        default:
          return text;
      }
    })
    .join(SEPARATOR);
}

if (import.meta.filename === process.argv[1]) {
  const before = readFileSync(MANIFEST_PATH, "utf8");
  const after = renderManifest(before, await bundleWebhook());
  if (after === before) {
    console.log("k8s.yaml is up to date");
  } else {
    writeFileSync(MANIFEST_PATH, after);
    console.log("k8s.yaml: the generated ConfigMaps and the code checksum rewritten");
  }
  const chart = renderChart(after);
  const stale = Object.keys(chart).filter((path) => !existsSync(`${CHART_DIRECTORY}${path}`) || readFileSync(`${CHART_DIRECTORY}${path}`, "utf8") !== chart[path]);
  for (const path of stale) {
    mkdirSync(dirname(`${CHART_DIRECTORY}${path}`), { recursive: true });
    writeFileSync(`${CHART_DIRECTORY}${path}`, chart[path]!);
  }
  console.log(stale.length ? `chart/: ${stale.join(", ")} written from k8s.yaml` : "chart/ is up to date");
  await writeKrew(); // feature: members
}
