"""Which atoms and compounds of a run's concepts a training-caption corpus holds (CREPE's
Seen(A, D) and Seen(C, D)), streamed: memory holds one batch of captions and the targets,
never the corpus, whatever its size.

A corpus is a text file (a caption per line), JSONL, CSV / TSV or parquet (a column of
captions). An atom is seen where its words stand as words in a caption (an object in its
singular or plural form). A compound is seen where the semantic-preservation check's own
parser (language/check.py) matches it in a caption, with the article left optional, as
real captions often drop it ("red cars on a road"), and plural nouns allowed. Captions are
matched only against targets whose words they hold, and a target found is never looked
for again; the scan stops early once every target is found (`rows` says how far it read).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autocomp.bench.atoms import atoms, compounds
from autocomp.core.errors import AutocompError
from autocomp.core.scene import Object, Relation, SceneGraph
from autocomp.language.check import check_caption

BATCH = 65536
_TOKEN = re.compile(r"[^\W_][\w'+-]*")


@dataclass(frozen=True)
class _Written:
    """An object name as a corpus may write it: singular or plural, never counted."""

    forms: tuple[str, ...]
    counted: bool = False


MAX_LINE = 1 << 16  # characters: a longer line is no caption (skipped and counted)
SNIFF = 1 << 16  # bytes read to tell a text file from a binary one


def read_captions(path: Path, column: str,
                  skipped: dict | None = None) -> tuple[int | None, Iterator[list[str]]]:
    """(rows when the file says, batches of captions) of a corpus file. Text lines longer
    than MAX_LINE characters are skipped, counted in `skipped["too_long"]`; bytes that are
    not UTF-8 are read as U+FFFD. A file that is not a regular file, or looks binary (NUL
    bytes in its first 64 KiB), is one line."""
    path = Path(path)
    if not path.exists():
        raise AutocompError("no such corpus file", file=path)
    if not path.is_file():
        raise AutocompError("not a regular file (a folder, FIFO or device): a corpus is a "
                            "file of captions", file=path)
    skipped = {} if skipped is None else skipped
    skipped.setdefault("too_long", 0)
    suffix = "".join(path.suffixes[-2:]).lower() if path.suffix == ".gz" else \
        path.suffix.lower()
    if suffix == ".parquet":
        return _parquet(path, column)
    if suffix not in (".jsonl", ".json", ".ndjson", ".csv", ".tsv", ".txt", ""):
        raise AutocompError("expected a .txt, .jsonl, .csv, .tsv or .parquet corpus", file=path)
    with open(path, "rb") as fh:
        if b"\0" in fh.read(SNIFF):
            raise AutocompError("looks binary (NUL bytes in its first 64 KiB), not a text "
                                "corpus", file=path)
    if suffix in (".jsonl", ".json", ".ndjson"):
        return None, _jsonl(path, column, skipped)
    if suffix in (".csv", ".tsv"):
        return None, _csv(path, column, "\t" if suffix == ".tsv" else ",", skipped)
    return None, _text(path, skipped)


def _parquet(path: Path, column: str):
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several kinds for a file that is not parquet
        raise AutocompError(f"not a readable parquet file ({exc})", file=path) from None
    if column not in pf.schema_arrow.names:
        raise AutocompError(f"no column {column!r} (columns: "
                            f"{', '.join(pf.schema_arrow.names)})", file=path,
                            field="corpus_column")

    def batches():
        for batch in pf.iter_batches(batch_size=BATCH, columns=[column]):
            yield batch.column(0).to_pylist()
    return pf.metadata.num_rows, batches()


def _chunked(values) -> Iterator[list]:
    batch = []
    for v in values:
        batch.append(v)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _lines(fh, skipped: dict) -> Iterator[str]:
    """The file's lines, none longer than MAX_LINE characters held in memory: a longer one
    is read past in pieces and counted."""
    while True:
        line = fh.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith("\n"):
            while (rest := fh.readline(MAX_LINE)) and not rest.endswith("\n"):
                pass
            skipped["too_long"] += 1
            continue
        yield line


def _open(path: Path, newline=None):
    return open(path, encoding="utf-8", errors="replace", newline=newline)


def _text(path: Path, skipped: dict):
    with _open(path) as fh:
        yield from _chunked(line.rstrip("\n") for line in _lines(fh, skipped))


def _jsonl(path: Path, column: str, skipped: dict):
    def values():
        with _open(path) as fh:
            for i, line in enumerate(_lines(fh, skipped), start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    raise AutocompError("not a JSON line", file=path, entry=f"line {i}") \
                        from None
                if not isinstance(row, dict) or column not in row:
                    raise AutocompError(f"no field {column!r}", file=path, entry=f"line {i}",
                                        field="corpus_column")
                yield row[column]
    yield from _chunked(values())


def _csv(path: Path, column: str, delimiter: str, skipped: dict):
    def values():
        with _open(path, newline="") as fh:
            reader = csv.DictReader(_lines(fh, skipped), delimiter=delimiter)
            try:
                if column not in (reader.fieldnames or []):
                    raise AutocompError(f"no column {column!r} (columns: "
                                        f"{', '.join(reader.fieldnames or [])})", file=path,
                                        field="corpus_column")
                for row in reader:
                    yield row[column]
            except csv.Error as exc:
                raise AutocompError(f"not readable as CSV ({exc})", file=path,
                                    entry=f"line {reader.line_num}") from None
    yield from _chunked(values())


class Targets:
    """The atoms and compounds to look for, indexed by a word each must hold."""

    def __init__(self, graphs, tasks: dict):
        self.nouns: dict[str, tuple[str, ...]] = {}
        longer = set()
        for task in tasks.values():
            longer.update(task.object_forms)
            for name, noun in task.nouns.items():
                self.nouns.setdefault(name, tuple(dict.fromkeys((noun.form, name,
                                                                 noun.plural))))
        self.longer = tuple(sorted(longer))
        self.atoms, self.compounds = set(), set()
        for g in graphs:
            self.atoms |= atoms(g)
            self.compounds |= compounds(g)
        self.by_word: dict[str, list] = {}  # an atom's first word -> (atom, its pattern)
        for unit in sorted(self.atoms):
            phrases = self.forms(unit[1]) if unit[0] == "object" else (unit[1],)
            for phrase in phrases:
                pattern = re.compile(rf"(?<![\w+-]){_words(phrase)}(?![\w+])", re.IGNORECASE)
                self.by_word.setdefault(_first(phrase), []).append((unit, pattern))
        # a compound under (its value's or predicate's first word, a noun form's first
        # word): a caption is matched only against compounds whose two words it holds
        self.by_pair: dict[tuple[str, str], list] = {}
        for unit in sorted(self.compounds):
            key, noun = (unit[1], unit[2]) if unit[0] == "value-object" else (unit[2], unit[1])
            entry = (unit, self.graph(unit))
            for first in {_first(f) for f in self.forms(noun)}:
                self.by_pair.setdefault((_first(key), first), []).append(entry)
        self.keys = frozenset(k for k, _ in self.by_pair)  # value / predicate first words

    def forms(self, name: str) -> tuple[str, ...]:
        return self.nouns.get(name) or (name,)

    def noun(self, name: str) -> _Written:
        return _Written(self.forms(name))

    @staticmethod
    def graph(unit: tuple) -> SceneGraph:
        if unit[0] == "value-object":
            return SceneGraph((Object(unit[2], (unit[1],)),))
        return SceneGraph((Object(unit[1]), Object(unit[3])), (Relation(0, unit[2], 1),))

    def nouns_in(self, unit: tuple, tokens: set[str]) -> bool:
        names = (unit[2],) if unit[0] == "value-object" else (unit[1], unit[3])
        return all(any(f.split()[0].lower() in tokens for f in self.forms(n)) for n in names)


def _first(phrase: str) -> str:
    return phrase.split()[0].lower()


def _words(phrase: str) -> str:
    return r"\s+".join(re.escape(w) for w in phrase.split())


def scan(path: Path, column: str, records: list[dict], tasks: dict, progress=None) -> dict:
    """{"atoms", "compounds": the targets seen; "rows": captions read; "empty": rows with
    no caption; "too_long": lines over MAX_LINE characters skipped; "targets": how many
    were looked for}."""
    from autocomp.core.progress import Progress

    graphs = [SceneGraph.from_dict(r["graph"]) for r in records]
    targets = Targets(graphs, {r["task"]: tasks[r["task"]] for r in records})
    skipped: dict = {}
    total, batches = read_captions(path, column, skipped)
    wanted = len(targets.atoms) + len(targets.compounds)
    seen_atoms, seen_compounds = set(), set()
    rows = empty = 0
    bar = progress or Progress(f"corpus {Path(path).name}", total, unit="caption")
    try:
        for batch in batches:
            for caption in batch:
                rows += 1
                if not isinstance(caption, str) or not caption.strip():
                    empty += 1
                    continue
                _match(caption, targets, seen_atoms, seen_compounds)
            done = len(batch)
            del batch  # not alive while the next one is read: one batch in memory
            bar.update(done, f"{len(seen_atoms):,} of {len(targets.atoms):,} atoms, "
                       f"{len(seen_compounds):,} of {len(targets.compounds):,} compounds seen")
            if len(seen_atoms) + len(seen_compounds) == wanted:
                break  # every target found: the rest cannot change a label
    finally:
        if progress is None:
            bar.close()
    return {"atoms": seen_atoms, "compounds": seen_compounds, "rows": rows, "empty": empty,
            "too_long": skipped.get("too_long", 0), "targets": wanted,
            "complete": total is None or rows == total}


def _match(caption: str, targets: Targets, seen_atoms: set, seen_compounds: set) -> None:
    tokens = {t.lower() for t in _TOKEN.findall(caption)}
    for token in tokens:
        for unit, pattern in targets.by_word.get(token, ()):
            if unit not in seen_atoms and pattern.search(caption):
                seen_atoms.add(unit)
    by_pair = targets.by_pair
    for a in tokens & targets.keys:
        for b in tokens:
            for unit, graph in by_pair.get((a, b), ()):
                if unit not in seen_compounds and targets.nouns_in(unit, tokens) and \
                        check_caption(caption, graph, targets.noun, targets.longer,
                                      articles=False).passed:
                    seen_compounds.add(unit)
