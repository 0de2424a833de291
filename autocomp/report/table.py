"""A printed table (markdown, CSV or LaTeX) and the one-decimal number format."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

TRACK_SHORT = {"minimal": "Min", "contextual": "Ctx"}


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
            def esc(s):
                return str(s).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")
            cols = "l" + "r" * (len(self.header) - 1)
            lines = [f"% {self.title}", rf"\begin{{tabular}}{{{cols}}}", r"\toprule",
                     " & ".join(esc(h) for h in self.header) + r" \\", r"\midrule"]
            lines += [" & ".join(esc(c) for c in row) + r" \\" for row in self.rows]
            lines += [r"\bottomrule", r"\end{tabular}"]
            return "\n".join(lines)
        lines = [f"**{self.title}**", "", "| " + " | ".join(self.header) + " |",
                 "|" + "|".join("---" for _ in self.header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)
