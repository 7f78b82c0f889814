# A minimal image holding only the static musl `rcon` binary, for `docker exec` / `docker run`
# next to a game server and Kubernetes sidecars:
#   docker build --build-arg RCON_BIN=path/to/static/rcon \
#     --build-arg RCON_MGMT_BIN=path/to/static/rcon-mgmt -t rconsole .
# (without them: bin/amd64/ or bin/arm64/ by the platform, as release.yml lays out)
#   docker run --rm --network host -e RCON_PASSWORD rconsole -H 127.0.0.1 list
# The binaries must be the static build (x86_64- or aarch64-unknown-linux-musl, as
# .ci/cross.sh and .github/workflows/release.yml make them, linked by .ci/musl/cc for x86_64):
# there is no libc in the image.
# No shell either, so password_command and --proxy-command are not available inside it; pass
# the password with RCON_PASSWORD or RCON_PASSWORD_FILE (a mounted secret).
FROM scratch
ARG TARGETARCH
ARG RCON_BIN=bin/${TARGETARCH}/rcon
ARG RCON_MGMT_BIN=bin/${TARGETARCH}/rcon-mgmt
COPY ${RCON_BIN} /rcon
# `rcon --mgmt` runs the rcon-mgmt next to rcon.
COPY ${RCON_MGMT_BIN} /rcon-mgmt
COPY LICENSE-MIT LICENSE-APACHE /licenses/
# Data (history, learned servers) and config go under /data unless mounted elsewhere.
ENV RCON_DATA_DIR=/data RCON_CONFIG_DIR=/config NO_COLOR=1
USER 65534:65534
ENTRYPOINT ["/rcon"]
CMD ["--help"]
