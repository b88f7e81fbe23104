"""The alerts of deploy/kubernetes/base/prometheus-rules.yaml, unit-tested with promtool: each
fires on the series that mean trouble and stays quiet otherwise (alerts.promtool.yaml). promtool
is Debian's prometheus package (`make promtool`); without it these tests are skipped."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from runtime.settings import REPO_ROOT

RULES = REPO_ROOT / "deploy" / "kubernetes" / "base" / "prometheus-rules.yaml"
UNIT_TESTS = Path(__file__).with_name("alerts.promtool.yaml")


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool not found: `make promtool` installs Debian's prometheus package")
    return found


def rule_file(directory: Path) -> Path:
    """The PrometheusRule's groups as a Prometheus rule file, each alert's annotations cut to
    its summary (the runbook link is the same for all, checked in test_metrics.py)."""
    groups = yaml.safe_load(RULES.read_text())["spec"]["groups"]
    for group in groups:
        for rule in group["rules"]:
            rule["annotations"] = {"summary": rule["annotations"]["summary"]}
    path = directory / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": groups}))
    return path


def run(*args: str) -> str:
    done = subprocess.run([promtool(), *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_rules_are_valid_prometheus_rules(tmp_path: Path) -> None:
    run("check", "rules", str(rule_file(tmp_path)))


def test_each_alert_fires_on_trouble_and_stays_quiet_otherwise(tmp_path: Path) -> None:
    rule_file(tmp_path)
    shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name)
    run("test", "rules", str(tmp_path / UNIT_TESTS.name))


def test_every_alert_has_a_case_that_fires() -> None:
    alerts = {
        rule["alert"]
        for group in yaml.safe_load(RULES.read_text())["spec"]["groups"]
        for rule in group["rules"]
    }
    firing = {
        case["alertname"]
        for test in yaml.safe_load(UNIT_TESTS.read_text())["tests"]
        for case in test["alert_rule_test"]
        if case["exp_alerts"]
    }
    assert firing == alerts, sorted(alerts ^ firing)
