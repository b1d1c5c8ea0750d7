// helm, for e2e step 74: built from its Go module, as the Go module proxy
// serves it, into .cache/helm/<version>/ once, and reused by later runs
// (`npm run runtime-cache` builds it before an offline e2e). Prints its path.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const HELM_MODULE = "helm.sh/helm/v3";
export const HELM_VERSION = "v3.21.4";
const directory = fileURLToPath(new URL(`../.cache/helm/${HELM_VERSION}/`, import.meta.url));

/** The helm binary's path, built first if it is not there yet. */
export function helmBinary(): string {
  const helm = `${directory}helm`;
  if (existsSync(helm)) return helm;
  // Built beside the binary's place and moved there whole, so that a build
  // cut short never leaves a binary that later runs would trust.
  const building = `${directory}building/`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const started = Date.now();
  const build = spawnSync("go", ["install", `${HELM_MODULE}/cmd/helm@${HELM_VERSION}`], {
    env: { ...process.env, GOBIN: building, GOFLAGS: "-mod=mod" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (build.error || build.status !== 0) throw new Error(`go install ${HELM_MODULE}/cmd/helm@${HELM_VERSION} failed (${build.error?.message ?? `exit ${build.status}`}): it needs Go and the Go module proxy`);
  renameSync(`${building}helm`, helm);
  rmSync(building, { recursive: true, force: true });
  console.error(`helm ${HELM_VERSION} built from its Go module in ${Math.round((Date.now() - started) / 1000)} s`);
  return helm;
}

if (import.meta.filename === process.argv[1]) console.log(helmBinary());
