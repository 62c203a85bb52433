# One image for the web, worker and beat tiers (docker-compose.yml picks the command).

# The dashboard's assets, when the frontend has a build; an empty dist otherwise.
FROM node:22-slim AS frontend
WORKDIR /frontend
COPY frontend/ ./
RUN if [ -f package.json ]; then \
      (if [ -f package-lock.json ]; then npm ci; else npm install; fi) && npm run build; \
    fi && mkdir -p dist

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    MEMORY_DATA_DIR=/data
WORKDIR /app

# torch from the CPU index first: the default wheel drags in several GB of CUDA libraries.
COPY requirements.txt ./
RUN pip install --index-url https://download.pytorch.org/whl/cpu "$(grep -E '^torch==' requirements.txt)" \
 && pip install -r requirements.txt

COPY . .
COPY --from=frontend /frontend/dist ./frontend/dist
RUN useradd --create-home --uid 1000 memory && mkdir -p /data && chown memory:memory /data
USER memory

EXPOSE 8000
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000", "--no-demo"]
