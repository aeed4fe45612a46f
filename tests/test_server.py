"""`kernlint server` end to end: a client process speaks JSON-RPC to it over stdio (initialize,
didOpen, didChange, didSave, publishDiagnostics, codeAction, shutdown, exit)."""

import json
import queue
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("pygls")  # the `lsp` extra (part of `.[dev]`)

ROOT = Path(__file__).resolve().parents[1]
BAD = (ROOT / "fixtures" / "triton" / "off_by_one_bad.py").read_text()
GRID = (ROOT / "fixtures" / "triton" / "grid_tail_bad.py").read_text()


class Client:
    """A minimal LSP client: Content-Length framing over the server's stdin/stdout."""

    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "kernlint", "server"], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                key, value = line.split(":", 1)
                headers[key.lower()] = value.strip()
            self.messages.put(json.loads(out.read(int(headers["content-length"]))))

    def send(self, message: dict):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict):
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)

    def wait(self, match, timeout=120):
        while True:
            message = self.messages.get(timeout=timeout)
            if match(message):
                return message

    def open(self, uri: str, text: str, version: int = 1):
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                              "text": text}})

    def diagnostics(self, uri: str, version: int):
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri and m["params"].get("version") == version)["params"]["diagnostics"]


@contextmanager
def session(project: Path):
    """An initialized server; shut down (and its exit code checked) at the end."""
    client = Client(project)
    try:
        init = client.request("initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        yield client, init["result"]
        assert client.request("shutdown", None)["result"] is None
        client.notify("exit", None)
        assert client.proc.wait(timeout=60) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nignore = ["KL110"]\n')
    return tmp_path


def test_language_server_session(project):
    path = project / "scale.py"
    path.write_text(BAD)
    uri = path.as_uri()
    with session(project) as (client, init):
        caps = init["capabilities"]
        assert init["serverInfo"]["name"] == "kernlint"
        assert caps["codeActionProvider"] and caps["textDocumentSync"]["save"] is not None
        client.open(uri, BAD)
        diags = client.diagnostics(uri, 1)
        assert sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"]) for d in diags) == [
            ("KL101", 9, 8), ("KL102", 10, 4)]
        assert all(d["source"] == "kernlint" and d["severity"] == 1 for d in diags)

        # the quick fixes of a finding: the (unsafe) `<` fix and a noqa comment
        kl101 = next(d for d in diags if d["code"] == "KL101")
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": kl101["range"], "context": {"diagnostics": [kl101]}})["result"]
        titles = [a["title"] for a in actions]
        assert any("Fix KL101" in t and "unsafe" in t for t in titles), titles
        noqa = next(a for a in actions if "noqa" in a["title"])
        edit = noqa["edit"]["documentChanges"][0]["edits"][0]
        assert edit["newText"].endswith("mask=offs <= n, other=0.0)  # noqa: KL101") and edit["range"]["start"]["line"] == 9

        # an edit that silences one finding with the documented comment: the next publish drops it
        fixed_line = BAD.split("\n")[9] + "  # noqa: KL101"
        line_len = len(BAD.split("\n")[9])
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 9, "character": 0}, "end": {"line": 9, "character": line_len}},
                                "text": fixed_line}]})
        assert [d["code"] for d in client.diagnostics(uri, 2)] == ["KL102"]

        # a whole-document change to another file's text; then a save (re-lint on save)
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": GRID}]})
        grid = client.diagnostics(uri, 3)
        assert [d["code"] for d in grid] == ["KL108"]
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": grid[0]["range"], "context": {"diagnostics": grid}})["result"]
        fix = next(a for a in actions if a["title"].startswith("Fix KL108"))
        assert fix["edit"]["documentChanges"][0]["edits"][0]["newText"] == "triton.cdiv(n, 256)"
        path.write_text(GRID)
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        assert [d["code"] for d in client.diagnostics(uri, 3)] == ["KL108"]


def test_configuration_comes_from_tool_kernlint(project):
    (project / "pyproject.toml").write_text('[tool.kernlint]\nselect = ["KL102"]\n')
    path = project / "scale.py"
    path.write_text(BAD)
    with session(project) as (client, _):
        client.open(path.as_uri(), BAD)
        assert [d["code"] for d in client.diagnostics(path.as_uri(), 1)] == ["KL102"]


def test_ir_phase_runs_on_save_when_enabled(project):
    pytest.importorskip("triton")
    good = (ROOT / "fixtures" / "triton" / "off_by_one_good.py").read_text()  # one IR finding: KL305
    (project / "pyproject.toml").write_text("[tool.kernlint]\nir = true\n")
    path = project / "scale.py"
    path.write_text(good)
    uri = path.as_uri()
    with session(project) as (client, _):
        client.open(uri, good)
        assert client.diagnostics(uri, 1) == []  # typing: the source phase only
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        saved = client.diagnostics(uri, 1)
        assert [(d["code"], d["data"]["phase"]) for d in saved] == [("KL305", "ir")]
        # an edit makes the IR findings stale: they go until the next save
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": good + "\n"}]})
        assert client.diagnostics(uri, 2) == []
    assert (project / ".kernlint_cache" / ".gitignore").exists()
