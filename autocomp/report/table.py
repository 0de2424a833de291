"""A printed table (markdown, CSV or LaTeX) and the one-decimal number format."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

TRACK_SHORT = {"minimal": "Min", "contextual": "Ctx"}
_LATEX = str.maketrans({
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$", "±": r"$\pm$", "≥": r"$\geq$", "≤": r"$\leq$", "×": r"$\times$",
    "→": r"$\rightarrow$", "−": "-", "–": "--", "…": r"\ldots{}"})
_NUMBER = re.compile(r"^[-+]?\d+(\.\d+)?(/[-+]?\d+(\.\d+)?)?(±\d+(\.\d+)?)?\**$|^-$")
WIDE = 8  # a table with more columns is scaled to the text width


def latex_escape(text) -> str:
    """Text as LaTeX typesets it: special characters escaped, symbols in math mode."""
    return str(text).translate(_LATEX)


def r1(x) -> str:
    if x is None:
        return "-"
    return str(Decimal(repr(float(x))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


class Table:
    def __init__(self, title: str, header: list[str], rows: list[list[str]]):
        self.title, self.header, self.rows = title, header, rows

    def render(self, fmt: str) -> str:
        if fmt == "csv":
            import csv
            import io

            buf = io.StringIO()
            w = csv.writer(buf)
            w.writerow([self.title])
            w.writerow(self.header)
            w.writerows(self.rows)
            return buf.getvalue()
        if fmt == "latex":
            return self.latex()
        lines = [f"**{self.title}**", "", "| " + " | ".join(self.header) + " |",
                 "|" + "|".join("---" for _ in self.header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)

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
        return (f"<table><caption>{escape(self.title)}</caption>\n<thead><tr>{head}</tr>"
                f"</thead>\n<tbody>\n{body}</tbody></table>")

    def latex(self) -> str:
        """A booktabs table (\\usepackage{booktabs}; graphicx for wide ones): numbers
        right-aligned, text left, the title as the caption."""
        align = "".join("r" if num else "l" for num in self.numeric_columns())
        wide = len(self.header) > WIDE
        lines = [r"% needs \usepackage{booktabs}" + (" and graphicx" if wide else ""),
                 r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(self.title)}}}",
                 r"\resizebox{\linewidth}{!}{%" if wide else None,
                 rf"\begin{{tabular}}{{{align}}}", r"\toprule",
                 " & ".join(latex_escape(h) for h in self.header) + r" \\", r"\midrule",
                 *[" & ".join(latex_escape(c) for c in row) + r" \\" for row in self.rows],
                 r"\bottomrule", r"\end{tabular}" + ("}" if wide else ""), r"\end{table}"]
        return "\n".join(line for line in lines if line is not None)
