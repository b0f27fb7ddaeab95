"""Bring the project's virtual environment up to date, then run inside it.

Standard library only: this runs under the bare system `python3` that a fresh
machine has. `manage.py` calls `ensure_venv()` first; when the running
interpreter is not the project's `.venv`, it creates the venv, installs the
project with its dev extra (once, and again whenever pyproject.toml changes),
and re-executes the same command with the venv's Python.

That is the embedded development path only. A deployment installs the project
itself (`pip install .`, docs/deploy.md) and must never see its venv rebuilt
or its packages replaced by an editable install with dev extras, so
`bootstrap_skip_reason()` says when to leave the interpreter alone.
"""

from __future__ import annotations

import hashlib
import json
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


def _editable_source(direct_url: str | None) -> str | None:
    """The folder of an editable install from its direct_url.json (PEP 610), else None."""
    if not direct_url:
        return None
    try:
        info = json.loads(direct_url)
    except ValueError:
        return None
    if not info.get("dir_info", {}).get("editable"):
        return None
    url = str(info.get("url", ""))
    return url.removeprefix("file://") or None


def _installed_here_not_editable() -> bool:
    """Whether the running interpreter has Deep Recall from a plain `pip install .` (or a wheel)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("deeprecall")
    except metadata.PackageNotFoundError:
        return False
    if Path(str(dist.locate_file(""))).resolve() == ROOT:
        # deeprecall.egg-info in the checkout itself, which setuptools leaves there when it builds
        # the venv's editable install: found through the current folder on sys.path, it is no
        # install in this interpreter, and taking it for one ran manage.py without the venv.
        return False
    return _editable_source(dist.read_text("direct_url.json")) is None


def _venv_belongs_elsewhere() -> bool:
    """Whether the venv holds an editable install of another checkout (a git worktree sharing it).

    Reinstalling would point that checkout's venv at this one; the worktree uses it as it is.
    """
    pattern = "Lib/site-packages" if os.name == "nt" else "lib/python*/site-packages"
    for direct in VENV.glob(f"{pattern}/deeprecall-*.dist-info/direct_url.json"):
        source = _editable_source(direct.read_text())
        if source is not None and Path(source).resolve() != ROOT:
            return True
    return False


def bootstrap_skip_reason() -> str | None:
    """Why this interpreter must be left as it is, or None for the development path."""
    if os.environ.get("DEEPRECALL_ENV", "").strip().lower() == "production":
        return "DEEPRECALL_ENV=production: the operator installs the project (docs/deploy.md)"
    if sys.prefix != sys.base_prefix and not _in_venv():
        return f"running inside another virtual environment ({sys.prefix})"
    if not _in_venv() and _installed_here_not_editable():
        return "Deep Recall is installed in this interpreter (pip install .)"
    return None


def install() -> None:
    """Create .venv if missing and install the project (idempotent, stamped)."""
    python = _venv_python()
    if not python.exists():
        _say(f"creating the virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _wanted_stamp():
        return
    if _venv_belongs_elsewhere():
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
    """Install if needed and re-exec this command under the venv's Python (development only)."""
    if bootstrap_skip_reason() is not None:
        return
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
