// `npm run manifest` writes the webhook's code into k8s.yaml: main.ts,
// sync.ts and a runtime package.json into the ConfigMap, and their checksum
// onto the Deployment's pod template, so that applying new code rolls the
// pods. Every other document is kept byte for byte, comments and all.
// manifest.test.ts fails whenever k8s.yaml is not what this would write.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Scalar, parseDocument, type YAMLMap } from "yaml";

export const MANIFEST_PATH = fileURLToPath(new URL("../k8s.yaml", import.meta.url));
const root = new URL("..", import.meta.url);
export const CHECKSUM_ANNOTATION = "agrrh.com/code-checksum";

/** What the Deployment installs: ESM, and the runtime dependencies at the repo's exact versions. */
export function runtimePackageJson(repoPackageJson: string): string {
  const { dependencies } = JSON.parse(repoPackageJson) as { dependencies: Record<string, string> };
  return `${JSON.stringify({ type: "module", dependencies }, null, 2)}\n`;
}

/** The ConfigMap's data, from the files in the repo. */
export function codeFromRepo(): Record<string, string> {
  const read = (name: string) => readFileSync(new URL(name, root), "utf8");
  return {
    "main.ts": read("main.ts"),
    "sync.ts": read("sync.ts"),
    "package.json": runtimePackageJson(read("package.json")),
  };
}

// Documents are cut at their `---` lines, so that those left alone are not
// even re-parsed.
const SEPARATOR = "---\n";

export function renderManifest(manifest: string, code: Record<string, string>): string {
  const checksum = createHash("sha256").update(JSON.stringify(code)).digest("hex");
  return manifest
    .split(SEPARATOR)
    .map((text) => {
      const document = parseDocument(text);
      switch (document.get("kind")) {
        case "ConfigMap": {
          const data = document.createNode(code) as YAMLMap<Scalar, Scalar>;
          // Literal blocks keep the code readable in the manifest, line for line.
          for (const { value } of data.items) if (value) value.type = Scalar.BLOCK_LITERAL;
          document.set("data", data);
          return document.toString();
        }
        case "Deployment":
          document.setIn(["spec", "template", "metadata", "annotations", CHECKSUM_ANNOTATION], checksum);
          return document.toString();
        default:
          return text;
      }
    })
    .join(SEPARATOR);
}

if (import.meta.filename === process.argv[1]) {
  const before = readFileSync(MANIFEST_PATH, "utf8");
  const after = renderManifest(before, codeFromRepo());
  if (after === before) {
    console.log("k8s.yaml is up to date");
  } else {
    writeFileSync(MANIFEST_PATH, after);
    console.log("k8s.yaml: ConfigMap controller and the code checksum rewritten");
  }
}
