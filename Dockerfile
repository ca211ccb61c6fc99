# Build stage: every dependency (TypeScript included), then compile src/ and workers/ to dist/.
FROM node:22-slim AS build
WORKDIR /app
# The workspace's manifest too: npm ci installs the whole workspace tree of the lockfile.
COPY package.json package-lock.json .npmrc ./
COPY clients/typescript/package.json ./clients/typescript/
# The postinstall step applies these to node_modules (patch-package): see docs/operations.md.
COPY patches ./patches
RUN npm ci --no-audit --no-fund --loglevel=warn
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY workers ./workers
# The webhook signing scheme is written once, in the partners' verification module (src/lib/webhook-signature.ts imports it).
COPY clients/typescript/src ./clients/typescript/src
RUN npm run build

# Runtime stage: production dependencies only, the compiled JavaScript (run by node itself) and the migrations.
FROM node:22-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY clients/typescript/package.json ./clients/typescript/
# The postinstall step applies these to node_modules (patch-package): see docs/operations.md.
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=warn && npm cache clean --force
COPY drizzle ./drizzle
COPY --from=build /app/dist ./dist
USER node
# One metrics port per container whatever its role: GET /metrics, and GET /healthz for the HEALTHCHECK
# (the process is up and its PostgreSQL and Redis connections work).
ENV METRICS_PORT=9464
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.METRICS_PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The default command runs every role in one process; compose runs one role per container
# (node dist/src/server.js, node dist/workers/<role>.js), and `node dist/src/cli/main.js migrate` migrates.
CMD ["node", "dist/src/main.js"]
