"""`gemdoc init`: the one command that installs the hook into a project. Writes ``.gemdoc.yml``,
trusts the project, and installs the Bundler plugin into its ``.bundle/plugin`` (never the Gemfile).
Running it again changes nothing and says so."""

import dataclasses
from pathlib import Path

from gemdoc import manifest, plugin, trust


def init(project: Path, auto_index: bool = True) -> list[str]:
    """What was done, one line each; the last line says what to run next."""
    done = []
    path = manifest.path_for(project)
    saved = manifest.load(project)
    if not path.exists() or saved.auto_index != auto_index:
        manifest.save(project, dataclasses.replace(saved, auto_index=auto_index))
        done.append(f"wrote {path.name} (auto-index {'on' if auto_index else 'off'})")
    if trust.grant(project, trust.EXPLICIT):
        done.append(f"trusted {project} (recorded in {trust.trust_file()})")
    hook = plugin.state(project)
    if auto_index and not hook.armed:
        plugin.install(project)
        hook = plugin.state(project)
        done.append(f"installed the Bundler plugin {plugin.NAME}: hook {hook.describe()}")
    warning = [f"warning: the hook will not fire: {hook.disabled}"] if auto_index and hook.disabled else []
    if not done:
        return [f"unchanged: gemdoc is already set up in {project} (hook {hook.describe()}, trusted)", *warning]
    done += warning
    if auto_index:
        done.append("next: run `bundle install`; the hook indexes this bundle now and after every install, add and update")
    else:
        done.append("next: run `gemdoc index` whenever Gemfile.lock changes")
    return done
