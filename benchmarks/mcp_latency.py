"""Warm MCP latency: `gemdoc mcp` driven by a real MCP client session over stdio.

    python benchmarks/mcp_latency.py [--model-dir DIR]   # after ruler.py built and embedded the store

The server serves the benchmark bundle (benchmarks/corpus, embedded by ruler.py --model-dir).
After three warm-up calls, each of the ruler's known-answer questions is asked once through
the `query` tool (hybrid) and once through `search`; the time is the client's round trip.
Results: benchmarks/results/mcp.json.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ruler  # noqa: E402

from gemdoc import paths, store  # noqa: E402


async def measure(questions: list[str], env: dict) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "gemdoc", "mcp"], env=env, cwd=str(common.CORPUS))
    timings: dict[str, list[float]] = {"query": [], "search": []}
    argument = {"query": "question", "search": "query"}  # what each tool calls the question
    refused = 0
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for text in questions[:3]:
                await session.call_tool("query", {"question": text})
            for tool in timings:
                for text in questions:
                    start = time.perf_counter()
                    result = await session.call_tool(tool, {argument[tool]: text})
                    timings[tool].append((time.perf_counter() - start) * 1000)
                    if result.is_error:
                        raise SystemExit(f"{tool} failed: {result.content[0].text}")
                    data = json.loads(result.content[0].text)
                    refused += data["refused"]
    return {tool: _summary(ms) for tool, ms in timings.items()} | {"refused_replies": refused}


def _summary(ms: list[float]) -> dict:
    ordered = sorted(ms)
    return {"n": len(ms), "median_ms": round(statistics.median(ms), 1), "p95_ms": round(ordered[int(0.95 * len(ms)) - 1], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=common.ROOT.parent.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx-int8")
    args = parser.parse_args()
    home = common.use_home("ruler-corpus")
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LANG")}
    env |= {"GEMDOC_HOME": str(home), "GEMDOC_MODEL_DIR": str(args.model_dir.resolve())}
    known, _ = ruler.questions.load()
    result = anyio.run(measure, [q["q"] for q in known], env)
    conn = store.connect(paths.store_path())
    from gemdoc import project

    scope = project.scope(conn, common.CORPUS.resolve()).gems
    result["fingerprint"] = common.fingerprint(conn, scope)
    print(json.dumps(result, indent=2))
    print(f"wrote {common.save('mcp', result)}")


if __name__ == "__main__":
    main()
