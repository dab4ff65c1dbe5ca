"""README.md, SKILL.md and --help must say what the code does."""

import re
from pathlib import Path

import click
import yaml

from gemdoc.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SKILL = (ROOT / "SKILL.md").read_text()


def commands() -> dict[str, click.Command]:
    return dict(main.commands)


def options(command: click.Command) -> set[str]:
    return {opt for p in command.params if isinstance(p, click.Option) for opt in p.opts + p.secondary_opts}


def mentioned(text: str) -> list[tuple[str, str]]:
    """Every `gemdoc CMD ...` in code spans and blocks, with the rest of its line."""
    found = []
    blocks = re.findall(r"```\w*\n(.*?)```", text, re.S)
    code = [line for block in blocks for line in block.splitlines() if not line.lstrip().startswith("#")]
    for span in re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S)) + code:
        for match in re.finditer(r"\bgemdoc ([a-z][a-z-]*)([^`\n&|]*)", span):
            found.append((match[1], match[2]))
    return found


def resolve(name: str, rest: str) -> click.Command:
    """The command a mention names, down to a group's subcommand (`gemdoc trust list`)."""
    command = commands()[name]
    words = rest.split()
    if isinstance(command, click.Group) and words and words[0] in command.commands:
        return command.commands[words[0]]
    return command


def test_readme_and_skill_name_only_real_commands_and_flags():
    for doc in (README, SKILL):
        for name, rest in mentioned(doc):
            assert name in commands(), f"`gemdoc {name}` is not a command"
            command = resolve(name, rest)
            for flag in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", rest):
                if flag in ("--version", "--help"):
                    continue
                assert flag in options(command) | {"--project", "-C"}, f"gemdoc {name} has no {flag}"


def test_readme_documents_every_command_and_option():
    table = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    for name, group in commands().items():
        row = next((line for line in table.splitlines() if line.startswith(f"| `gemdoc {name}")), None)
        assert row, f"README's command table lacks gemdoc {name}"
        subcommands = list(group.commands.values()) if isinstance(group, click.Group) else []
        for param in [p for command in (group, *subcommands) for p in command.params]:
            if isinstance(param, click.Option) and "--project" not in param.opts and "--help" not in param.opts:
                assert any(opt in row for opt in param.opts), f"README omits {param.opts[0]} of gemdoc {name}"
        for sub in subcommands:
            assert f"gemdoc {name} {sub.name}" in row, f"README omits gemdoc {name} {sub.name}"


def test_readme_states_the_limits_the_code_sets():
    from gemdoc import show

    row = next(line for line in README.splitlines() if line.startswith("| `gemdoc show"))
    assert f"past {show.MAX_PASSAGE:,} characters, {show.MAX_PASSAGE:,} at a time" in row


def test_skill_has_frontmatter_and_covers_the_everyday_commands():
    front = yaml.safe_load(SKILL.split("---")[1])
    assert front["name"] == "gemdoc" and len(front["description"]) > 40
    used = {name for name, _ in mentioned(SKILL)}
    assert set(commands()) <= used, f"SKILL.md does not mention gemdoc {sorted(set(commands()) - used)}"


def test_readme_prose_states_the_shipped_floors_and_fusion_constants():
    """The hand-written parts of the README quote the gate's cosine floors and the fusion's constants;
    a test so that tuning one (REPHRASING_FLOOR went 0.55 -> 0.5) cannot leave the prose behind."""
    from gemdoc import evidence, hybrid

    prose = README.split("<!-- benchmarks:start -->")[0]
    for said in (f"within cosine {evidence.REPHRASING_FLOOR} of the nearest of",
                 f"within cosine {evidence.GUESSED_NAMES_NEAR} (`min_guessed_near`)",
                 f"no chunk within cosine {evidence.QUESTION_FLOOR} of it",
                 f"reciprocal rank fusion (k = {hybrid.RRF_K})",
                 f"at least {hybrid.FIRST_MARGIN} times its second's"):  # fmt: skip
        assert " ".join(said.split()) in " ".join(prose.split()), said


def test_readme_refusal_example_and_reasons_match_the_gate():
    """The diagnosis shown in the README has the keys and bars the gate gives, and its reasons
    table names every reason the gate can give (gemdoc/evidence.py)."""
    import json

    from gemdoc import evidence

    example = json.loads(re.search(r'```json\n(\{"refused": true.*?)```', README, re.S)[1])
    given = evidence.Evidence(reason="too_little_of_the_query_matched").diagnosis()
    assert set(example["diagnosis"]) == set(given)
    bars = {k: v for k, v in given.items() if k.startswith("min_")}
    assert {k: example["diagnosis"][k] for k in bars} == bars
    table = set(re.findall(r"^\| `(\w+)` \|", README, re.M))
    assert set(evidence.HINTS) <= table
