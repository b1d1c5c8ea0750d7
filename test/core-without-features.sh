#!/usr/bin/env bash
# README's "Make it your own", as a person would run it: a clone of this
# commit beside the repository, `npm ci`, `npm run take-away` of every file
# in features/, `npm run manifest`, `npm run transcripts` and the core's type
# check and tests (`npm test`); then the core renamed (`npm run rename`) with
# a feature of its own (`npm run new-feature`, its fixture made from code),
# its tests again, and its e2e on the local control plane (`npm run
# test:e2e:local`). CI runs it; the clone is removed at the end, passed or
# not.
set -euo pipefail
cd "$(dirname "$0")/.."
core=$(realpath -m "../$(basename "$PWD")-core")
rm -rf "$core"
trap 'rm -rf "$core"' EXIT
git clone -q . "$core"
# The Node 24 the e2e runs the webhook on, as step 3 of CI installed it here,
# and the helm its chart step runs, as step 6a built it.
[ -d .cache/runtimes ] && mkdir -p "$core/.cache" && cp -a .cache/runtimes "$core/.cache/"
[ -d .cache/helm ] && mkdir -p "$core/.cache" && cp -a .cache/helm "$core/.cache/"
plane=$(realpath -m "${LOCAL_CONTROL_PLANE:-../shared/local-control-plane}")
cd "$core"
npm ci --no-audit --no-fund --loglevel=error
# None in a copy that took every feature away already: the core's own CI.
features=$(if [ -d features ]; then ls features; fi | sed -n '/^index\.ts$/!s/\.ts$//p' | tr '\n' ' ')
echo "taking away: $features"
# shellcheck disable=SC2086
[ -z "$features" ] || npm run -s take-away -- $features
[ -z "$(ls features 2>/dev/null)" ] || { echo "features/ is not empty after taking every feature away" >&2; exit 1; }
npm run -s manifest
npm run -s transcripts
log=$(mktemp)
npm test >"$log" 2>&1 || { cat "$log"; exit 1; }
echo "the core's npm test: $(tail -n 1 "$log")"
npm run -s rename -- --group teams.example.org --kind Team
# A ConfigMap needs no field the scaffold leaves to fill, so the feature
# passes as new-feature writes it.
npm run -s new-feature -- journal --child v1/ConfigMap
# A person writes each sentence new-feature leaves to fill; here they keep its words.
# (The marker is spelled in two quoted halves so that this line is not one to fill.)
grep -rlF '(FILL'' IN ' --exclude-dir=node_modules --exclude-dir=.cache --exclude=new-feature.ts --exclude=new-feature.test.ts . | xargs -r sed -i 's/(FILL'' IN /(/g'
npm run -s fixtures -- --from-code journal-sync '{"journal":"for the e2e"}'
npm run -s manifest
npm run -s transcripts
npm test >"$log" 2>&1 || { cat "$log"; exit 1; }
echo "renamed to Team, with a feature of its own, npm test: $(tail -n 1 "$log")"
LOCAL_CONTROL_PLANE=$plane npm run -s test:e2e:local
