# ebb: one image for every process (`ebb watcher|worker|daemon`).
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# `npm install --no-save` from the lockfile, as `make deps` does: `npm ci` refuses this lockfile (README).
RUN npm install --no-save --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
USER 1000
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
