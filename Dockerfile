# The fastbioner CLI for batch tagging (Slurm via Apptainer/Singularity, Kubernetes): Node only,
# no Electron. Build: docker build -t fastbioner-cli .   Run: docker run fastbioner-cli tag --help
FROM node:20-bookworm-slim
WORKDIR /app
ENV ELECTRON_SKIP_BINARY_DOWNLOAD=1 \
    ONNXRUNTIME_NODE_INSTALL=skip \
    NODE_ENV=production
COPY package.json package-lock.json ./
# Dev dependencies are kept: the CLI runs its TypeScript sources through tsx (bin/fastbioner.js).
# The optional tfjs-node packages may fail to fetch their binaries; onnxruntime-node is the engine.
RUN npm ci --no-audit --no-fund --include=dev && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY tsconfig.json ./
ENTRYPOINT ["node", "/app/bin/fastbioner.js"]
