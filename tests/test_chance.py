import json

from click.testing import CliRunner

from autocomp.cli import main
from autocomp.concepts.sampling import value_patterns
from autocomp.negatives.chance import percent

TABLE4 = {  # Auto-Comp Table 4, Random Chance row: (swap, confusion) for N = 2, 3
    "color": {"2": (50.0, 6.3), "3": (16.7, 0.1)},
    "position": {"2": (50.0, 25.0), "3": (16.7, 0.9)},
}


def test_chance_json_matches_table4_exactly():
    result = CliRunner().invoke(main, ["chance", "--json"])
    assert result.exit_code == 0, result.output
    table = json.loads(result.output)
    for task, by_n in TABLE4.items():
        for n, (swap, conf) in by_n.items():
            assert table[task][n]["swap"]["chance"] == swap
            assert table[task][n]["confusion"]["chance"] == conf
    assert table["color"]["2"]["confusion"]["exact"] == 100 / 16
    assert table["color"]["3"]["confusion"]["negatives"] == 728
    assert table["position"]["3"]["confusion"]["negatives"] == 107
    # N = 1 sanity benchmark: 20 colors, 235 objects
    assert table["color"]["1"]["vary_value"]["exact"] == 100 / 20
    assert table["color"]["1"]["vary_object"]["exact"] == 100 / 235
    # leaving out negatives that mean the same as the positive
    assert table["color"]["2"]["confusion"]["chance_distinct_meaning"] == 6.7  # 1/15
    # a third of position N=3 concepts chain a relation with its inverse: 1/5 instead of 1/6
    assert abs(table["position"]["3"]["swap"]["chance_distinct_meaning"]
               - percent(2 / 3 / 6 + 1 / 3 / 5)) < 1e-9


def test_chance_text_table_layout():
    result = CliRunner().invoke(main, ["chance", "--task", "color"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert "N=2: Min Swap  Conf.  Ctx Swap  Conf." in lines[0]
    assert lines[1].split() == ["Random", "Chance", "|", "50.0", "6.3", "50.0", "6.3", "|",
                                "16.7", "0.1", "16.7", "0.1"]


def test_percent_rounds_half_up_and_patterns():
    assert percent(1 / 16) == 6.3 and percent(1 / 6) == 16.7 and percent(1 / 108) == 0.9
    assert list(value_patterns(3)) == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 1, 2]]


def test_chance_is_printed_the_same_by_eval_and_report():
    from autocomp.eval.cells import _f
    from autocomp.report.table_format import r1

    assert _f(6.25) == r1(6.25) == "6.3" and _f(None) == "n/a"
