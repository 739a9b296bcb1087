"""Config is the CLI: each option of ``train grpo``, ``train sft`` and ``export sft`` is a field
of its config dataclass, with the field's help and default, and each field is an option. Also:
the base install draws the plots, and CI runs the README's main job in a fresh venv."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import pytest

from wikigym.cli import build_parser
from wikigym.cli_args import add_dataclass_arguments, dataclass_from_args, option_name
from wikigym.cliutil import CliParser
from wikigym.trainers.grpo import TrainConfig
from wikigym.trainers.sft import ExportConfig, SFTRunConfig

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [
    (("train", "grpo"), TrainConfig, ["--output-dir", "o"], TrainConfig(output_dir="o")),
    (("train", "sft"), SFTRunConfig, ["--data", "d", "--output-dir", "o"],
     SFTRunConfig(data=Path("d"), output_dir=Path("o"))),
    (("export", "sft"), ExportConfig, ["--out", "o"], ExportConfig(out=Path("o"))),
]  # fmt: skip


def subparser(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> argparse.ArgumentParser:
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize(("path", "cls", "required", "expected"), COMMANDS, ids=str)
def test_every_field_is_an_option_and_every_option_a_field(
    path: tuple[str, ...], cls: type, required: list[str], expected: object
) -> None:
    parser = subparser(build_parser(), path)
    options = {a.dest: a for a in parser._actions if not isinstance(a, argparse._HelpAction)}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert set(options) == set(fields)
    for name, f in fields.items():
        action = options[name]
        assert action.option_strings == [option_name(f)]
        assert f.metadata["help"] and action.help.startswith(f.metadata["help"])
        if "choices" in f.metadata:
            assert tuple(action.choices) == tuple(f.metadata["choices"])
    # The defaults are the dataclass's own: parsing only the required options gives cls(...).
    assert dataclass_from_args(cls, parser.parse_args(required)) == expected


def test_options_parse_into_typed_fields() -> None:
    parser = build_parser()
    argv = ["train", "grpo", "--output-dir", "o", "--max-steps", "3", "--gamma", "0.9",
            "--citations", "--no-diagnostics", "--overrides", '{"beta": 0.0}', "--env", "Calc-v0"]  # fmt: skip
    cfg = dataclass_from_args(TrainConfig, parser.parse_args(argv))
    assert cfg == TrainConfig(output_dir="o", max_steps=3, gamma=0.9, citations=True,
                              diagnostics=False, overrides={"beta": 0.0}, env="Calc-v0")  # fmt: skip


def test_a_field_without_help_is_a_bug() -> None:
    @dataclasses.dataclass
    class Bad:
        x: int = 0

    with pytest.raises(TypeError, match="no help"):
        add_dataclass_arguments(CliParser(prog="t"), Bad)


def test_usage_mistakes_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["train", "grpo", "--output-dir", "o", "--seed", "x"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "wikigym train grpo: error: argument --seed" in err


def test_synth_is_mounted_in_wikigym() -> None:
    args = build_parser().parse_args(["synth", "stats", "t.jsonl", "--json"])
    assert args.func.__name__ == "cmd_stats" and args.json


def test_the_base_install_draws_plots() -> None:
    """matplotlib is a core dependency (the demo and eval promise plots), not an extra."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0] for d in project["dependencies"]}
    assert "matplotlib" in names
    source = (ROOT / "wikigym" / "eval" / "report.py").read_text()
    assert not re.search(r"^(import|from) matplotlib", source, re.M)


def test_ci_runs_the_readme_main_job_in_a_fresh_venv() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    main_job = next(b for b in blocks if "wikigym demo" in b)
    assert main_job.strip() in ci
    fresh = next(line for line in ci.splitlines() if main_job.strip() in line)
    assert "python3 -m venv" in fresh and "activate" in fresh
    test_cmd = next(b for b in blocks if "pytest" in b)
    assert ci.index(test_cmd.strip()) < ci.index(fresh)


def test_the_readme_python_api_runs() -> None:
    """The README's Python example (Snapshot.open, search, page, sql, TaskSet.load) runs as
    written, in a fresh interpreter."""
    import os
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Python API", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, env=env, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "capital of" in out.stdout and "passages" in out.stdout


def test_a_missing_extra_is_named_with_its_remedy() -> None:
    from wikigym.cliutil import require_extra
    from wikigym.errors import ConfigError

    require_extra(("json",), "train", "wikigym train grpo")  # installed: nothing happens
    with pytest.raises(
        ConfigError, match=r"needs the 'train' extra \(no_such_mod_x not installed\)"
    ):
        require_extra(("json", "no_such_mod_x"), "train", "wikigym train grpo")


def test_every_command_has_examples_that_parse_and_help_shows_defaults() -> None:
    """Each command's --help ends with examples, every example is a valid command line of
    the real parser, and options with a default say it."""
    import shlex

    from wikigym.cli import build_parser
    from wikigym.cli_examples import EXAMPLES
    from wikigym.synth.cli import build_parser as synth_parser

    parser = build_parser()
    assert parser.add_examples(EXAMPLES) == []  # no command without an example
    assert synth_parser().add_examples(EXAMPLES, path="synth") == []
    for command, lines in EXAMPLES.items():
        for line in lines:
            argv = shlex.split(line)
            assert argv[0] == "wikigym", line
            args = parser.parse_args(argv[1:])  # raises SystemExit on a broken example
            assert callable(args.func)
        leaf = parser
        for word in command.split():
            sub = next(a for a in leaf._actions if hasattr(a, "choices") and a.choices)
            leaf = sub.choices[word]
        text = leaf.format_help()
        assert "examples:\n  wikigym " in text, command
        assert any(line.startswith(f"wikigym {command} ") for line in lines), command
    build = parser.parse_args(["corpus", "build", "x", "--out", "y"])
    assert build.passage_words == 100
    text = next(a for a in parser._actions if hasattr(a, "choices") and a.choices).choices["corpus"]
    help_text = (
        next(a for a in text._actions if hasattr(a, "choices") and a.choices)
        .choices["build"]
        .format_help()
    )
    assert "(default: 100)" in help_text  # --passage-words
