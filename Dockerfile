# The rcon-console image: FROM scratch with the static musl `rcon`, a CA bundle
# and a data directory, for `docker exec` / `docker run` next to a game server and Kubernetes
# sidecars:
#   docker run --rm --network host -e RCON_PASSWORD ghcr.io/OWNER/rcon-console -H 127.0.0.1 list
# Built by packaging/image.sh (buildah; the release workflow and .ci/release-check.sh run it),
# which lays out its build context: bin/amd64/ and bin/arm64/ (the static binaries of
# x86_64- and aarch64-unknown-linux-musl, as .ci/cross.sh and release.yml build them),
# ca-certificates.crt and an empty data/. The same context builds with `docker build`.
# No libc and no shell: password_command and --proxy-command cannot run inside it; pass the
# password with RCON_PASSWORD or RCON_PASSWORD_FILE (a mounted secret).
FROM scratch
ARG TARGETARCH
LABEL org.opencontainers.image.title="rcon-console" \
      org.opencontainers.image.description="rcon: a fast, correct RCON client for Minecraft and other game servers" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0"
COPY bin/${TARGETARCH}/rcon /rcon
COPY LICENSE-MIT LICENSE-APACHE /licenses/
# The trust store for `rcon --mgmt wss://...`: the builder's Mozilla bundle from Debian's or
# Ubuntu's ca-certificates package (packaging/image.sh copies /etc/ssl/certs/ca-certificates.crt
# into the context), at the path rustls-native-certs looks for on Linux.
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# History and learned servers are kept here (a volume keeps them across runs), so it belongs to
# the user rcon runs as; the config is read from /config when one is mounted.
COPY --chown=65534:65534 data/ /data/
ENV RCON_DATA_DIR=/data RCON_CONFIG_DIR=/config NO_COLOR=1
USER 65534:65534
ENTRYPOINT ["/rcon"]
CMD ["--help"]
