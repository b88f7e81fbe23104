"""The secrets the test suite configures, recognisable so a scan can prove none leaked.

Every test that configures a webhook secret, an API token, a GitLab token, a payload key or a
codec server token on the session's server takes it from
here; the session-end scan (tests/security/secret_scan.py) then looks for each of them in
every workflow history on the session's Temporal server and in every log line.
"""

from __future__ import annotations

import base64

_WEBHOOK_KEY = b"virtflow-test-webhook-secret-do-not-leak"
WEBHOOK_SECRET = "whsec_" + base64.b64encode(_WEBHOOK_KEY).decode()
OPERATOR_TOKEN = "vf-test-operator-token-7c1e5b2a9d"
CONTROLLER_TOKEN = "vf-test-controller-token-4f8a0e3b6c"
GITLAB_TOKEN = "glptt-vf-test-gitlab-token-0a1b2c3d"
# A payload encryption key (AES-256, base64) and a codec server token.
PAYLOAD_KEY = base64.b64encode(b"virtflow-test-payload-key-32byte").decode()
CODEC_TOKEN = "vf-test-codec-token-5d4c3b2a1f"

# What a leak would look like: the secret itself, and the raw key a webhook secret wraps.
SCANNED = {
    "webhook secret": WEBHOOK_SECRET,
    "webhook key": _WEBHOOK_KEY.decode(),
    "operator API token": OPERATOR_TOKEN,
    "controller API token": CONTROLLER_TOKEN,
    "GitLab token": GITLAB_TOKEN,
    "payload key": PAYLOAD_KEY,
    "codec server token": CODEC_TOKEN,
}
