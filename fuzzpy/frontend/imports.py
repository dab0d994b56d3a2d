"""`import std.M;` and `import std.M (a, b);`: the standard library spliced
into a program (docs/language-notes.md, "Imports"; docs/semantics.md,
"The standard library").

A module is a `.fz` file of the package (`fuzzpy.language.library`), parsed
like any program. Importing it puts its declarations -- all of them, or the
listed names and the declarations those use -- before the program's own,
with their spans in the module's file. Nothing else changes: the checker
checks an imported `def` as it checks the program's own, and a `mechanism`
is verified by the same verifier and proof kernel (in its module's scope:
`fuzzpy.checker.scope.home`) and used only once proved. A library module
may import another (a cycle is FZ123); a name brought twice must be the
same declaration.

Diagnostics (rendering is elsewhere): FZ120 unknown module, FZ121 a name the
module does not define, FZ122 a program declaring a name it imports, FZ123 a
library module that cannot be read.
"""

from __future__ import annotations

import dataclasses
import difflib
from functools import cache

from fuzzpy.language import library
from fuzzpy.language.diagnostics import Diagnostic, FuzzError, Label
from fuzzpy.language.source import NO_SPAN, Span
from fuzzpy.language.syntax import Decl, ImportDecl, Program


def resolve(program: Program) -> Program:
    """The program with its imports' declarations first; FuzzError (FZ12x)
    with every import error found."""
    if not program.imports:
        return program
    errors: list[Diagnostic] = []
    brought: dict[str, tuple[Decl, ImportDecl]] = {}
    for imp in program.imports:
        try:
            for decl in _declarations(imp):
                if decl.name in brought and brought[decl.name][0] != decl:
                    errors.append(_conflict(decl, imp, brought[decl.name][1]))
                brought.setdefault(decl.name, (decl, imp))
        except FuzzError as error:
            errors.extend(error.diagnostics)
    errors.extend(_shadowed(program, brought))
    if errors:
        raise FuzzError(tuple(errors))
    own = tuple(program.decls)
    return dataclasses.replace(program, decls=tuple(d for d, _ in brought.values()) + own)


def home(file: str) -> Program | None:
    """The library module a declaration's span lies in, if any (its scope
    for the verifier)."""
    if not library.is_library_file(file):
        return None
    for name in library.modules():
        if str(library.module_file(name)) == file:
            return _module(name)
    return None


def _declarations(imp: ImportDecl) -> list[Decl]:
    module = _module_of(imp)
    decls = {d.name: d for d in module.decls}
    if imp.names is None:
        return list(module.decls)
    wanted: list[str] = []
    errors = []
    for name, span in zip(imp.names, imp.name_spans or (imp.span,) * len(imp.names), strict=True):
        if name in decls:
            wanted.append(name)
        else:
            errors.append(_unknown_name(imp, name, span, sorted(decls)))
    if errors:
        raise FuzzError(tuple(errors))
    needed = _closure(wanted, decls)
    return [d for d in module.decls if d.name in needed]


def _module_of(imp: ImportDecl) -> Program:
    known = library.modules()
    path = ".".join(imp.module)
    if len(imp.module) != 2 or imp.module[0] != library.ROOT:
        tail = imp.module[-1]
        guess = f"{library.ROOT}.{tail}" if tail in known else None
        raise FuzzError((Diagnostic(
            "FZ120", f"unknown module `{path}`: only the standard library can be imported, as `{library.ROOT}.NAME`",
            imp.module_span,
            hint=f"did you mean `{guess}`?" if guess else _listing(known),
        ),))
    name = imp.module[1]
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        raise FuzzError((Diagnostic(
            "FZ120", f"unknown module `{path}`", imp.module_span,
            hint=f"did you mean `{library.ROOT}.{close[0]}`?" if close else _listing(known),
        ),))
    return _module(name)


def _listing(known: tuple[str, ...]) -> str:
    return "the standard library's modules: " + ", ".join(f"`{library.ROOT}.{m}`" for m in known)


