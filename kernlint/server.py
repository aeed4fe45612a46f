"""``kernlint server``: the language server (LSP over stdio, pygls).

Diagnostics on open, change and save come from the same run as ``kernlint check`` on the editor's
buffer (source phase, selection, per-file ignores and suppressions from the nearest
``[tool.kernlint]``). With ``ir = true`` in the configuration and the ``ir`` extra installed, a save
also runs the IR phase on the saved file (cached in ``.kernlint_cache/``); its findings stay until
the buffer changes. Code actions: a ``# noqa: CODE`` comment for every finding, and the fixes of
``--fix`` / ``--unsafe-fixes`` where a rule has one.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from kernlint import __version__
from kernlint.check import Options, enabled_rules, run_check
from kernlint.config import ConfigError, load
from kernlint.extras import missing
from kernlint.fixes import Fix, add_noqa_comments, fix_for
from kernlint.model import FileError, Finding, Level, Span

SOURCE = "kernlint"
SEVERITY = {Level.ERROR: lsp.DiagnosticSeverity.Error, Level.WARNING: lsp.DiagnosticSeverity.Warning,
            Level.NOTE: lsp.DiagnosticSeverity.Information}

server = LanguageServer("kernlint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
# uri -> (the text the IR phase saw at the last save, its findings)
_ir_at_save: dict[str, tuple[str, list[Finding]]] = {}


def _position(lines: list[str], line: int, col: int) -> lsp.Position:
    """A 1-based line and character column as LSP's 0-based line and UTF-16 offset."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return lsp.Position(line=max(line - 1, 0), character=len(text[: max(col - 1, 0)].encode("utf-16-le")) // 2)


def _range(lines: list[str], span: Span) -> lsp.Range:
    return lsp.Range(start=_position(lines, span.line, span.col), end=_position(lines, span.end_line, span.end_col))


def _diagnostic(lines: list[str], f: Finding) -> lsp.Diagnostic:
    return lsp.Diagnostic(
        range=_range(lines, f.span), message=f.message, severity=SEVERITY[f.level], code=f.rule, source=SOURCE,
        data=f.to_dict(),
    )


def _error_diagnostic(lines: list[str], e: FileError) -> lsp.Diagnostic:
    start = _position(lines, e.line, e.col)
    return lsp.Diagnostic(range=lsp.Range(start=start, end=start), message=e.message,
                          severity=lsp.DiagnosticSeverity.Error, source=SOURCE)


def lint_buffer(path: Path, text: str, ir: bool = False) -> tuple[list[Finding], list[FileError]]:
    """What ``kernlint check`` reports for ``text`` as the contents of ``path``."""
    try:
        config = load(path.parent)
    except ConfigError as exc:
        return [], [FileError(str(path), f"[tool.kernlint]: {exc}")]
    if config.is_excluded(path):
        return [], []
    options = Options(stdin_filename=config.relpath(path))
    result = run_check([Path("-")], config, options, stdin=text.encode("utf-8"))
    if ir and config.ir and missing(("triton", "lark", "numpy")) is None:
        from kernlint.ir_glue import add_ir_findings

        add_ir_findings(result, config, enabled_rules(config, options), config.arch or "sm_90")
    return result.findings, result.errors


def publish(ls: LanguageServer, uri: str, ir: bool = False) -> None:
    doc = ls.workspace.get_text_document(uri)
    if not doc.path.endswith(".py"):
        return
    text = doc.source
    findings, errors = lint_buffer(Path(doc.path), text, ir=ir)
    if ir:
        from kernlint.model import Phase

        _ir_at_save[uri] = (text, [f for f in findings if f.phase is not Phase.SOURCE])
    elif uri in _ir_at_save and _ir_at_save[uri][0] == text:
        findings = findings + _ir_at_save[uri][1]
    lines = text.split("\n")
    diagnostics = [_error_diagnostic(lines, e) for e in errors] + [_diagnostic(lines, f) for f in findings]
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, version=doc.version,
                                                                      diagnostics=diagnostics))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
def did_save(ls: LanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    publish(ls, params.text_document.uri, ir=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    _ir_at_save.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


def _edit(uri: str, version: int | None, lines: list[str], edits: list[tuple[Span, str]]) -> lsp.WorkspaceEdit:
    changes = [lsp.TextEdit(range=_range(lines, span), new_text=text) for span, text in edits]
    doc = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=doc, edits=changes)])


def _noqa_action(uri, version, source: str, lines: list[str], finding: Finding, diag) -> lsp.CodeAction | None:
    new, changed = add_noqa_comments(source, [finding])
    if not changed:
        return None
    new_lines = new.split("\n")
    at = next(i for i, (a, b) in enumerate(zip(lines, new_lines)) if a != b)
    span = Span(at + 1, 1, at + 1, len(lines[at]) + 1)
    return lsp.CodeAction(title=f"Suppress {finding.rule} on this line (# noqa: {finding.rule})",
                          kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                          edit=_edit(uri, version, lines, [(span, new_lines[at])]))


def _fix_action(uri, version, lines: list[str], finding: Finding, fix: Fix, diag) -> lsp.CodeAction:
    title = f"Fix {finding.rule}: {fix.title}" + ("" if fix.safe else " (unsafe)")
    return lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=fix.safe,
                          edit=_edit(uri, version, lines, [(e.span, e.text) for e in fix.edits]))


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_action(ls: LanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    source = doc.source
    lines = source.split("\n")
    actions = []
    for diag in params.context.diagnostics:
        if diag.source != SOURCE or not isinstance(diag.data, dict) or "rule" not in diag.data:
            continue
        finding = Finding.from_dict(diag.data)
        fix = fix_for(finding, source)
        if fix is not None:
            actions.append(_fix_action(doc.uri, doc.version, lines, finding, fix, diag))
        noqa = _noqa_action(doc.uri, doc.version, source, lines, finding, diag)
        if noqa is not None:
            actions.append(noqa)
    return actions


def serve() -> None:
    server.start_io()
