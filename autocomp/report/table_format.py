"""A printed table (markdown, CSV or LaTeX) and the one-decimal number format."""

from __future__ import annotations

import re

from autocomp.eval.metrics import r1 as _r1

__all__ = ["r1", "Table", "ci", "scored", "signed", "interval_of", "latex_escape"]

TRACK_SHORT = {"minimal": "Min", "contextual": "Ctx"}
KIND_SHORT = {"swap": "Swap", "confusion": "Conf.", "vary_value": "Vary value",
              "vary_object": "Vary obj."}
_LATEX = str.maketrans({
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$", "±": r"$\pm$", "≥": r"$\geq$", "≤": r"$\leq$", "×": r"$\times$",
    "→": r"$\rightarrow$", "−": "-", "–": "--", "…": r"\ldots{}"})
_NUM = r"[-+]?\d+(?:\.\d+)?"
_CELL = rf"{_NUM}(?: \[{_NUM}, {_NUM}\])?"  # a number and its interval
_NUMBER = re.compile(rf"^{_CELL}(?: ?/ ?{_CELL})*(?: ?± ?{_NUM})?\**$|^-$")
INTERVAL_NOTE = "95% interval in brackets"
WIDE = 8  # a table with more columns is scaled to the text width


def md_cell(text) -> str:
    """A markdown table cell: a name holding "|" or a newline cannot split the row."""
    return " ".join(str(text).splitlines()).replace("|", "\\|")


def md_code(text) -> str:
    """`text` as inline markdown code whatever it holds (backticks, HTML, "|", newlines):
    a name read from a run is shown, never read as markup."""
    text = md_cell(text)
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_fence(text: str, lang: str = "") -> str:
    """A fenced block longer than any backtick run inside, so no line of `text` ends it."""
    ticks = "`" * max(3, max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def latex_escape(text) -> str:
    """Text as LaTeX typesets it: special characters escaped, symbols in math mode."""
    return str(text).translate(_LATEX)


def latex_text(text) -> str:
    """Prose with `code` spans (titles, footnotes): escaped, each span in \\texttt (a
    backtick in LaTeX is an opening quote)."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: no spans
        return latex_escape(text).replace("`", r"\textasciigrave{}")
    return "".join(latex_escape(p) if i % 2 == 0 else rf"\texttt{{{latex_escape(p)}}}"
                   for i, p in enumerate(parts))


def signed(x: float) -> str:
    """One decimal with its sign ("+11.7", "-2.6", "0.0"), as differences are printed."""
    text = r1(x)
    return "0.0" if float(text) == 0 else f"+{text}" if float(text) > 0 else text


def interval_of(metrics: dict, key: str, n: int | None) -> tuple[float, float] | None:
    """A score's 95% interval as eval stored it; for results written before eval stored
    intervals, the Clopper-Pearson interval of the score over its n items."""
    got = (metrics.get("intervals") or {}).get(key)
    if got:
        return float(got[0]), float(got[1])
    value = metrics.get(key)
    if value is None or not n:
        return None
    from autocomp.eval.intervals import exact

    return exact(float(value) * n / 100.0, int(n))


def items_of(result: dict, key: str) -> int:
    """How many items a score of a result is over."""
    m = result["metrics"]
    if key == "accuracy_paired":
        return int(m.get("paired_items") or 0)
    if key.startswith("accuracy_matched"):
        return int(m.get("matched_items") or 0)
    if key.startswith("image_score"):
        return int(m.get("image_direction_items") or 0)
    return int(result.get("n_items") or 0)


def r1(x) -> str:
    """One decimal, rounded half up as the papers print (6.25 -> "6.3"), as a Cell that
    keeps the number unrounded for the long CSV; "-" for None."""
    text = _r1(x)
    return text if x is None else Cell(text, float(x))


class Cell(str):
    """A cell as printed that keeps its unrounded numbers: the long CSV writes those (6.25,
    not the printed 6.3; a p printed "<0.001" as its value)."""

    value: float | None
    low: float | None
    high: float | None

    def __new__(cls, text: str, value=None, low=None, high=None):
        cell = super().__new__(cls, text)
        cell.value, cell.low, cell.high = value, low, high
        return cell


def index_results(results):
    """(model, task, N, track, kind) -> result, and the models in the order first seen."""
    idx = {}
    for r in results:
        idx[(r["model"], r["task"], r["n"], r["track"], r["kind"])] = r
    models = list(dict.fromkeys(r["model"] for r in results))
    return idx, models


def ci(value, interval) -> str:
    """"59.0 [49.2, 68.1]": a score and its interval, one decimal each (a Cell)."""
    if value is None:
        return "-"
    if interval is None:
        return r1(value)
    return Cell(f"{r1(value)} [{r1(interval[0])}, {r1(interval[1])}]", float(value),
                float(interval[0]), float(interval[1]))


def scored(result: dict | None, key: str = "accuracy") -> str:
    """A result's score with its 95% interval ("-" where there is none)."""
    if not result or result["metrics"].get(key) is None:
        return "-"
    m = result["metrics"]
    return ci(m[key], interval_of(m, key, items_of(result, key)))


class Table:
    def __init__(self, title: str, header: list[str], rows: list[list[str]],
                 notes: list[str] | None = None):
        self.title, self.header, self.rows = title, header, rows
        self.notes = list(notes or [])  # footnotes: what an aggregate pools, what is left out

    def render(self, fmt: str) -> str:
        if fmt == "csv":
            import csv
            import io

            buf = io.StringIO()
            w = csv.writer(buf)
            w.writerow([self.title])
            w.writerow(self.header)
            w.writerows(self.rows)
            w.writerows([[f"Note: {note}"] for note in self.notes])
            return buf.getvalue()
        if fmt == "latex":
            return self.latex()
        lines = [f"**{self.title}**", "", "| " + " | ".join(map(md_cell, self.header)) + " |",
                 "|" + "|".join("---" for _ in self.header) + "|"]
        lines += ["| " + " | ".join(map(md_cell, row)) + " |" for row in self.rows]
        if self.notes:
            lines += ["", *[f"- {note}" for note in self.notes]]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"title": self.title, "header": list(self.header),
                "rows": [list(r) for r in self.rows], "notes": list(self.notes)}

    def numeric_columns(self) -> list[bool]:
        """Per column: every cell a number ("12.3", "+1.0", "50.0/6.3", "1.2±0.3", "-"),
        the first (row names) never."""
        return [bool(i) and all(_NUMBER.match(str(row[i]).strip()) for row in self.rows
                                if i < len(row)) for i in range(len(self.header))]

    def html(self) -> str:
        """An HTML table, the title as its caption, numbers right-aligned."""
        from html import escape

        numeric = self.numeric_columns()

        def cell(tag, i, text):
            return f"<{tag}{' class=num' if numeric[i] else ''}>{escape(str(text))}</{tag}>"

        head = "".join(cell("th", 0, h) for h in self.header)
        body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row))
                       + "</tr>\n" for row in self.rows)
        notes = "".join(f"<p class=note>{escape(note)}</p>\n" for note in self.notes)
        return (f"<table><caption>{escape(self.title)}</caption>\n<thead><tr>{head}</tr>"
                f"</thead>\n<tbody>\n{body}</tbody></table>\n{notes}")

    def latex(self) -> str:
        """A booktabs table (\\usepackage{booktabs}; graphicx for wide ones): numbers
        right-aligned, text left, the title as the caption."""
        align = "".join("r" if num else "l" for num in self.numeric_columns())
        wide = len(self.header) > WIDE
        env = "table*" if wide else "table"  # a wide table spans both columns of a paper
        lines = [r"% needs \usepackage{booktabs}" + (" and adjustbox" if wide else ""),
                 rf"\begin{{{env}}}[t]", r"\centering", rf"\caption{{{latex_text(self.title)}}}",
                 # small type and tight columns first; scaled down only if still too wide
                 r"\scriptsize\setlength{\tabcolsep}{3pt}" if wide else None,
                 r"\begin{adjustbox}{max width=\textwidth}" if wide else None,
                 rf"\begin{{tabular}}{{{align}}}", r"\toprule",
                 " & ".join(latex_escape(h) for h in self.header) + r" \\", r"\midrule",
                 *[" & ".join(latex_escape(c) for c in row) + r" \\" for row in self.rows],
                 r"\bottomrule", r"\end{tabular}",
                 r"\end{adjustbox}" if wide else None,
                 *[rf"\par\footnotesize {latex_text(note)}" for note in self.notes],
                 rf"\end{{{env}}}"]
        return "\n".join(line for line in lines if line is not None)


