#!/usr/bin/env bash
# Makes sure what berth and its tests need is here: a Docker engine answering
# on /var/run/docker.sock (Debian's docker.io, dockerd started when not
# running) and the etcd server binary (Debian's etcd-server; tests start
# their own etcd) and Prometheus with promtool (Debian's prometheus), and
# qemu's user-mode emulators (qemu-user-static), with which the tests run the
# pause program of each architecture, not only this machine's.
# Needs root (or sudo) on a Debian machine.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

ping_docker() {
	curl -fsS --max-time 3 --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null 2>&1
}

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v qemu-aarch64-static >/dev/null 2>&1 || missing+=(qemu-user-static)
if [ "${#missing[@]}" -gt 0 ]; then
	echo "ensure-deps: installing ${missing[*]} from Debian" >&2
	$SUDO apt-get update -q >/dev/null
	# The packages' own services (etcd, prometheus, docker) are not wanted:
	# tests start their own etcd and Prometheus on loopback ports, and this
	# script starts dockerd below. Debian's policy-rc.d (exit 101) keeps
	# their postinst scripts from starting them; an existing policy is left
	# alone, and nothing already running on the machine is touched.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		$SUDO sh -c "printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy"
		trap '$SUDO rm -f "$policy"' EXIT
	fi
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" >/dev/null
	if [ -n "$policy" ]; then $SUDO rm -f "$policy"; trap - EXIT; fi
fi

if ! ping_docker; then
	echo "ensure-deps: starting dockerd (log: /tmp/berth-dockerd.log)" >&2
	$SUDO sh -c 'nohup dockerd >/tmp/berth-dockerd.log 2>&1 &'
	for _ in $(seq 1 120); do
		if ping_docker; then break; fi
		sleep 0.5
	done
fi

if ! ping_docker; then
	echo "ensure-deps: dockerd did not come up; last log lines:" >&2
	tail -n 30 /tmp/berth-dockerd.log >&2 || true
	exit 1
fi
echo "ensure-deps: Docker engine is up" >&2
