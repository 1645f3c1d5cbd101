# ebb's images, from one Dockerfile:
#   docker build -t ebb .                          the watcher, the worker and the CLI (`ebb watcher|worker|queue|...`)
#   docker build --target daemon -t ebb-daemon .   the node daemon alone (`ebb daemon`), which runs on every
#                                                  node next to the container runtime's socket: no Redis client,
#                                                  no Bull Board, no kubeconfig credential plugins
# The base is pinned by digest (the tag is for people); update both together.
ARG NODE_IMAGE=node:24-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Exactly the lockfile's packages (`npm install --no-save`, as `make deps` does: `npm ci` refuses this lockfile,
# README), with no package's install script run. None is needed: protobufjs's postinstall only prints a
# version-scheme warning, and msgpackr-extract's looks for the prebuilt addon that its platform package
# (@msgpackr-extract/msgpackr-extract-linux-*) already holds. Should a package ever need its script, allow that
# one by name after this line: `RUN npm rebuild --ignore-scripts=false <name>`.
RUN npm install --no-save --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# The daemon's packages: the production set without the packages only the watcher, the worker or the CLI's
# kubeconfig plugins load (pruned offline, from what is already installed). protobufjs stays, as a package of
# @grpc/proto-loader (the CRI client); the daemon itself reads no protobuf from the apiserver.
FROM build AS daemon-deps
RUN npm pkg delete dependencies.@bull-board/api dependencies.@bull-board/hono dependencies.@hono/node-server \
      dependencies.hono dependencies.bullmq dependencies.ioredis dependencies.fast-json-patch \
      dependencies.@kubernetes/client-node dependencies.protobufjs dependencies.uplot \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund --offline \
  && find node_modules -mindepth 1 -maxdepth 1 -type d -empty -delete

FROM ${NODE_IMAGE} AS daemon
WORKDIR /app
ENV NODE_ENV=production
COPY --from=daemon-deps /src/package.json ./
COPY --from=daemon-deps /src/node_modules ./node_modules
# Only the code `ebb daemon` loads: the CLI entry, the API types, the CRI client, the daemon, the kube client.
COPY --from=build /src/dist/cli ./dist/cli
COPY --from=build /src/dist/api ./dist/api
COPY --from=build /src/dist/common ./dist/common
COPY --from=build /src/dist/cri ./dist/cri
COPY --from=build /src/dist/daemon ./dist/daemon
COPY --from=build /src/dist/kube ./dist/kube
USER 1000
ENTRYPOINT ["node", "/app/dist/cli/main.js"]

# The default target (last stage): watcher, worker and CLI.
FROM ${NODE_IMAGE} AS ebb
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
USER 1000
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