LONG_COLUMNS = ["table", "row", "model", "task", "n", "track", "benchmark", "column",
                "value", "low", "high", "text"]
# a table's columns that say which cell a row is (its keys in the long form)
_KEYS = {"Model": "model", "Model type": "model", "Task": "task", "N": "n", "Track": "track",
         "Benchmark": "benchmark"}
_CELL = re.compile(r"^([+-]?\d[\d,]*(?:\.\d+)?)(?: \[([+-]?\d+(?:\.\d+)?), "
                   r"([+-]?\d+(?:\.\d+)?)\])?(?: n=\d+)?$")
_WIDE = re.compile(r"^(\S+) N=(\d+) (Min|Ctx) (.+)$")  # Table 4's "shape_color N=2 Min Swap"


def long_csv(tables: list[Table]) -> str:
    """Several tables as one CSV in long form: one header (LONG_COLUMNS), a row per number
    with its own keys (table, the row's index in it, model, task, N, track, benchmark
    where the table says them, in its rows or its column names) and the number itself,
    its interval's bounds as numbers, and the cell as printed (`text`: also what is not a
    number, such as "<0.001"); a table's footnotes as columns "note 1", "note 2", ... of
    row -1. (table, row, column) is unique, so pandas pivots it; "\n" line ends."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(LONG_COLUMNS)
    for t in tables:
        keys = {i: _KEYS[h] for i, h in enumerate(t.header) if h in _KEYS}
        if not keys:
            keys = {0: "model"}  # the first column names the row
        for r, row in enumerate(t.rows):
            base = dict.fromkeys(LONG_COLUMNS[2:7], "")
            base.update({name: row[i] for i, name in keys.items() if i < len(row)})
            for i, (h, cell) in enumerate(zip(t.header, row, strict=False)):
                if i in keys:
                    continue
                got = dict(base)
                wide = _WIDE.match(h)
                if wide and not got["task"]:
                    got.update(task=wide[1], n=wide[2], track=wide[3], benchmark=wide[4])
                m = _CELL.match(str(cell).strip())
                value, low, high = ((m[1].replace(",", ""), m[2] or "", m[3] or "") if m
                                    else ("", "", ""))
                if isinstance(cell, Cell):  # its own numbers, unrounded
                    value, low, high = ("" if x is None else repr(float(x))
                                        for x in (cell.value, cell.low, cell.high))
                w.writerow([t.title, r, *(got[k] for k in LONG_COLUMNS[2:7]), h, value, low,
                            high, cell])
        w.writerows([t.title, -1, "", "", "", "", "", f"note {i}", "", "", "", note]
                    for i, note in enumerate(t.notes, 1))
    return buf.getvalue()