def _unknown_name(imp: ImportDecl, name: str, span: Span, names: list[str]) -> Diagnostic:
    path = ".".join(imp.module)
    elsewhere = [m for m in library.modules() if name in {d.name for d in _module(m).decls}]
    close = difflib.get_close_matches(name, names, n=1)
    if elsewhere:
        hint = f"`{name}` is in `{library.ROOT}.{elsewhere[0]}`"
    elif close:
        hint = f"did you mean `{close[0]}`?"
    else:
        hint = f"`{path}` defines " + ", ".join(f"`{n}`" for n in names)
    return Diagnostic("FZ121", f"`{path}` has no `{name}`", span, hint=hint)


def _closure(wanted: list[str], decls: dict[str, Decl]) -> set[str]:
    """The listed names and every module declaration they mention, transitively."""
    needed: set[str] = set()
    todo = list(wanted)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo.extend(n for n in _mentioned(decls[name]) if n in decls and n not in needed)
    return needed


def _mentioned(node: object) -> set[str]:
    """Every string in a syntax tree (a superset of the names it uses)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item) if f.compare)
    return found


def _shadowed(program: Program, brought: dict[str, tuple[Decl, ImportDecl]]) -> list[Diagnostic]:
    """A program may not declare a name it imports (FZ122): which one a use
    means would depend on the order of declarations."""
    errors = []
    for decl in program.decls:
        if decl.name in brought:
            _, imp = brought[decl.name]
            where = ".".join(imp.module)
            listed = imp.names is not None and decl.name in imp.names
            how = "imported" if imp.names is None or listed else "brought in (a listed name uses it)"
            at = imp.name_spans[imp.names.index(decl.name)] if listed and imp.names and imp.name_spans else imp.span
            errors.append(Diagnostic(
                "FZ122",
                f"`{decl.name}` is declared here and also {how} from `{where}`",
                _name_span(decl),
                labels=(Label(at, f"`{decl.name}` imported here"),),
                hint=_shadow_hint(decl.name, where, imp, listed),
            ))
    return errors


def _shadow_hint(name: str, where: str, imp: ImportDecl, listed: bool) -> str:
    """What resolves a declared name that is also imported (issue 31, F8:
    the hint said to list the names used even where the name was listed,
    or came with one that was)."""
    if imp.names is None:
        return f"rename your `{name}`, or import only the names you use, without `{name}`: `import {where} (...);`"
    if listed:
        others = [n for n in imp.names if n != name]
        fixed = f"`import {where} ({', '.join(others)});`" if others else f"no import of `{where}`"
        return f"rename your `{name}`, or use the library's: drop your declaration, or drop `{name}` from the list ({fixed})"
    return (f"rename your `{name}`: a name you import from `{where}` uses the library's `{name}`, which comes "
            "with it whatever the list says")


def _conflict(decl: Decl, imp: ImportDecl, first: ImportDecl) -> Diagnostic:
    """Two modules defining one name differently (never in the shipped library)."""
    return Diagnostic(
        "FZ122", f"`{decl.name}` is imported from `{'.'.join(first.module)}` and, differently, from "
        f"`{'.'.join(imp.module)}`", imp.span, labels=(Label(first.span, "first imported here"),),
        hint="list the names you use in one of the imports",
    )


def _name_span(decl: Decl) -> Span:
    span = getattr(decl, "name_span", None)
    return span if isinstance(span, Span) and span is not NO_SPAN else decl.span


@cache
def _module(name: str) -> Program:
    """A library module, parsed once per process."""
    from fuzzpy.frontend.parser import parse_program

    path = library.module_file(name)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FuzzError((Diagnostic(
            "FZ123", f"the standard library module `{library.ROOT}.{name}` cannot be read: {exc.strerror or exc}",
            Span(str(path), 1, 1, 1, 1), hint="reinstall fuzzpy",
        ),)) from None
    if name in _loading:  # a cycle of library imports: a bug of the library
        raise FuzzError((Diagnostic(
            "FZ123", f"the standard library module `{library.ROOT}.{name}` imports itself (through others)",
            Span(str(path), 1, 1, 1, 1),
        ),))
    _loading.add(name)
    try:
        return parse_program(text, str(path))  # its own imports resolved the same way
    finally:
        _loading.discard(name)


_loading: set[str] = set()
