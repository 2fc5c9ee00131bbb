"""The package's PEP 517 build backend, standard library only.

Why not setuptools: Python 3.11's venv ships setuptools 65 without ``wheel`` (setuptools builds wheels
by itself only from 70.1), so ``pip install --no-build-isolation .`` fails with ``invalid command
'bdist_wheel'``, and with build isolation pip must download setuptools from PyPI. This backend needs
nothing to be installed: ``pip install .``, ``pip wheel .`` and ``python -m build`` work offline. It
reads ``[project]`` from pyproject.toml and packs ``src/portico`` (py3-none-any)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import time
import tomllib
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent
PACKAGE = "portico"


def _project() -> Dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        project: Dict[str, Any] = tomllib.load(f)["project"]
    return project


def _dist_name(project: Dict[str, Any]) -> str:
    return f"{project['name'].replace('-', '_')}-{project['version']}"


def _metadata(project: Dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.11')}",
    ]
    license_ = project.get("license", {})
    if isinstance(license_, dict) and "text" in license_:
        lines.append(f"License: {license_['text']}")
    for dependency in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dependency}")
    for classifier in project.get("classifiers", []):
        lines.append(f"Classifier: {classifier}")
    readme = project.get("readme")
    body = ""
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _package_files() -> List[Path]:
    source = ROOT / "src" / PACKAGE
    return sorted(
        p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix in {".py", ".typed"}
    )


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: Dict[str, bytes]) -> str:
    project = _project()
    dist = _dist_name(project)
    info = f"{dist}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata(project).encode("utf-8")
    files[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: portico build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ).encode("ascii")
    files[f"{info}/top_level.txt"] = f"{PACKAGE}\n".encode("ascii")
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    filename = f"{dist}-py3-none-any.whl"
    # A fixed date so the same sources give the same wheel.
    stamp = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))[:6]
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=stamp)
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return filename


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    src = ROOT / "src"
    return _write_wheel(wheel_directory, {p.relative_to(src).as_posix(): p.read_bytes() for p in _package_files()})


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """``pip install -e``: a .pth file that puts this checkout's src/ on the path."""
    return _write_wheel(wheel_directory, {f"_{PACKAGE}_editable.pth": f"{ROOT / 'src'}\n".encode("utf-8")})


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    project = _project()
    dist = f"{project['name']}-{project['version']}"
    filename = f"{dist}.tar.gz"
    members = [ROOT / "pyproject.toml", ROOT / "build_backend.py", ROOT / "README.md", *_package_files()]
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for path in members:
            sdist.add(path, arcname=f"{dist}/{path.relative_to(ROOT).as_posix()}", recursive=False)
        pkg_info = _metadata(project).encode("utf-8")
        entry = tarfile.TarInfo(f"{dist}/PKG-INFO")
        entry.size = len(pkg_info)
        entry.mode = 0o644
        sdist.addfile(entry, io.BytesIO(pkg_info))
    return filename
