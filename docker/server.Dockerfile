# Muninn server image: API and workers (override the command with --role api|worker to split them).
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY admin-ui/package.json ./admin-ui/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY server ./server
COPY jobs ./jobs
COPY scripts ./scripts
COPY admin-ui ./admin-ui
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production MUNINN_DATA_DIR=/data PORT=4000
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/admin-ui/dist ./admin-ui/dist
COPY admin-ui/package.json ./admin-ui/
COPY package.json ./
COPY bin ./bin
COPY schema ./schema
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
EXPOSE 4000
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
USER node
ENTRYPOINT ["node", "bin/muninn.js"]
CMD ["serve", "--role", "all"]
