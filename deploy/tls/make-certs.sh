#!/usr/bin/env bash
# Makes a private CA and certificates for Sluice's Raft mutual TLS (and, if wanted, the SQS and admin ports).
#
#   deploy/tls/make-certs.sh DIR NAME=SAN[,SAN...] [NAME=SAN[,SAN...] ...]
#
# DIR/ca.pem and DIR/ca-key.pem: the CA, made on the first run and reused by later ones (so certificates added later
# are trusted by processes already running). For each NAME: DIR/NAME.pem (certificate) and DIR/NAME-key.pem
# (unencrypted PKCS#8 key), valid for client and server use, for the subject alternative names given: the addresses
# its peers dial it at, e.g. IP:127.0.0.1 or DNS:sluice-backend-0.sluice-backend. An existing NAME is kept as it is.
# Keys are readable by their owner only; keep ca-key.pem off the machines that run Sluice.
#
#   sluice.cluster.tls.cert-file=DIR/NAME.pem  sluice.cluster.tls.key-file=DIR/NAME-key.pem
#   sluice.cluster.tls.ca-file=DIR/ca.pem
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 DIR NAME=SAN[,SAN...] ..." >&2
  exit 2
fi
dir=$1; shift
umask 077
mkdir -p "$dir"
days=${SLUICE_CERT_DAYS:-825}
if [ ! -f "$dir/ca.pem" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -keyout "$dir/ca-key.pem" \
    -out "$dir/ca.pem" -days "$((days + 365))" -subj "/CN=Sluice cluster CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi
for spec in "$@"; do
  name=${spec%%=*}
  sans=${spec#*=}
  if [ -z "$name" ] || [ "$name" = "$spec" ] || [ -z "$sans" ]; then
    echo "bad certificate spec '$spec' (want NAME=SAN[,SAN...], e.g. backend-1=IP:127.0.0.1)" >&2
    exit 2
  fi
  [ -f "$dir/$name.pem" ] && continue
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -keyout "$dir/$name-key.pem" \
    -subj "/CN=$name" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -CAcreateserial \
    -days "$days" -out "$dir/$name.pem" -extfile <(printf '%s\n' \
      "subjectAltName=$sans" "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth,clientAuth") 2>/dev/null
  rm -f "$dir/$name.csr"
done
