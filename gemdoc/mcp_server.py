"""`gemdoc mcp`: an MCP server over stdio with the tools search, query, show and status.

Each tool returns the same JSON as the CLI's `--json`. The embedding model and the bundle's
vector matrix are loaded once per server process, so a warm `query` costs what ranking
costs. No exception escapes a tool: a failure is an MCP tool error (``isError``) whose text
is one line naming cause and remedy (``internal error: ...`` for a bug), and the session goes on.
"""

import functools
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, BinaryIO

import anyio

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from gemdoc import __version__, ask, damage, paths, project, render, status
from gemdoc.errors import GemdocError

PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC 2.0
MAX_LINE_BYTES = 16 * 1024 * 1024
INSTRUCTIONS = (
    "Documentation of the exact gem versions in this Ruby project's Gemfile.lock, offline. "
    "Call status first. For a question, call query with the question verbatim plus api_names (the classes, "
    "methods, options or cops you guess answer it) and rephrasing (the question in the gem's own docs' words); "
    "use search for an identifier alone. An empty result with refused=true means the bundle holds no evidence: "
    "say so instead of answering from memory. Cite results by their uri; show prints one in full."
)
MATRICES_KEPT = 4  # vector matrices kept warm: the whole bundle and a few `gem` filters

N = Annotated[int, Field(description="How many results (1-100).")]
MAX_CHARS = Annotated[int, Field(description="Character budget for the whole reply; results past it are counted "
                                             "in omitted_for_budget.")]  # fmt: skip
EXPLAIN = Annotated[bool, Field(description="Add why each result ranked: arms and ranks, matched terms.")]
MIN_SCORE = Annotated[float | None, Field(description="Drop results scoring below this (scale differs per tool).")]
NO_REFUSAL = Annotated[bool, Field(description="Rank even when the bundle shows no evidence; treat such results "
                                               "as weak.")]  # fmt: skip
GEM = Annotated[str | None, Field(description="Search only this gem of the bundle, named as in Gemfile.lock "
                                              "(e.g. 'sidekiq'). Leave empty to search every gem.")]  # fmt: skip
QUESTION = Annotated[str, Field(description="The user's question, verbatim. Searched by keyword and by meaning.")]
API_NAMES = Annotated[list[str] | None, Field(
    description="Identifiers you guess answer the question: classes, modules, methods, options, config keys, cops "
    "(e.g. ['Rack::Builder#map', 'sidekiq_options', 'retry']), the one you think answers first, by its full name. "
    "Keyword arm only; one that exists in the bundle ranks its entry high. When none exists in the bundle and no "
    "documented method is named by its full name, or the first does not exist and the question writes it as code, "
    "the query is refused unless a passage comes near.")]  # fmt: skip
REPHRASING = Annotated[str, Field(description="The question restated in the words the gem's own documentation "
                                              "would use: its terms, not the user's situation. Semantic arm; "
                                              "when no passage of the bundle comes near it, the query is "
                                              "refused unless the query names a documented method by its "
                                              "full name or a cop.")]  # fmt: skip
PASSAGE = Annotated[str, Field(description="Optional: a short passage as the gem's docs might answer the question "
                                           "(hypothetical). Embedded as a document for the semantic arm.")]  # fmt: skip


class Session:
    """What one server process keeps warm: the project, the model, the vector matrix."""

    def __init__(self, start: Path):
        self.start = start
        self.embedder = None
        self.matrices: dict[tuple, object] = {}

    def bundle(self, gem: str | None = None) -> ask.Bundle:
        return ask.only_gem(ask.open_bundle(project.root(self.start)), gem)

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
            fresh = {k: m for k, m in self.matrices.items() if k[0] == key[0]}  # a rewritten store drops all
            self.matrices = dict(list(fresh.items())[-(MATRICES_KEPT - 1):])
            self.matrices[key] = vectors.Matrix(bundle.conn, bundle.scope.gems)
        return self.embedder, self.matrices[key], None


def guarded(tool: Callable[..., str]) -> Callable[..., str]:
    """Every failure becomes an MCP tool error (isError) with a one-line message."""

    @functools.wraps(tool)
    def run(*args, **kwargs) -> str:
        try:
            return tool(*args, **kwargs)
        except GemdocError as exc:
            raise ToolError(str(exc)) from exc
        except sqlite3.DatabaseError as exc:  # a damaged store is named with its remedy, as on the CLI
            problem = damage.explain(paths.store_path(), exc)
            raise ToolError(str(problem) if problem else f"internal error: {str(exc)[:300]}") from exc
        except Exception as exc:  # noqa: BLE001 - nothing may end the session
            raise ToolError(f"internal error: {type(exc).__name__}: {str(exc)[:300]}") from exc

    return run


