"""gemdoc's Bundler plugin (``plugins/bundler-gemdoc``): installing it into a project, and
reading from Bundler's own plugin index whether its hook is armed.

The plugin is installed with `bundle plugin install --source=file://MIRROR`, from a one-gem
source gemdoc builds in its cache: it works offline, needs nothing on rubygems.org, leaves
the Gemfile alone (a `plugin ..., path:` line would name a directory only this machine has)
and copies the plugin into the project's ``.bundle/plugin``.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gemdoc import paths, shim, yamlfile
from gemdoc.errors import GemdocError

NAME = "bundler-gemdoc"
EVENT = "after-install-all"
INSTALL_TIMEOUT = 120.0


@dataclass
class HookState:
    armed: bool
    where: str | None = None  # the plugin index that registers the hook
    disabled: str | None = None  # why Bundler will not run it, when it will not

    def describe(self) -> str:
        if self.armed and self.disabled:
            return f"installed but disabled: {self.disabled}"
        if self.armed:
            return f"armed ({self.where})"
        return "not installed: `gemdoc init` installs it"


def source_dir() -> Path:
    return paths.package_resource("plugins") / NAME


def mirror() -> Path:
    """A RubyGems source holding this gemdoc's plugin, built once per plugin content."""
    src = source_dir()
    digest = hashlib.sha256()
    for file in sorted(p for p in src.rglob("*") if p.is_file()):
        digest.update(file.relative_to(src).as_posix().encode() + b"\0" + file.read_bytes())
    target = paths.cache_dir() / "plugin-source" / digest.hexdigest()[:16]
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
        try:
            shim.call("mirror", {"plugin": str(src), "out": str(tmp)}, timeout=INSTALL_TIMEOUT)
            os.replace(tmp, target)
        except OSError:
            if not target.exists():
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def install(project: Path) -> None:
    """`bundle plugin install` into this project's ``.bundle/plugin``."""
    bundle = shutil.which("bundle")
    if not bundle:
        raise GemdocError("bundle not found on PATH: install Bundler (Debian: `apt-get install bundler`) and retry")
    cmd = [bundle, "plugin", "install", NAME, f"--source=file://{mirror()}"]
    try:
        done = subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise GemdocError(f"`bundle plugin install {NAME}` timed out; run it again") from exc
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()[-1]
        raise GemdocError(f"`bundle plugin install {NAME}` failed: {last}")


def state(project: Path) -> HookState:
    """Whether Bundler will run gemdoc's hook in this project, read from its plugin indexes."""
    for index in (_app_config(project) / "plugin" / "index", _user_plugin_root() / "index"):
        if _registers_hook(index):
            return HookState(True, str(index), _disabled(project))
    return HookState(False)


def _app_config(project: Path) -> Path:
    configured = os.environ.get("BUNDLE_APP_CONFIG")
    return project / configured if configured else project / ".bundle"


def _user_plugin_root() -> Path:
    if os.environ.get("BUNDLE_USER_PLUGIN"):
        return Path(os.environ["BUNDLE_USER_PLUGIN"])
    home = os.environ.get("BUNDLE_USER_HOME")
    return Path(home) / "plugin" if home else Path.home() / ".bundle" / "plugin"


def _read_yaml(path: Path) -> dict:
    """A Bundler settings file, or {} when there is none or it is not one gemdoc will read."""
    try:
        data = yamlfile.load(path)
    except (OSError, yamlfile.Unreadable):
        return {}
    return data if isinstance(data, dict) else {}


def _registers_hook(index: Path) -> bool:
    data = _read_yaml(index)
    hooks = (data.get("hooks") or {}).get(EVENT) or []
    plugin_path = (data.get("plugin_paths") or {}).get(NAME)
    return NAME in hooks and bool(plugin_path) and (Path(plugin_path) / "plugins.rb").is_file()


def _disabled(project: Path) -> str | None:
    """`bundle config set plugins false` (local, global or BUNDLE_PLUGINS) turns every hook off."""
    settings = [os.environ.get("BUNDLE_PLUGINS")]
    for config in (_app_config(project) / "config", _user_plugin_root().parent / "config"):
        settings.append(_read_yaml(config).get("BUNDLE_PLUGINS"))
    value = next((s for s in settings if s is not None), None)
    if str(value).lower() == "false":
        return "Bundler plugins are off (`bundle config set plugins false`)"
    return None
