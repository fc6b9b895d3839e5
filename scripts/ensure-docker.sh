#!/usr/bin/env bash
# Makes sure a Docker engine answers on /var/run/docker.sock: installs
# Debian's docker.io when dockerd is absent and starts dockerd when it is not
# running. Needs root (or sudo) on a Debian machine.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

ping_docker() {
	curl -fsS --max-time 3 --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null 2>&1
}

if ping_docker; then
	exit 0
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
	echo "ensure-docker: installing docker.io from Debian" >&2
	$SUDO apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q docker.io curl >/dev/null
fi

if ! ping_docker; then
	echo "ensure-docker: starting dockerd (log: /tmp/berth-dockerd.log)" >&2
	$SUDO sh -c 'nohup dockerd >/tmp/berth-dockerd.log 2>&1 &'
	for _ in $(seq 1 120); do
		if ping_docker; then break; fi
		sleep 0.5
	done
fi

if ! ping_docker; then
	echo "ensure-docker: dockerd did not come up; last log lines:" >&2
	tail -n 30 /tmp/berth-dockerd.log >&2 || true
	exit 1
fi
echo "ensure-docker: Docker engine is up" >&2
