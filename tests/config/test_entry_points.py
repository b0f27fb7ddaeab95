"""Every way the service starts: configuration mistakes are one line and exit status 2, and the
development bootstrap (config/bootstrap.py) never touches a deployment's interpreter.

Each test runs the real entry point as an operator would (uvicorn, celery, manage.py, the
deeprecall console script) in a child process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_manage

PRODUCTION = {
    "DEEPRECALL_ENV": "production",
    "SECRET_KEY": "k" * 50,
    "DATABASE_URL": "postgresql://u@127.0.0.1:1/db",
    "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
    "PUBLIC_URL": "https://memory.example.com",
}


def _run(*command: str, env: dict[str, str], timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _assert_one_line(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith("deeprecall: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


# (environment, what the line must say): the mistakes of the issue, for every entry point.
MISTAKES = [
    pytest.param({"DATABASE_URL": "mysql://u@h/db"}, ("DATABASE_URL", "postgresql://"), id="database-url"),
    pytest.param({**PRODUCTION, "SECRET_KEY": ""}, ("SECRET_KEY is not set",), id="production-secret"),
    pytest.param({"REDIS_URL": "cache.internal:6379"}, ("REDIS_URL",), id="redis-url"),
    pytest.param(
        {**PRODUCTION, "CELERY_BROKER_URL": "filesystem://localhost/"},
        ("filesystem:// is for development only",),
        id="production-filesystem-broker",
    ),
]

ENTRY_POINTS = {
    "uvicorn": ("-m", "uvicorn", "config.asgi:application", "--port", "1"),
    "celery-worker": ("-m", "celery", "-A", "config", "worker", "-n", "w1@%h"),
    "celery-beat": ("-m", "celery", "-A", "config", "beat"),
    "manage": (str(ROOT / "manage.py"), "migrate"),
    "cli": ("-c", "from config.cli import main; main()", "manage", "check"),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("mistake,fragments", MISTAKES)
def test_it_says_a_configuration_mistake_in_one_line(entry, mistake, fragments, tmp_path):
    result = _run(*ENTRY_POINTS[entry], env={"DEEPRECALL_VAR_DIR": str(tmp_path), **mistake})
    _assert_one_line(result, *fragments)


class TestBootstrap:
    def test_it_leaves_the_interpreter_alone_in_production(self, tmp_path):
        # DEEPRECALL_VENV names a venv this interpreter is not: the development path would create it
        # and install the project there with its dev extras.
        venv = tmp_path / "venv"
        result = run_manage(
            "migrate",
            env={
                **PRODUCTION,
                "SECRET_KEY": "",
                "DEEPRECALL_VAR_DIR": str(tmp_path),
                "DEEPRECALL_VENV": str(venv),
            },
            timeout=60,
        )
        _assert_one_line(result, "SECRET_KEY is not set")
        assert "installing" not in result.stderr
        assert not venv.exists()

    def test_it_leaves_another_virtual_environment_alone(self, tmp_path):
        # The tests run in a virtual environment; to this checkout's bootstrap it is now someone
        # else's (an operator's `pip install .` in /srv/deeprecall/venv, say).
        assert sys.prefix != sys.base_prefix
        venv = tmp_path / "venv"
        result = run_manage(
            "version",
            env={"DEEPRECALL_VAR_DIR": str(tmp_path), "DEEPRECALL_VENV": str(venv)},
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().split(".")[0].isdigit()
        assert not venv.exists()

    def test_it_reads_which_checkout_an_editable_install_came_from(self, tmp_path, monkeypatch):
        from config import bootstrap

        site = tmp_path / "lib" / "python3.11" / "site-packages" / "deeprecall-0.1.0.dist-info"
        site.mkdir(parents=True)
        monkeypatch.setattr(bootstrap, "VENV", tmp_path)
        (site / "direct_url.json").write_text(f'{{"dir_info": {{"editable": true}}, "url": "file://{ROOT}"}}')
        assert bootstrap._venv_belongs_elsewhere() is False
        other = Path("/srv/another-checkout")
        (site / "direct_url.json").write_text(
            f'{{"dir_info": {{"editable": true}}, "url": "file://{other}"}}'
        )
        assert bootstrap._venv_belongs_elsewhere() is True

    def test_the_checkouts_own_egg_info_is_not_an_install(self, tmp_path, monkeypatch):
        # setuptools leaves deeprecall.egg-info in the checkout when it builds the venv's editable
        # install; `python3 manage.py` has the checkout on sys.path and finds it.
        from config import bootstrap

        egg = tmp_path / "deeprecall.egg-info"
        egg.mkdir()
        (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: deeprecall\nVersion: 0.1.0\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setattr(bootstrap, "ROOT", tmp_path.resolve())
        assert bootstrap._installed_here_not_editable() is False
        # The same metadata anywhere else is a plain install (pip install . into an interpreter).
        monkeypatch.setattr(bootstrap, "ROOT", tmp_path.resolve() / "elsewhere")
        assert bootstrap._installed_here_not_editable() is True
