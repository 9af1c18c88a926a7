# svc gateway image: build stage (all dependencies, TypeScript -> dist), production dependencies
# stage (npm ci --omit=dev), and a small runtime stage running as the non-root `node` user.
# test/deployment/install-steps.test.ts (run by `npm test`, so in CI) reads this file, copies exactly
# each stage's COPY sources into a clean folder, runs the stages' install and build steps there and
# starts the result with the ENTRYPOINT/CMD and HEALTHCHECK below (no Docker needed): a COPY missing
# here fails that test. The base image is pinned by digest (docs/decisions.md: how to update it).
FROM node:20-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0 AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary is reachable.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# Everything `npm run build` reads: tsc (tsconfig*.json, src/), then scripts/build-console.mjs,
# which compiles console/ into dist/console (served by the gateway at /console).
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/build-console.mjs ./scripts/build-console.mjs
COPY console ./console
RUN npm run build

FROM node:20-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0 AS production-dependencies
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0
ENV NODE_ENV=production \
    SVC_LISTEN__HOST=0.0.0.0 \
    SVC_LISTEN__PORT=8080
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
# The quick start keeps its SQLite file and key files in data/ (mount a volume there to keep them).
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.SVC_LISTEN__PORT||8080)+'/readyz').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["serve", "--config", "config/quickstart.yaml"]
