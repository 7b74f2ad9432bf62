# kafka-shim as a container image (docker-compose.yml builds it as the `kafka-shim` service).
#   docker build -t kafka-shim .
#   docker run -p 9092:9092 kafka-shim serve --listen 0.0.0.0:9092 --advertised-host localhost --data-dir /data
# The broker tells clients to connect to --advertised-host: it must resolve where the clients run.

# The wheel is built where a C compiler is, for kafka_codecs._walk (the record walk that validates
# every produced batch); the slim image only installs it.
FROM python:3.11 AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY shim ./shim
COPY codecs ./codecs
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels

WORKDIR /
VOLUME ["/data"]
EXPOSE 9092
# SIGTERM (docker stop) shuts the broker down cleanly.
ENTRYPOINT ["kafka-shim"]
CMD ["serve", "--listen", "0.0.0.0:9092", "--data-dir", "/data"]
