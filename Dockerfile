# context-guru image: one image, three roles (CG_ROLE=all|gateway|admin); migrations ship beside
# the built code so a Kubernetes Job can run `node libs/storage/dist/sql/migrate-cli.js`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.build.json ./
COPY apps/gateway/package.json apps/gateway/
COPY apps/admin/package.json apps/admin/
COPY libs/components/package.json libs/components/
COPY libs/dsl/package.json libs/dsl/
COPY libs/storage/package.json libs/storage/
RUN npm ci --no-audit --no-fund
COPY apps apps
COPY libs libs
COPY migrations migrations
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 4000 4001
CMD ["node", "apps/gateway/dist/main.js"]
