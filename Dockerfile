# svc gateway image: build stage (all dependencies, TypeScript -> dist), production dependencies
# stage (npm ci --omit=dev), and a small runtime stage running as the non-root `node` user.
# test/deployment/install-steps.test.ts runs these same steps in a clean folder (no Docker needed),
# including the HEALTHCHECK command and the ENTRYPOINT/CMD below, so they cannot rot.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary is reachable.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim AS production-dependencies
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
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
