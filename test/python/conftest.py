"""Shared setup of the helper's Python tests: the helper's modules import as they do in the helper,
and `run_helper` runs the real helper program with one op patched in, over its real pipes.
A test skips when something it needs is missing, and says why; under CI=true that skip fails instead."""
import json
import os
import subprocess
import sys

import pytest

HELPER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "main", "drivers", "desktop", "helper")
HELPER_DIR = os.path.normpath(HELPER_DIR)
sys.path.insert(0, HELPER_DIR)
sys.dont_write_bytecode = True

CI = os.environ.get("CI") == "true"


def pytest_configure(config):
    # Skip reasons are printed in the summary (-rs), so no skip is silent.
    if "s" not in config.option.reportchars:
        config.option.reportchars += "s"


def _fail_skip_under_ci(report):
    if CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"{reason} (a skip fails under CI=true)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_skip_under_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_skip_under_ci(outcome.get_result())


# Runs the helper's main() with `Helper.handle` wrapped: the test's code answers the ops it names.
WRAPPER = """
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import uplink_desktop_helper as h
exec(sys.argv[2])
real = h.Helper.handle
def handle(self, op, target, args, interaction):
    if op in PATCHED:
        return PATCHED[op](self, args)
    return real(self, op, target, args, interaction)
h.Helper.handle = handle
h.main()
"""


@pytest.fixture
def run_helper():
    """run_helper(code, requests) -> (replies, stderr): `code` defines PATCHED = {op: fn(self, args)}."""

    def run(code, requests):
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        lines = "".join(json.dumps(r) + "\n" for r in requests)
        proc = subprocess.run([sys.executable, "-c", WRAPPER, HELPER_DIR, code], input=lines, capture_output=True,
                              text=True, env=env, timeout=30)
        replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        return replies, proc.stderr

    return run
