#!/usr/bin/env bash
# The core with every feature taken away, exactly as README's "Make it your
# own" says: a clone of this commit beside the repository, `npm ci`, `npm run
# take-away` of every file in features/, `npm run manifest`, `npm run
# transcripts`, then its type check and tests (`npm test`) and its e2e on the
# local control plane (`npm run test:e2e:local`). CI runs it; the clone is
# removed at the end, passed or not.
set -euo pipefail
cd "$(dirname "$0")/.."
core=$(realpath -m "../$(basename "$PWD")-core")
rm -rf "$core"
trap 'rm -rf "$core"' EXIT
git clone -q . "$core"
# The Node 24 the e2e runs the webhook on, as step 3 of CI installed it here.
[ -d .cache/runtimes ] && mkdir -p "$core/.cache" && cp -a .cache/runtimes "$core/.cache/"
plane=$(realpath -m "${LOCAL_CONTROL_PLANE:-../shared/local-control-plane}")
cd "$core"
npm ci --no-audit --no-fund --loglevel=error
features=$(ls features | sed -n 's/\.ts$//p' | tr '\n' ' ')
echo "taking away: $features"
# shellcheck disable=SC2086
npm run -s take-away -- $features
[ -z "$(ls features 2>/dev/null)" ] || { echo "features/ is not empty after taking every feature away" >&2; exit 1; }
npm run -s manifest
npm run -s transcripts
log=$(mktemp)
npm test >"$log" 2>&1 || { cat "$log"; exit 1; }
echo "the core's npm test: $(tail -n 1 "$log")"
LOCAL_CONTROL_PLANE=$plane npm run -s test:e2e:local
