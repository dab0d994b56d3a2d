"""Proofs cached on disk (fuzzpy/verifier/proof_cache.py).

A cached "proved" is reused only for exactly the same mechanism, constants
and verifier; anything else in the cache (damaged, forged, another key, an
untrusted directory) is ignored. To tell a reused proof from a fresh one,
the tests replace the prover by one that fails: a verdict that is still
"proved" then came from the cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fuzzpy.verifier as verifier_package
from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier import proof_cache
from fuzzpy.verifier.prover import SearchResult

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

MECHANISM = """
let scale = 1;

mechanism noisy (x : num, eps : num) : num
  requires eps > 0
  requires abs(dist(x)) <= 1
  privacy eps
{
  return x + lap(scale / eps);
}
"""


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("FUZZPY_CACHE", str(folder))
    verifier_package._cache.clear()
    yield folder / "proofs"
    verifier_package._cache.clear()


def _verify(text: str):  # noqa: ANN202
    program = parse_program(text, "m.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    with proof_cache.enabled():
        return verify_mechanism(decl, program)


def _prover_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on no proof can be found (nor a counterexample): only the
    cache can answer "proved"."""
    verifier_package._cache.clear()
    monkeypatch.setattr(verifier_package, "search", lambda info, seconds: SearchResult(False, reason="off"))
    monkeypatch.setattr(verifier_package, "refute", lambda info, seconds, max_length=6: (None, "off"))


def test_a_proof_is_stored_and_reused_without_proving_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _verify(MECHANISM)
    assert first.status == "proved" and not proof_cache.from_disk(first)
    (entry,) = cache.glob("*.json")
    stored = json.loads(entry.read_text())
    assert stored["key_sha256"] == entry.stem and stored["verdict"]["status"] == "proved"
    _prover_fails(monkeypatch)
    again = _verify(MECHANISM)
    assert again.status == "proved" and proof_cache.from_disk(again)
    assert (again.name, again.claim_text, again.vacuous) == (first.name, first.claim_text, first.vacuous)


