#!/bin/sh
# One-shot: wait for the server, create the namespace and virtflow's search attributes.
# Safe to run again: what exists already is left alone.
set -eu
: "${TEMPORAL_ADDRESS:?}"
NAMESPACE="${NAMESPACE:-default}"
RETENTION="${NAMESPACE_RETENTION:-7d}"

until temporal operator cluster health | grep -q SERVING; do
  echo "waiting for Temporal at $TEMPORAL_ADDRESS"
  sleep 2
done

temporal operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1 \
  || temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION"

for name in VirtflowCluster VirtflowPool VirtflowHost VirtflowPhase; do
  temporal operator search-attribute list --namespace "$NAMESPACE" | grep -qw "$name" \
    || temporal operator search-attribute create --namespace "$NAMESPACE" \
      --name "$name" --type Keyword
done
echo "namespace $NAMESPACE ready with the virtflow search attributes"
