# context-guru: ONE image for the gateway, the admin API and the migration Job; the Helm chart
# picks the process with the container command (charts/context-guru/templates/_env.tpl):
#   gateway    node --no-memory-reducer apps/gateway/dist/main.js
#   admin      node apps/admin/dist/main.js
#   embedded   node --liftoff-only --max-semi-space-size=8 --no-memory-reducer apps/embedded/dist/main.js
#              (gateway + admin in one process, the default CMD, run as `npm start` runs it)
#   migration  node libs/storage/dist/sql/migrate-cli.js
# node runs as PID 1 in exec form; every entry handles SIGTERM itself (PID 1 gets no default
# handler), drains and exits 0. Runs as the image's non-root `node` user (uid 1000) and needs
# no writable path but /tmp, so the chart mounts the root filesystem read-only.
# The chart test stages the files this last stage copies and runs the chart's commands from them
# (test/int/chart/chart-wiring.test.ts): edit the COPY lines and that test follows.
# scripts/rehearse-image.sh performs these stages by hand (no engine here): keep it in step.

# --- build: every dependency, compile TypeScript ----------------------------------------------
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.build.json ./
COPY apps/gateway/package.json apps/gateway/
COPY apps/admin/package.json apps/admin/
COPY apps/embedded/package.json apps/embedded/
COPY libs/components/package.json libs/components/
COPY libs/dsl/package.json libs/dsl/
COPY libs/storage/package.json libs/storage/
COPY libs/engine/package.json libs/engine/
RUN npm ci --no-audit --no-fund
COPY apps apps
COPY libs libs
RUN npm run build

# --- deps: production dependencies only ----------------------------------------------------------
FROM node:20.20.2-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps/gateway/package.json apps/gateway/
COPY apps/admin/package.json apps/admin/
COPY apps/embedded/package.json apps/embedded/
COPY libs/components/package.json libs/components/
COPY libs/dsl/package.json libs/dsl/
COPY libs/storage/package.json libs/storage/
COPY libs/engine/package.json libs/engine/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime: compiled code, production node_modules, migrations, builtin filters -------------------
FROM node:20.20.2-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/tmp/context-guru REQUIRE_TENANT_KEY=true
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/libs/components/package.json ./libs/components/package.json
COPY --from=build /app/libs/components/dist ./libs/components/dist
COPY --from=build /app/libs/dsl/package.json ./libs/dsl/package.json
COPY --from=build /app/libs/dsl/dist ./libs/dsl/dist
COPY --from=build /app/libs/dsl/builtins ./libs/dsl/builtins
COPY --from=build /app/libs/storage/package.json ./libs/storage/package.json
COPY --from=build /app/libs/storage/dist ./libs/storage/dist
COPY --from=build /app/libs/engine/package.json ./libs/engine/package.json
COPY --from=build /app/libs/engine/dist ./libs/engine/dist
COPY --from=build /app/apps/gateway/package.json ./apps/gateway/package.json
COPY --from=build /app/apps/gateway/dist ./apps/gateway/dist
COPY --from=build /app/apps/admin/package.json ./apps/admin/package.json
COPY --from=build /app/apps/admin/dist ./apps/admin/dist
COPY --from=build /app/apps/admin/ui ./apps/admin/ui
COPY --from=build /app/apps/embedded/package.json ./apps/embedded/package.json
COPY --from=build /app/apps/embedded/dist ./apps/embedded/dist
COPY migrations ./migrations
USER node
EXPOSE 4000 4001
# --liftoff-only: PGlite's WASM stays on V8's baseline compiler. TurboFan's recompiles of its hot
# functions left ≈ 60 MB in the compiler threads' malloc arenas that the process never gave back
# (bench/README.md, memory); its SQL is a small share of a request's CPU. --max-semi-space-size=8:
# the young generation at half its default ceiling, 10-23 MB less at peak under 32 x 1 MB requests,
# for more frequent scavenges (the laptop default serves a few agents, not a pool). Same flags as
# `npm start`.
CMD ["node", "--liftoff-only", "--max-semi-space-size=8", "--no-memory-reducer", "apps/embedded/dist/main.js"]
