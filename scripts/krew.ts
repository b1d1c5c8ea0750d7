// The krew manifest of kubectl my-projects (scripts/my-projects.krew.yaml):
// krew installs a plugin from an archive whose SHA-256 the manifest names,
// so the archive is made here the same way every time (the one script,
// mode 0755, no owner, no time, stored in gzip uncompressed, which no zlib
// writes differently), and my-projects.test.ts fails when the manifest's
// sha256 is not this archive's. `npm run manifest` (after a rename changed
// the script, say) writes that sum into the manifest, and the
// archive to .cache/krew/, for a release to publish beside the manifest, or for
// `kubectl krew install --manifest=scripts/my-projects.krew.yaml --archive=.cache/krew/kubectl-my_projects.tar.gz`.
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "tar";

export const PLUGIN_FILE = "kubectl-my_projects";
export const KREW_MANIFEST = fileURLToPath(new URL("../scripts/my-projects.krew.yaml", import.meta.url));
const scripts = fileURLToPath(new URL("../scripts/", import.meta.url));

/** The archive krew unpacks: scripts/kubectl-my_projects alone, the same bytes for the same script. */
export async function pluginArchive(): Promise<Buffer> {
  // A copy whose mode is set here: a checkout's follows its umask.
  const copy = mkdtempSync(join(tmpdir(), "krew-"));
  try {
    copyFileSync(`${scripts}${PLUGIN_FILE}`, join(copy, PLUGIN_FILE));
    chmodSync(join(copy, PLUGIN_FILE), 0o755);
    const chunks: Buffer[] = [];
    const stream = create({ cwd: copy, gzip: { level: 0 }, portable: true, mtime: new Date(0) }, [PLUGIN_FILE]);
    for await (const chunk of stream) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

export const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The krew manifest's text, naming this archive by its sum. */
export const namingArchive = (manifest: string, archive: Buffer) => manifest.replace(/(sha256: )[0-9a-f]{64}/, `$1${sha256(archive)}`);

/** Writes the archive to .cache/krew/ and its sum into the krew manifest. */
export async function writeKrew() {
  const archive = await pluginArchive();
  const directory = fileURLToPath(new URL("../.cache/krew/", import.meta.url));
  mkdirSync(directory, { recursive: true });
  writeFileSync(`${directory}${PLUGIN_FILE}.tar.gz`, archive);
  console.log(`${directory}${PLUGIN_FILE}.tar.gz sha256 ${sha256(archive)}`);
  const manifest = readFileSync(KREW_MANIFEST, "utf8");
  const named = namingArchive(manifest, archive);
  if (named !== manifest) {
    writeFileSync(KREW_MANIFEST, named);
    console.log(`${KREW_MANIFEST}: sha256 rewritten`);
  }
}

if (import.meta.filename === process.argv[1]) await writeKrew();
