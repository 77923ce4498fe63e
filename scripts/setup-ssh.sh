#!/usr/bin/env bash
# OpenSSH server + client (and rsync) for the remote-profiling tests (tests/remote start a real sshd on 127.0.0.1).
# Idempotent: installs only what is missing. Needs root (CI runs as root); otherwise it says so and the
# tests that need sshd skip with that reason.
set -euo pipefail
if [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null && command -v scp >/dev/null && command -v ssh-keygen >/dev/null \
   && command -v rsync >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-ssh: not root; openssh-server/openssh-client/rsync not installed (tests/remote will skip)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends openssh-server openssh-client rsync >/dev/null \
  || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends openssh-server openssh-client rsync >/dev/null; }
