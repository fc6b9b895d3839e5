# berth as a container image: the static binary built on this host, on an
# empty base. Needs Go and the Docker engine, no registry. Build, from the
# repository root:
#
#   CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/berth .
#   cp /etc/ssl/certs/ca-certificates.crt bin/
#   docker build -t berth .
#
# "COPY failed: file not found in build context" names the step skipped:
# bin/berth is the go build, bin/ca-certificates.crt the host's CA bundle
# (https:// sources and etcd endpoints; on Fedora/RHEL it is
# /etc/pki/tls/certs/ca-bundle.crt). .dockerignore sends only these two.
# With a registry, deploy/Dockerfile.registry builds inside Docker instead.
#
# Run (docs/deploy.md):
#
#   docker run -d --privileged --net=host --pid=host \
#     -v /var/run/docker.sock:/var/run/docker.sock \
#     -v /etc/berth:/etc/berth -v /var/lib/berth:/var/lib/berth:rshared berth
#
# Same-path rule: root_dir (/var/lib/berth, holding the pods' directories)
# must be mounted at the same path inside and outside the container, and
# rshared; so must host paths of typed or subPath hostPath volumes: the bind
# mounts berth asks the engine for name host paths.
FROM scratch
COPY bin/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY bin/berth /berth
ENTRYPOINT ["/berth"]
CMD ["run"]