def test_moving_or_reformatting_a_mechanism_keeps_its_proof(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _verify(MECHANISM)
    _prover_fails(monkeypatch)
    moved = "// a comment\n\n\n" + MECHANISM.replace("  return x + lap(scale / eps);", "return   x+lap(scale/eps) ;")
    assert _verify(moved).status == "proved"


@pytest.mark.parametrize("change", [
    ("lap(scale / eps)", "lap(scale / (2 * eps))"),  # the mechanism's body
    ("abs(dist(x)) <= 1", "abs(dist(x)) <= 2"),  # its precondition
    ("privacy eps", "privacy 2 * eps"),  # its claim
    ("let scale = 1;", "let scale = 1/2;"),  # a constant it reads
    ("mechanism noisy", "mechanism other"),  # its name
])
def test_any_change_to_what_is_proved_loses_the_proof(
    cache: Path, monkeypatch: pytest.MonkeyPatch, change: tuple[str, str]
) -> None:
    assert _verify(MECHANISM).status == "proved"
    _prover_fails(monkeypatch)
    assert _verify(MECHANISM.replace(*change)).status == "unknown"


def test_another_verifier_does_not_reuse_the_proof(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _verify(MECHANISM)
    _prover_fails(monkeypatch)
    monkeypatch.setattr(proof_cache, "verifier_digest", lambda: "0" * 64)
    assert _verify(MECHANISM).status == "unknown"


def _entry(cache: Path) -> tuple[Path, dict]:
    (path,) = cache.glob("*.json")
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("damage", ["truncated", "not json", "other key text", "other hash", "unknown status",
                                    "refuted", "other name", "wrong types", "other format"])
def test_a_damaged_or_forged_entry_is_never_read_as_proved(
    cache: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    _verify(MECHANISM)
    path, entry = _entry(cache)
    text = path.read_text()
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "not json":
        path.write_bytes(b"\x00\xff proved")
    else:
        if damage == "other key text":
            entry["key"] = entry["key"].replace("noisy", "noisx")
        elif damage == "other hash":
            entry["key_sha256"] = "0" * 64
        elif damage == "unknown status":
            entry["verdict"]["status"] = "maybe"
        elif damage == "refuted":
            entry["verdict"]["status"] = "refuted"
        elif damage == "other name":
            entry["verdict"]["name"] = "other"
        elif damage == "wrong types":
            entry["verdict"]["vacuous"] = "no"
        else:
            entry["format"] = "fuzzpy-proof 0"
        path.write_text(json.dumps(entry))
    _prover_fails(monkeypatch)
    assert _verify(MECHANISM).status == "unknown"


def test_an_entry_for_another_mechanism_under_this_name_is_ignored(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A "proved" written for one mechanism and renamed to another's key: its
    stored key text is not this mechanism's, so it proves nothing here."""
    _verify(MECHANISM)
    proved_path, _ = _entry(cache)
    verifier_package._cache.clear()
    leaky = MECHANISM.replace("lap(scale / eps)", "lap(scale / (4 * eps))").replace("privacy eps", "privacy eps / 8")
    with monkeypatch.context() as patched:
        patched.setattr(verifier_package, "search", lambda info, seconds: SearchResult(False, reason="off"))
        patched.setattr(verifier_package, "refute", lambda info, seconds, max_length=6: (None, "off"))
        assert _verify(leaky).status == "unknown"  # nothing stored for it
    program = parse_program(leaky, "m.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    from fuzzpy.checker.scope import static_constants

    key = proof_cache.key_text(decl, static_constants(program))
    import hashlib

    forged = cache / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
    forged.write_bytes(proved_path.read_bytes())
    _prover_fails(monkeypatch)
    assert _verify(leaky).status == "unknown"


def test_a_bad_entry_is_rewritten_once_the_mechanism_is_proved_again(cache: Path) -> None:
    _verify(MECHANISM)
    path, _ = _entry(cache)
    path.write_text("{")
    verifier_package._cache.clear()
    assert _verify(MECHANISM).status == "proved"
    assert json.loads(path.read_text())["verdict"]["status"] == "proved"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_cache_others_can_write_is_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _verify(MECHANISM)
    os.chmod(cache, 0o777)
    _prover_fails(monkeypatch)
    assert _verify(MECHANISM).status == "unknown"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("where", ["entry", "root"])
def test_an_entry_others_can_write_is_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """a17 F2: a 0666 entry in a private directory forged a proof; a
    world-writable cache root could have its directories replaced."""
    _verify(MECHANISM)
    path, _ = _entry(cache)
    os.chmod(path if where == "entry" else path.parent.parent, 0o666 if where == "entry" else 0o777)
    verifier_package._cache.clear()
    _prover_fails(monkeypatch)
    assert _verify(MECHANISM).status == "unknown"


def test_no_cache_when_turned_off_or_not_enabled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FUZZPY_CACHE", str(tmp_path))
    verifier_package._cache.clear()
    program = parse_program(MECHANISM, "m.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    assert verify_mechanism(decl, program).status == "proved"  # the library alone: no disk cache
    assert not (tmp_path / "proofs").exists()
    monkeypatch.setenv("FUZZPY_CACHE", "off")
    verifier_package._cache.clear()
    assert _verify(MECHANISM).status == "proved"
    assert not (tmp_path / "proofs").exists()
    verifier_package._cache.clear()


def test_tree_text_ignores_positions_and_sees_every_field() -> None:
    a = parse_program(MECHANISM, "a.fz")
    b = parse_program("\n\n" + MECHANISM, "b.fz")
    assert a == b and proof_cache.tree_text(a) == proof_cache.tree_text(b)
    c = parse_program(MECHANISM.replace("<= 1", "<= 1.5"), "c.fz")
    assert proof_cache.tree_text(a) != proof_cache.tree_text(c)


# ---------------------------------------------------------------- the commands


def test_check_and_run_reuse_what_verify_proved(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = str(EXAMPLES / "age_brackets_svt.fz")
    assert main(["verify", program]) == 0
    _prover_fails(monkeypatch)
    assert main(["check", program]) == 0
    verifier_package._cache.clear()
    code = main(["run", program, "first_large_bracket", "--data", f"db={EXAMPLES / 'data' / 'people.csv'}",
                 "--budget", "1", "--ledger", str(tmp_path / "l.sqlite")])
    assert code == 0
    verifier_package._cache.clear()
    capsys.readouterr()
    assert main(["verify", "--json", program]) == 0
    assert json.loads(capsys.readouterr().out)["mechanisms"][0]["cached"] is True


def test_verify_explain_proves_afresh(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = str(EXAMPLES / "mechanisms" / "above_threshold.fz")
    assert main(["verify", program]) == 0
    _prover_fails(monkeypatch)
    assert main(["verify", program]) == 0  # the cached proof
    verifier_package._cache.clear()
    assert main(["verify", "--explain", program]) == 1  # shows a proof, so it must find one


def test_a_cached_proof_loads_neither_the_prover_nor_z3(cache: Path) -> None:
    """The point of the cache is start-up: `verify` and `check` of a proved
    mechanism read the entry and never import the prover (nor z3)."""
    program = str(EXAMPLES / "age_brackets_svt.fz")
    env = {**os.environ, "FUZZPY_CACHE": str(cache.parent)}
    script = (
        "import sys\n"
        "from fuzzpy.cli import main\n"
        "codes = [main(['verify', sys.argv[1]]), main(['check', sys.argv[1]])]\n"
        "print(codes, sorted(m for m in ('z3', 'fuzzpy.verifier.prover', 'fuzzpy.verifier.refuter')"
        " if m in sys.modules))\n"
    )
    first = subprocess.run([sys.executable, "-c", script, program], env=env, capture_output=True, text=True,
                           timeout=300)
    assert first.stdout.splitlines()[-1] == "[0, 0] ['fuzzpy.verifier.prover', 'fuzzpy.verifier.refuter', 'z3']"
    again = subprocess.run([sys.executable, "-c", script, program], env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.stdout.splitlines()[-1] == "[0, 0] []", again.stderr
