#!/bin/sh
# Make the files docker-compose.yml mounts as secrets (0600, never committed). Existing files
# are kept, so running it again rotates nothing. With KUBECONFIG set, the cluster's kubeconfig
# is copied too, for a real site (docker-compose.yml's `lab` service needs none).
set -eu
cd "$(dirname "$0")/secrets"
umask 077

random() { python3 -c "import secrets; print(secrets.token_urlsafe(32))"; }

[ -f postgres_password ] || random > postgres_password
if [ ! -f receiver_secrets.json ]; then
  python3 -c 'import base64, json, os; print(json.dumps(["whsec_" + base64.b64encode(os.urandom(32)).decode()]))' \
    > receiver_secrets.json
fi
if [ ! -f api_tokens.json ]; then
  printf '{"%s": "operator", "%s": "upgrade-controller"}\n' "$(random)" "$(random)" > api_tokens.json
fi
if [ ! -f kubeconfig ] && [ -n "${KUBECONFIG:-}" ]; then
  cp "$KUBECONFIG" kubeconfig
fi
echo "secrets ready in $(pwd)"
