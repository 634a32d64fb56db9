#!/bin/sh
# Container health check: liveness of the Sluice process, i.e. GET /health on its admin port answers 200.
#
# SLUICE_HEALTH_URL overrides the URL. Without it the default admin ports of every role are tried on loopback:
# 9325 (dev, frontend), 9425 (metadata), 9525 (backend); every role binds them to its --host, so run them with
# --host 0.0.0.0 in a container (a backend advertises its own name with --advertise-host).
set -u

if [ -n "${SLUICE_HEALTH_URL:-}" ]; then
  exec curl -fsS -m 3 -o /dev/null "$SLUICE_HEALTH_URL"
fi
for port in 9325 9425 9525; do
  if curl -fsS -m 3 -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; then
    exit 0
  fi
done
echo "no Sluice admin endpoint answers /health on 127.0.0.1:9325/9425/9525 (set SLUICE_HEALTH_URL)" >&2
exit 1