def build(start: Path) -> MCPServer:
    session = Session(start)
    server = MCPServer("gemdoc", version=__version__, instructions=INSTRUCTIONS)

    def _options(n: int, max_chars: int, explain: bool, min_score: float | None, no_refusal: bool) -> ask.Options:
        return ask.Options(n, max_chars, min_score, explain, not no_refusal)

    @server.tool()
    @guarded
    def search(query: Annotated[str, Field(description="An identifier (Rack::Utils.escape_html, Hash#dig, "
                                                       "sidekiq_options) or words the docs use.")],
               gem: GEM = None, n: N = 10, max_chars: MAX_CHARS = ask.DEFAULT_MAX_CHARS, explain: EXPLAIN = False,
               min_score: MIN_SCORE = None, no_refusal: NO_REFUSAL = False) -> str:  # fmt: skip
        """Keyword search in this bundle's gem documentation: best for an identifier; the API named exactly
        comes first."""
        options = _options(n, max_chars, explain, min_score, no_refusal)
        return render.results_json(ask.keyword(session.bundle(gem), query, options), options)

    @server.tool()
    @guarded
    def query(question: QUESTION = "", api_names: API_NAMES = None, rephrasing: REPHRASING = "",
              passage: PASSAGE = "", gem: GEM = None, n: N = 10, max_chars: MAX_CHARS = ask.DEFAULT_MAX_CHARS,
              explain: EXPLAIN = False, min_score: MIN_SCORE = None,
              no_refusal: NO_REFUSAL = False) -> str:  # fmt: skip
        """Hybrid keyword + semantic search for a question. Give the question verbatim, and also api_names
        and a rephrasing: together they rank best."""
        options = _options(n, max_chars, explain, min_score, no_refusal)
        text = ask.typed(question, api_names, rephrasing, passage)
        bundle = session.bundle(gem)
        embedder, matrix, note = session.vector_arm(bundle)
        reply = ask.semantic(bundle, text, options, embedder, matrix, False)
        reply.notes.extend([note] if note else [])
        return render.results_json(reply, options)

    @server.tool()
    @guarded
    def show(uri: Annotated[str, Field(description="A result's uri: gemdoc://GEM@VERSION/PATH#L12.")],
             source: Annotated[bool, Field(description="Print the gem's source lines around it instead.")] = False,
             context: Annotated[int, Field(description="Source lines either side (with source).")] = 12,
             offset: Annotated[int, Field(description="Print a long passage from this character on: its cut "
                                                      "line gives the next offset.")] = 0,
             ) -> str:  # fmt: skip
        """The full passage a result's uri names, or the source lines around it."""
        text = ask.show(session.bundle(), uri, source, context, offset)
        return json.dumps({"uri": uri, "text": text}, ensure_ascii=False)

    @server.tool(name="status")
    @guarded
    def status_tool() -> str:
        """Is this project indexed, does the index match Gemfile.lock, are there vectors, and what to run
        next (takes no arguments)."""
        return json.dumps(status.gather(session.start))

    return server


def serve(start: Path) -> None:
    anyio.run(_serve_stdio, build(start))


async def _serve_stdio(server: MCPServer) -> None:
    """The SDK's stdio transport, fed through ``Lines``: it drops a line it cannot parse without a
    reply (its dispatcher only logs the error), so the client waits forever. Stray output of a
    tool or a child process goes to stderr, never onto the wire."""
    from mcp.server.stdio import stdio_server

    source, wire = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb", buffering=0)
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)  # a child process reads nothing of the wire either
    os.close(quiet)
    os.dup2(2, 1)
    out = Wire(wire)
    async with stdio_server(stdin=Lines(source, out), stdout=out) as (read, write):
        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs; no public handle exists
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


class Wire:
    """stdout for the transport: whole lines, one writer at a time (the transport and ``Lines``)."""

    def __init__(self, sink: BinaryIO):
        self.sink = sink
        self.lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self.lock:
            await anyio.to_thread.run_sync(self.sink.write, text.encode("utf-8", errors="replace"))

    async def flush(self) -> None:
        await anyio.to_thread.run_sync(self.sink.flush)

    async def reply_error(self, ident: str | int | None, code: int, message: str) -> None:
        error = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
        await self.write(json.dumps(error) + "\n")
        await self.flush()


class Lines:
    """stdin for the transport: each line as JSON-RPC the SDK accepts, or answered here. Bytes that
    are not UTF-8 and lone surrogates become U+FFFD; a line that is not JSON gets a -32700 parse
    error, JSON that is not a JSON-RPC message -32600; either way the server reads on."""

    def __init__(self, source: BinaryIO, wire: Wire):
        self.source = source
        self.wire = wire

    def __aiter__(self):
        return self._lines()

    async def _lines(self):
        while raw := await anyio.to_thread.run_sync(self.source.readline, MAX_LINE_BYTES + 1):
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                await self._skip_rest()
                await self.wire.reply_error(None, PARSE_ERROR, f"Parse error: a line over {MAX_LINE_BYTES} bytes")
                continue
            line = await self._screen(raw)
            if line is not None:
                yield line

    async def _skip_rest(self) -> None:
        """Read past the end of an overlong line."""
        chunk = b""
        while not chunk.endswith(b"\n"):
            chunk = await anyio.to_thread.run_sync(self.source.readline, MAX_LINE_BYTES)
            if not chunk:
                return

    async def _screen(self, raw: bytes) -> str | None:
        import mcp_types

        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            return None
        try:
            data = _replace_surrogates(json.loads(text))
        except (ValueError, RecursionError):  # RecursionError: nested past Python's limit
            await self.wire.reply_error(None, PARSE_ERROR, "Parse error: the line is not JSON")
            return None
        try:
            mcp_types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValueError:
            ident = data.get("id") if isinstance(data, dict) else None
            ident = ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None
            await self.wire.reply_error(ident, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
            return None
        return json.dumps(data, ensure_ascii=False)


def _replace_surrogates(value):
    """``value`` with every lone surrogate (JSON allows ``"\\ud800"``, UTF-8 does not) made U+FFFD."""
    if isinstance(value, str):
        return ask.SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value
