#!/usr/bin/env bash
# Makes a machine ready for `npm test`: the system tools the tests drive for real (Redis, PostgreSQL,
# PgBouncer, Prometheus + promtool, Chromium, unzip for helm), the services on loopback, the test database,
# helm under .tools/bin, and an up-to-date build. `npm test` runs it first (pretest) and .ci/run
# calls it too, so a fresh clone needs only `npm ci && npm test`.
#
# Missing packages are installed with apt-get when this runs as root on a Debian-like machine;
# otherwise it stops at once naming exactly what to install — a test tier is never skipped.
# Idempotent and quick when everything is present. CG_PROVISION=skip turns it off for a machine
# whose services live elsewhere (REDIS_URL / DATABASE_URL pointing at them).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '== provision: %s\n' "$*" >&2; }
fail() {
  printf 'provision: %s\n' "$*" >&2
  exit 1
}

if [ "${CG_PROVISION:-}" = skip ]; then
  log "CG_PROVISION=skip: assuming Redis, PostgreSQL, Prometheus, Chromium and helm are ready"
  exit 0
fi

REDIS_HOST=127.0.0.1 REDIS_PORT=6379
PG_ARGS=(-h 127.0.0.1 -p 5432 -U postgres)

# Debian package per missing command (chromium's binary and package share a name).
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
# redis-server also runs the Cluster and Sentinel tests (--cluster-enabled, --sentinel); redis-cli joins the cluster.
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v psql >/dev/null 2>&1 || need+=(postgresql-client)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
# The TLS store test makes a throwaway CA and server certificate (node:crypto cannot sign X.509);
# Debian's redis-server is built with TLS, and its own PostgreSQL cluster runs as the postgres user.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || need+=(prometheus)
# The PgBouncer test starts its own pooler (transaction mode) in front of the test Postgres.
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || need+=(pgbouncer)
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || need+=(chromium)

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing ${need[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    fail "the tests need these Debian packages, which are missing: ${need[*]}
  install them (sudo apt-get install ${need[*]}) and run npm test again"
  fi
fi

redis_up() { redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; }
if ! redis_up; then
  log "starting redis on $REDIS_HOST:$REDIS_PORT"
  redis-server --daemonize yes --bind "$REDIS_HOST" --port "$REDIS_PORT" --save "" --appendonly no >/dev/null
  for _ in $(seq 1 50); do redis_up && break; sleep 0.2; done
fi
redis_up || fail "redis did not answer on $REDIS_HOST:$REDIS_PORT"

pg_up() { psql "${PG_ARGS[@]}" -d postgres -tAc 'select 1' >/dev/null 2>&1; }
start_packaged_pg() {
  [ "$(id -u)" = 0 ] && ls /etc/postgresql/*/main >/dev/null 2>&1 || return 0
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do pg_up && break; sleep 0.2; done
}
# A bare machine: a throwaway trust-auth cluster on the standard port (root only: it runs as postgres).
start_throwaway_pg() {
  [ "$(id -u)" = 0 ] || return 0
  log "initialising a throwaway postgresql cluster in /tmp/cg-test-pg"
  # A packaged cluster that does not trust loopback would hold the port: stop it first.
  for v in $(ls /etc/postgresql 2>/dev/null); do
    pg_ctlcluster --skip-systemctl-redirect "$v" main stop >/dev/null 2>&1 || true
  done
  local bin data=/tmp/cg-test-pg
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  rm -rf "$data"
  install -d -o postgres -g postgres "$data"
  su postgres -c "$bin/initdb -D $data -U postgres --auth=trust -E UTF8 --locale=C.UTF-8" >/dev/null
  su postgres -c "$bin/pg_ctl -D $data -l $data/server.log -w -t 30 \
    -o '-c listen_addresses=127.0.0.1 -p 5432 -k /tmp -c fsync=off' start" >/dev/null
}
pg_up || { log "starting postgresql"; start_packaged_pg; }
pg_up || start_throwaway_pg
pg_up || fail "postgresql does not answer on 127.0.0.1:5432 as user postgres with trust auth
  start it (pg_ctlcluster <version> main start) or point DATABASE_URL at one and set CG_PROVISION=skip"
psql "${PG_ARGS[@]}" -d postgres -tAc "select 1 from pg_database where datname='test'" | grep -q 1 ||
  psql "${PG_ARGS[@]}" -d postgres -qc 'create database test'

bash scripts/fetch-helm.sh >/dev/null

# The e2e and chart tests start dist/ entry points; tsc -b only rebuilds what changed.
npm run -s build >/dev/null
