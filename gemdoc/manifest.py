"""The project manifest, ``.gemdoc.yml``: the lockfile digest last indexed, the scope, and
the settings a project may choose.

``model`` and ``model_dir`` choose files outside the project, so they are *gated*: gemdoc
uses them only once the user has trusted this exact value (see trust.py).
"""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from gemdoc import files
from gemdoc.errors import GemdocError

FILENAME = ".gemdoc.yml"
SCOPES = ("direct", "meta", "all")
DEFAULT_SCOPE = "meta"  # direct dependencies and what a meta-gem among them stands for (README: Default scope)
GATED = ("model", "model_dir")


@dataclass
class Manifest:
    lockfile_sha256: str | None = None
    scope: str = DEFAULT_SCOPE
    all_languages: bool = False
    auto_index: bool = True
    settings: dict = field(default_factory=dict)  # the gated fields present

    def gated(self) -> dict:
        return {k: self.settings[k] for k in GATED if k in self.settings}

    def gated_sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.gated(), sort_keys=True).encode()).hexdigest()


def path_for(project: Path) -> Path:
    return project / FILENAME


def load(project: Path) -> Manifest:
    path = path_for(project)
    if not path.exists() and not path.is_symlink():
        return Manifest()
    from gemdoc import yamlfile  # here, not at the top: `gemdoc search` imports this module and rarely needs yaml

    try:
        data = yamlfile.load(path) or {}
    except yamlfile.Unreadable as exc:
        raise GemdocError(f"{path} {exc}: fix it or delete it") from exc
    except OSError as exc:
        raise GemdocError(f"cannot read {path}: {exc.strerror}; fix its permissions or delete it") from exc
    if not isinstance(data, dict) or data.get("scope", DEFAULT_SCOPE) not in SCOPES:
        raise GemdocError(f"{path} is malformed (scope must be one of {', '.join(SCOPES)}): fix it or delete it")
    if any(isinstance(data.get(k), (dict, list)) for k in GATED):
        raise GemdocError(f"{path} is malformed ({' and '.join(GATED)} must be plain values): fix it or delete it")
    return Manifest(
        lockfile_sha256=data.get("lockfile_sha256"),
        scope=data.get("scope", DEFAULT_SCOPE),
        all_languages=bool(data.get("all_languages", False)),
        auto_index=data.get("auto_index", True) is not False,
        settings={k: str(data[k]) for k in GATED if data.get(k) is not None},
    )


def save(project: Path, manifest: Manifest) -> None:
    import yaml
    fields = {"lockfile_sha256": manifest.lockfile_sha256, "scope": manifest.scope, "all_languages": manifest.all_languages}
    if not manifest.auto_index:
        fields["auto_index"] = False
    body = "# gemdoc project manifest: what `gemdoc index` last indexed here.\n" + yaml.safe_dump(
        fields | manifest.gated(), sort_keys=False
    )
    files.write_atomic(path_for(project), body)
