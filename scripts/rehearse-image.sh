#!/usr/bin/env bash
# Rehearses the Dockerfile without a container engine (none exists on the development machines):
# its three stages by hand in a scratch folder — build (npm ci + npm run build from the sources the
# build stage copies), deps (npm ci --omit=dev from the package files alone) and the runtime tree
# the last stage copies (read from the Dockerfile) — then starts the migration, the gateway and the
# admin from that tree against DATABASE_URL / REDIS_URL and stops them with SIGTERM. The build and
# deps stages are mirrored by hand: change them together. Takes minutes (two npm ci); not part of npm test.
set -euo pipefail
R="$(cd "$(dirname "$0")/.." && pwd)"
: "${DATABASE_URL:?set DATABASE_URL}" "${REDIS_URL:?set REDIS_URL}"
W=$(mktemp -d /tmp/cg-image-rehearsal.XXXXXX)
trap 'rm -rf "$W"' EXIT
WS="apps/gateway apps/admin apps/embedded libs/components libs/dsl libs/storage libs/engine"
mkdir -p "$W/build" "$W/deps" "$W/app"
echo "== build stage"
cp "$R"/package.json "$R"/package-lock.json "$R"/tsconfig.base.json "$R"/tsconfig.build.json "$W/build/"
for w in $WS; do mkdir -p "$W/build/$w" "$W/deps/$w"; cp "$R/$w/package.json" "$W/build/$w/"; cp "$R/$w/package.json" "$W/deps/$w/"; done
(cd "$W/build" && npm ci --no-audit --no-fund >/dev/null)
for d in apps libs; do (cd "$R" && tar cf - --exclude=node_modules --exclude=dist --exclude=data "$d") | (cd "$W/build" && tar xf -); done
(cd "$W/build" && npm run build >/dev/null)
echo "== deps stage"
cp "$R"/package.json "$R"/package-lock.json "$W/deps/"
(cd "$W/deps" && npm ci --omit=dev --no-audit --no-fund >/dev/null)
echo "== runtime stage (the Dockerfile's own COPY lines)"
# COPY --from=<stage> /app/<src> ./<dest>  and  COPY <context src> ./<dest>, after the last FROM.
awk '/^FROM /{n++} {print n"\t"$0}' "$R/Dockerfile" | awk -F'\t' -v last="$(grep -c '^FROM ' "$R/Dockerfile")" '$1==last && $2 ~ /^COPY /{print $2}' |
while read -r _ a b c; do
  if [[ "$a" == --from=* ]]; then stage=${a#--from=}; src="$W/$stage/${b#/app/}"; dest=$c; else src="$R/$a"; dest=$b; fi
  mkdir -p "$(dirname "$W/app/$dest")"
  cp -a "$src" "$W/app/$dest"
done
echo "runtime tree: $(du -sh "$W/app" | cut -f1), $(ls "$W/app/node_modules" | wc -l) top-level packages"
cd "$W/app"
base=(env -i PATH="$PATH" NODE_ENV=production HOST=127.0.0.1 DATA_DIR="$W/data" DATABASE_URL="$DATABASE_URL" REDIS_URL="$REDIS_URL"
  HOT_STORE=redis DURABLE_STORE=postgres MIGRATE_ON_BOOT=false REDIS_PREFIX="cgrehearse$$:")
"${base[@]}" node libs/storage/dist/sql/migrate-cli.js
free() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
gp=$(free); ap=$(free)
"${base[@]}" PORT="$gp" node apps/gateway/dist/main.js >"$W/gateway.log" 2>&1 & gw=$!
"${base[@]}" ADMIN_PORT="$ap" ADMIN_TOKEN=rehearsal-admin-token-0123456789 node apps/admin/dist/main.js >"$W/admin.log" 2>&1 & ad=$!
ready() { curl -sf "http://127.0.0.1:$1/readyz" >/dev/null; }
for _ in $(seq 1 150); do ready "$gp" && ready "$ap" && break; sleep 0.3; done
echo "gateway /readyz: $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$gp/readyz")"
echo "admin /readyz: $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ap/readyz")"
kill -TERM "$gw" "$ad"
rc=0
wait "$gw" || rc=$?; echo "gateway exited $rc"
rc=0
wait "$ad" || rc=$?; echo "admin exited $rc"
