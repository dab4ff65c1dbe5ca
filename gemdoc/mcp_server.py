"""`gemdoc mcp`: an MCP server over stdio with the tools search, query, show and status.

Each tool returns the same JSON as the CLI's `--json`. The embedding model and the bundle's
vector matrix are loaded once per server process, so a warm `query` costs what ranking
costs. No exception escapes a tool: an expected failure is ``{"error": "..."}`` with the
remedy, anything else ``{"error": "internal error: ..."}``, and the session goes on.
"""

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from gemdoc import __version__, ask, paths, project, render, status
from gemdoc.errors import GemdocError

INSTRUCTIONS = (
    "Documentation of the exact gem versions in this Ruby project's Gemfile.lock, offline. "
    "Call status first. Use search for identifiers and for questions in the docs' own words, query for "
    "paraphrased how-to questions. An empty result with refused=true means the bundle holds no evidence: "
    "say so instead of answering from memory. Cite results by their uri; show prints one in full."
)


class Session:
    """What one server process keeps warm: the project, the model, the vector matrix."""

    def __init__(self, start: Path):
        self.start = start
        self.embedder = None
        self.matrices: dict[tuple, object] = {}

    def bundle(self) -> ask.Bundle:
        return ask.open_bundle(project.root(self.start))

    def vector_arm(self, bundle: ask.Bundle):
        """The model and matrix, or (None, None, why) when the model cannot be loaded: query then
        answers by keyword with a note, as the CLI does."""
        from gemdoc import vectors

        if not vectors.any_embedded(bundle.conn, bundle.scope.gems):
            return None, None, None
        if self.embedder is None:
            from gemdoc.encoder import Embedder
            from gemdoc.models import for_store

            try:
                self.embedder = Embedder(for_store(bundle.root, bundle.conn))
            except GemdocError as exc:
                return None, None, f"answered by keyword alone: {exc}"
        vectors.check_identity(bundle.conn, self.embedder.identity)
        key = (os.stat(paths.store_path()).st_mtime_ns, tuple(bundle.scope.gems))
        if key not in self.matrices:
            self.matrices = {key: vectors.Matrix(bundle.conn, bundle.scope.gems)}
        return self.embedder, self.matrices[key], None


def guarded(tool: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(tool)
    def run(*args, **kwargs) -> str:
        try:
            return tool(*args, **kwargs)
        except GemdocError as exc:
            return json.dumps({"error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - nothing may end the session
            return json.dumps({"error": f"internal error: {type(exc).__name__}: {str(exc)[:300]}"})

    return run


def build(start: Path) -> MCPServer:
    session = Session(start)
    server = MCPServer("gemdoc", version=__version__, instructions=INSTRUCTIONS)

    def _options(n: int, max_chars: int, explain: bool, min_score: float | None, no_refusal: bool) -> ask.Options:
        return ask.Options(n, max_chars, min_score, explain, not no_refusal)

    @server.tool()
    @guarded
    def search(query: str, n: int = 10, max_chars: int = ask.DEFAULT_MAX_CHARS, explain: bool = False,
               min_score: float | None = None, no_refusal: bool = False) -> str:  # fmt: skip
        """Keyword search in this bundle's gem documentation: identifiers (Rack::Utils.escape_html) and questions in the docs' words."""
        options = _options(n, max_chars, explain, min_score, no_refusal)
        return render.results_json(ask.keyword(session.bundle(), query, options), options)

    @server.tool()
    @guarded
    def query(query: str, n: int = 10, max_chars: int = ask.DEFAULT_MAX_CHARS, explain: bool = False,
              min_score: float | None = None, no_refusal: bool = False) -> str:  # fmt: skip
        """Hybrid keyword + semantic search, for how-to questions phrased in other words than the docs use."""
        options = _options(n, max_chars, explain, min_score, no_refusal)
        bundle = session.bundle()
        embedder, matrix, note = session.vector_arm(bundle)
        reply = ask.semantic(bundle, query, options, embedder, matrix, False)
        reply.notes.extend([note] if note else [])
        return render.results_json(reply, options)

    @server.tool()
    @guarded
    def show(uri: str, source: bool = False, context: int = 12) -> str:
        """The full chunk a result's uri (gemdoc://GEM@VERSION/PATH#L12) names, or the source lines around it."""
        text = ask.show(session.bundle(), uri, source, context)
        return json.dumps({"uri": uri, "text": text}, ensure_ascii=False)

    @server.tool(name="status")
    @guarded
    def status_tool() -> str:
        """Is this project indexed, does the index match Gemfile.lock, are there vectors, and what to run next."""
        return json.dumps(status.gather(session.start))

    return server


def serve(start: Path) -> None:
    build(start).run("stdio")
