#!/usr/bin/env bash
# Makes the Secret sluice-cluster-tls that every Sluice pod mounts for Raft mutual TLS, and prints it as YAML:
#
#   deploy/k8s/make-tls-secret.sh DIR [NAMESPACE] | kubectl apply -f -
#
# DIR keeps the CA (ca.pem, ca-key.pem) and the certificates (deploy/tls/make-certs.sh): keep it somewhere safe and
# off the cluster; run the script again with the same DIR to reprint the Secret (certificates are made once). One
# certificate per role, for every pod of the role's headless Service (*.sluice-metadata.<namespace>.svc.<domain>,
# *.sluice-backend...; the frontends only dial; node: the combined topology's pods, deploy/k8s/combined). NAMESPACE defaults to sluice, the cluster domain to cluster.local
# (SLUICE_CLUSTER_DOMAIN).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 DIR [NAMESPACE]" >&2
  exit 2
fi
dir=$1
ns=${2:-sluice}
domain=${SLUICE_CLUSTER_DOMAIN:-cluster.local}
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/deploy/tls/make-certs.sh" "$dir" \
  "metadata=DNS:*.sluice-metadata.$ns.svc.$domain,DNS:*.sluice-metadata.$ns.svc,DNS:*.sluice-metadata" \
  "backend=DNS:*.sluice-backend.$ns.svc.$domain,DNS:*.sluice-backend.$ns.svc,DNS:*.sluice-backend" \
  "frontend=DNS:sluice-frontend.$ns.svc.$domain" \
  "node=DNS:*.sluice-node.$ns.svc.$domain,DNS:*.sluice-node.$ns.svc,DNS:*.sluice-node"
cat <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: sluice-cluster-tls
  namespace: $ns
  labels:
    app.kubernetes.io/name: sluice
    app.kubernetes.io/part-of: sluice
type: Opaque
data:
YAML
for f in ca.pem metadata.pem metadata-key.pem backend.pem backend-key.pem frontend.pem frontend-key.pem node.pem \
    node-key.pem; do
  echo "  $f: $(base64 -w0 < "$dir/$f")"
done
