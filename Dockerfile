# berth as a container image: a static binary on an empty base.
# Build: docker build -t berth .
# Run:   docker run -d --privileged --net=host --pid=host \
#          -v /var/run/docker.sock:/var/run/docker.sock \
#          -v /etc/berth:/etc/berth -v /var/lib/berth:/var/lib/berth berth
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/berth .

FROM scratch
# CA certificates for https:// sources and registries.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/berth /berth
ENTRYPOINT ["/berth"]
CMD ["run"]
