"""The captions writer's sampler (issue 51): the next token drawn on the logits' device
from the top k, equal to a full sort of the row wherever the nucleus fits in them, the
rest sorted whole and counted, and one caption's draws independent of its batch."""

import pytest

torch = pytest.importorskip("torch")

from autocomp.captions.llm import RowSampler  # noqa: E402

VOCAB = 4096


def _logits(steps: int, rows: int, scale: float, seed: int = 0) -> list:
    """Peaked rows (a few likely tokens, as a language model's), and some flat ones; bf16
    logits, so many tokens tie exactly."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        x = torch.randn(rows, VOCAB, generator=gen) * scale
        x[::3] /= 8 * scale  # every third row nearly flat: its nucleus is wide
        out.append(x.to(torch.bfloat16))
    return out


def _draws(sampler: RowSampler, logits: list) -> list[list[int]]:
    picks = []
    for x in logits:
        out = sampler(None, x)
        assert (out == 0).sum(-1).tolist() == [1] * x.shape[0]  # one token left per row
        picks.append(out.argmax(-1).tolist())
    return picks


def test_top_k_draws_equal_the_full_sort_and_wide_rows_are_counted():
    seeds = [11, 12, 13, 14, 15, 16]
    logits = _logits(40, len(seeds), scale=4.0)
    fast = RowSampler(seeds, 0.7, 0.9, top_k=64)
    reference = RowSampler(seeds, 0.7, 0.9, top_k=None)
    assert _draws(fast, logits) == _draws(reference, logits)
    assert fast.draws == 40 * 6 and 0 < fast.wide < fast.draws  # the flat rows: sorted whole
    assert reference.wide == 0
    assert len({tuple(p) for p in _draws(RowSampler(seeds, 0.7, 0.9), logits)}) > 1


def test_a_rows_draws_do_not_depend_on_its_batch():
    logits = _logits(30, 4, scale=3.0, seed=1)
    together = _draws(RowSampler([5, 6, 7, 8], 0.7, 0.9, top_k=32), logits)
    for row, seed in enumerate([5, 6, 7, 8]):
        alone = _draws(RowSampler([seed], 0.7, 0.9, top_k=32), [x[row:row + 1] for x in logits])
        assert [p[0] for p in alone] == [p[row] for p in together]
    again = _draws(RowSampler([5, 6, 7, 8], 0.7, 0.9, top_k=32), logits)
    assert again == together


def test_nucleus_and_temperature_are_the_papers():
    # top_p 0.9 keeps the smallest prefix whose mass reaches 0.9: with these probabilities
    # tokens 0-2 (0.5 + 0.3 before 0.15: 0.8 < 0.9), never token 3 (0.95 before it)
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05] + [0.0] * 4])
    logits = torch.log(probs.clamp_min(1e-30))
    seen = set()
    for seed in range(200):
        seen.update(_draws(RowSampler([seed], 1.0, 0.9, top_k=4), [logits])[0])
    assert seen == {0, 1, 2}
    sharp = {tuple(_draws(RowSampler([s], 1e-4, 0.9), [logits])[0]) for s in range(20)}
    assert sharp == {(0,)}  # temperature -> 0: the most likely token
