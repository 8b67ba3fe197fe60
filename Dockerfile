# syntax=docker/dockerfile:1
# tap-report-dump: an Airbyte source image (ENTRYPOINT) that also carries the Singer tap
# (docker run --entrypoint tap-report-dump ...).

FROM node:26-trixie-slim AS build
WORKDIR /build
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY schemas ./schemas
COPY src ./src
COPY sandbox ./sandbox
COPY bench ./bench
# npm prune leaves the scope folders of the dev dependencies behind, empty.
RUN npm run build && npm prune --omit=dev && find node_modules -type d -empty -delete

FROM node:26-trixie-slim
ENV NODE_ENV=production
# As the bins' shebang sets it: two malloc arenas keep the peak RSS of a sync lower at the same speed (README, Performance).
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /build/package.json ./package.json
COPY --from=build /build/node_modules ./node_modules
COPY --from=build /build/schemas ./schemas
COPY --from=build /build/dist/src ./dist/src
COPY --from=build /build/dist/sandbox ./dist/sandbox
# The MIT licence asks for its notice in every copy.
COPY LICENSE ./LICENSE
# The change store's default folder ($XDG_STATE_HOME/tap-report-dump), made here and owned by node: a new named
# volume mounted on it starts as a copy of it, owner included (on rootful Docker it would be root-owned otherwise).
ENV XDG_STATE_HOME=/var/lib
RUN ln -s /app/dist/src/bin/tap.js /usr/local/bin/tap-report-dump \
 && ln -s /app/dist/src/bin/source.js /usr/local/bin/source-report-dump \
 && chmod +x /app/dist/src/bin/tap.js /app/dist/src/bin/source.js \
 && mkdir -p /var/lib/tap-report-dump && chown node:node /var/lib/tap-report-dump && chmod 700 /var/lib/tap-report-dump
# Declared after the folder is made (what a RUN changes in a declared volume is lost); a run without -v gets an anonymous one.
VOLUME /var/lib/tap-report-dump
USER node
ENV AIRBYTE_ENTRYPOINT="node --max-semi-space-size=1 /app/dist/src/bin/source.js"
ENTRYPOINT ["node", "--max-semi-space-size=1", "/app/dist/src/bin/source.js"]
# The versions equal package.json's (test/e2e/dockerfile.test.ts, and .ci/image on the built image).
LABEL io.airbyte.name="tap-report-dump/source-report-dump" \
      io.airbyte.version="0.1.0" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.title="tap-report-dump" \
      org.opencontainers.image.description="Singer tap and Airbyte source for the report data dump API"
