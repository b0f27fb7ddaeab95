"""Bring the project's virtual environment up to date, then run inside it.

Standard library only: this runs under the bare system `python3` that a fresh
machine has. `manage.py` calls `ensure_venv()` first; when the running
interpreter is not the project's `.venv`, it creates the venv, installs the
project with its dev extra (once, and again whenever pyproject.toml changes),
and re-executes the same command with the venv's Python.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("DEEPRECALL_VENV", ROOT / ".venv"))
STAMP = VENV / ".deeprecall-install"


def _venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _in_venv() -> bool:
    try:
        return Path(sys.prefix).resolve() == VENV.resolve()
    except OSError:
        return False


def _wanted_stamp() -> str:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def _say(message: str) -> None:
    print(f"deeprecall: {message}", file=sys.stderr, flush=True)


def _torch_requirement() -> list[str]:
    # sentence-transformers needs torch. On Linux x86_64 the newest torch on PyPI
    # is a multi-GB CUDA build; 2.13.0 has a CPU build where a local wheel mirror
    # carries one, and the model runs on the CPU either way.
    if platform.system() == "Linux" and platform.machine() == "x86_64":
        return ["torch==2.13.0"]
    return []


def install() -> None:
    """Create .venv if missing and install the project (idempotent, stamped)."""
    python = _venv_python()
    if not python.exists():
        _say(f"creating the virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _wanted_stamp():
        return
    _say("installing Deep Recall and its dependencies (first run takes a few minutes)")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run(
        [*pip, "install", "--quiet", *_torch_requirement(), "-e", f"{ROOT}[dev]"],
        check=True,
    )
    STAMP.write_text(_wanted_stamp())


def ensure_venv() -> None:
    """Install if needed and re-exec this command under the venv's Python."""
    if _in_venv() and STAMP.exists() and STAMP.read_text() == _wanted_stamp():
        return
    try:
        install()
    except subprocess.CalledProcessError as exc:
        _say(f"installation failed (exit {exc.returncode}); see the pip output above")
        raise SystemExit(1) from None
    if not _in_venv():
        python = str(_venv_python())
        os.execv(python, [python, *sys.argv])
