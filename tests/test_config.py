"""[tool.kernlint]: every key type-checked from one table, which also gives the JSON schema."""

import json

import pytest
from click.testing import CliRunner

from kernlint.cli import main
from kernlint.config import KEYS, ConfigError, json_schema, load


def _load(tmp_path, body: str):
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\n" + body)
    return load(tmp_path)


@pytest.mark.parametrize("body,key,expected", [
    ('ir = "false"', "ir", "true or false"),
    ('occupancy-threshold = "high"', "occupancy-threshold", "a number"),
    ('occupancy-threshold = 2.0', "occupancy-threshold", "a number"),
    ('arch = "sm_999x"', "arch", "a string such as 'sm_90'"),
    ('select = "KL1"', "select", "a list of rule codes or prefixes"),
    ('select = ["E501"]', "select", "a list of rule codes or prefixes"),
    ('per-file-ignores = { "tests/*" = ["KLXYZ"] }', "per-file-ignores", "a table"),
    ('autotune-limit = 0', "autotune-limit", "an integer >= 1"),
    ('fail-level = "fatal"', "fail-level", "one of"),
    ('output-format = 3', "output-format", "one of"),
    ('[tool.kernlint.confirm]\ncommand = 1', "command", "a string"),
    ('extend-exclude = [1]', "extend-exclude", "a list of strings"),
])
def test_a_wrong_type_names_the_file_the_key_and_the_type(tmp_path, body, key, expected):
    if body.startswith("[tool"):
        (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\n" + body)
        with pytest.raises(ConfigError) as err:
            load(tmp_path)
    else:
        with pytest.raises(ConfigError) as err:
            _load(tmp_path, body)
    message = str(err.value)
    assert str(tmp_path / "pyproject.toml") in message and key in message and expected in message


def test_valid_values_are_read(tmp_path):
    config = _load(tmp_path, 'select = ["KL1"]\nextend-select = ["KL001"]\nir = true\narch = "sm_80"\n'
                             'occupancy-threshold = 0.25\nexclude = ["a"]\nextend-exclude = ["b"]\n'
                             '[tool.kernlint.confirm]\ncommand = "pytest -x"\n')
    assert config.select == ["KL1"] and config.extend_select == ["KL001"] and config.ir is True
    assert config.arch == "sm_80" and config.occupancy_threshold == 0.25 and config.exclude == ["a", "b"]
    assert config.confirm == {"command": "pytest -x"}


def test_unknown_keys_are_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown .* key"):
        _load(tmp_path, "selekt = []")


def test_schema_comes_from_the_key_table_and_is_printed():
    schema = json_schema()
    assert set(schema["properties"]) == {k.name for k in KEYS}
    out = CliRunner().invoke(main, ["config", "--schema"])
    assert out.exit_code == 0 and json.loads(out.output) == schema


def test_schema_agrees_with_the_checks(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    good = {"select": ["KL1"], "ir": True, "arch": "sm_90", "confirm": {"command": "x"}, "autotune-limit": 2}
    jsonschema.validate(good, json_schema())
    for bad in ({"ir": "false"}, {"select": "KL1"}, {"per-file-ignores": {"x": ["KLXYZ"]}}, {"confirm": {"x": 1}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, json_schema())


def test_every_key_is_documented_in_the_readme():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for key in KEYS:
        assert f"`{key.name}`" in readme, key.name


def test_readme_table_is_generated_from_the_key_table():
    from pathlib import Path

    from kernlint.config import markdown_table

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert markdown_table() in readme
