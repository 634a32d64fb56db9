#!/bin/sh
# Container entry point: `java $JAVA_OPTS -jar /opt/sluice/sluice.jar "$@"`, the arguments being the role and its
# flags (`metadata ...`, `backend ...`, `frontend ...`, `dev ...`, `admin ...`).
#
# SLUICE_WAIT_FOR_HOST (optional): a host name to wait for (up to SLUICE_WAIT_FOR_HOST_SECONDS, default 120)
# before starting. A backend advertises its --advertise-host name to the cluster; on Kubernetes that is the pod's DNS
# record in the headless Service, which appears a moment after the pod got its address.
set -eu

if [ -n "${SLUICE_WAIT_FOR_HOST:-}" ]; then
  waited=0
  limit=${SLUICE_WAIT_FOR_HOST_SECONDS:-120}
  until getent hosts "$SLUICE_WAIT_FOR_HOST" >/dev/null 2>&1; do
    if [ "$waited" -ge "$limit" ]; then
      echo "entrypoint: $SLUICE_WAIT_FOR_HOST does not resolve after ${limit}s; starting anyway" >&2
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
fi

# JAVA_OPTS is split on spaces on purpose (several flags in one variable).
# shellcheck disable=SC2086
# files and folders the process creates are its own only (message bodies, key secrets; docs/security.md)
umask 077
exec java $JAVA_OPTS -jar /opt/sluice/sluice.jar "$@"
